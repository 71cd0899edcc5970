#include "policies/engine.h"

#include <re2/re2.h>

#include <algorithm>
#include <cmath>
#include <unordered_set>

#include "core/flat_hash.h"
#include "core/strings.h"

namespace loopwarden::policies {

bool Matches(const Pattern& p, std::string_view text) {
  return p.re && RE2::PartialMatch(re2::StringPiece(text.data(), text.size()), *p.re);
}

namespace {

Tri And(Tri a, Tri b) {
  if (a == Tri::kFalse || b == Tri::kFalse) return Tri::kFalse;
  if (a == Tri::kUnknown || b == Tri::kUnknown) return Tri::kUnknown;
  return Tri::kTrue;
}
Tri Or(Tri a, Tri b) {
  if (a == Tri::kTrue || b == Tri::kTrue) return Tri::kTrue;
  if (a == Tri::kUnknown || b == Tri::kUnknown) return Tri::kUnknown;
  return Tri::kFalse;
}
Tri Not(Tri a) {
  if (a == Tri::kUnknown) return a;
  return a == Tri::kTrue ? Tri::kFalse : Tri::kTrue;
}
Tri Of(bool b) { return b ? Tri::kTrue : Tri::kFalse; }

template <class T>
bool Compare(CmpOp op, const T& a, const T& b) {
  switch (op) {
    case CmpOp::kGe: return a >= b;
    case CmpOp::kGt: return a > b;
    case CmpOp::kLe: return a <= b;
    case CmpOp::kLt: return a < b;
    case CmpOp::kEq: return a == b;
    case CmpOp::kNe: return a != b;
  }
  return false;
}

std::string Op(CmpOp op) { return std::string(CmpOpText(op)); }

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

constexpr std::string_view kUntilObserved = "unknown until observed for";

Tri DurationLeaf(const std::optional<Duration>& v, const DurationCmp& c, const char* what,
                 std::vector<std::string>* why, bool at_least = false) {
  if (!v) {
    if (why) why->push_back(std::string(what) + " unknown");
    return Tri::kUnknown;
  }
  // Whole seconds, so "47m" reads as 47m, not 47m0.3s.
  const Duration shown = std::chrono::floor<std::chrono::seconds>(*v);
  const bool ok = Compare(c.op, *v, c.value);
  if (at_least) {
    // A lower bound: it can still grow past the threshold once observed for long enough.
    const bool decided = (c.op == CmpOp::kGe || c.op == CmpOp::kGt) ? ok
                         : (c.op == CmpOp::kLe || c.op == CmpOp::kLt) ? !ok
                                                                       : false;
    if (!decided) {
      const Duration left = std::max(std::chrono::seconds(1),
                                     std::chrono::ceil<std::chrono::seconds>(c.value - *v));
      if (why) {
        why->push_back(std::string(what) + " at least " + FormatDuration(shown) + " (no history before first sight); " +
                       std::string(kUntilObserved) + " " + FormatDuration(left) + " more");
      }
      return Tri::kUnknown;
    }
  }
  if (why) {
    why->push_back(std::string(what) + " " + FormatDuration(shown) + (ok ? " " + Op(c.op) + " " : " not " + Op(c.op) + " ") +
                   FormatDuration(c.value));
  }
  return Of(ok);
}

Tri MoneyLeaf(Money v, const MoneyCmp& c, const char* what, std::vector<std::string>* why) {
  const bool ok = Compare(c.op, v, c.value);
  if (why) why->push_back(std::string(what) + " " + FormatUsd(v) + (ok ? " " : " not ") + Op(c.op) + " " + FormatUsd(c.value));
  return Of(ok);
}

Tri IntLeaf(int64_t v, const IntCmp& c, const char* what, std::vector<std::string>* why) {
  const bool ok = Compare(c.op, v, c.value);
  if (why) {
    why->push_back(std::string(what) + " " + std::to_string(v) + (ok ? " " : " not ") + Op(c.op) + " " +
                   std::to_string(c.value));
  }
  return Of(ok);
}

bool LabelsMatch(const std::map<std::string, std::string>& want, const FlatMap<Interned, std::string>& have) {
  for (const auto& [k, v] : want) {
    auto it = have.find(k);
    if (it == have.end()) return false;
    if (v != "*" && it->second != v) return false;
  }
  return true;
}

bool ExemptionCovers(const Exemption& e, const Policy& p, const Resource& r, Time now) {
  if (e.until && now >= *e.until) return false;
  if (!e.policy.empty() && e.policy != p.name) return false;
  const ExemptionMatch& m = e.match;
  if (!m.id.empty() && m.id != r.id && m.id != r.Key()) return false;
  if (!m.provider.empty() && m.provider != r.provider) return false;
  if (m.kind && *m.kind != r.kind) return false;
  if (m.name && !Matches(*m.name, r.name)) return false;
  if (m.owner && !Matches(*m.owner, r.owner)) return false;
  if (!LabelsMatch(m.labels, r.labels)) return false;
  return true;
}

std::string Until(const std::optional<Time>& t) { return t ? " until " + FormatTime(*t) : ""; }

// The quantitative parts of a reason, which are what a person wants to read.
std::string Summarize(const std::vector<std::string>& why) {
  std::vector<std::string> parts;
  for (const std::string& w : why) {
    if (w.find(">=") != std::string::npos || w.find("<") != std::string::npos || w.find(">") != std::string::npos ||
        w.find("==") != std::string::npos || w.find("unknown") != std::string::npos ||
        w.find("not") != std::string::npos || w.rfind("flag", 0) == 0) {
      parts.push_back(w);
    }
  }
  if (parts.empty()) parts = why;
  if (parts.size() > 4) parts.resize(4);
  return Join(parts, "; ");
}

}  // namespace

std::string AccountKey(const Resource& r) { return r.provider + "/" + r.account; }

const GivenFacts& GivenFacts::Get() {
  static const GivenFacts given;
  return given;
}

std::string_view DecisionName(DecisionType t) {
  switch (t) {
    case DecisionType::kMark: return "mark";
    case DecisionType::kNotify: return "notify";
    case DecisionType::kAct: return "act";
    case DecisionType::kUnmark: return "unmark";
    case DecisionType::kSkip: return "skip";
  }
  return "skip";
}

std::string_view NoticeName(Notice n) {
  switch (n) {
    case Notice::kNone: return "";
    case Notice::kMarked: return "marked";
    case Notice::kBudgetWarning: return "budget_warning";
    case Notice::kBudgetExceeded: return "budget_exceeded";
    case Notice::kBlastRadius: return "blast_radius";
  }
  return "";
}

namespace {

// A view's facts, worked out when first read and then kept for the rest of one check:
// a `where` with several duration or money leaves (idle_for, age, spend_usd) and the
// check's own look at them would otherwise each work them out again.
class LazyFacts {
 public:
  explicit LazyFacts(const ResourceView& v) : v_(v) {}
  const Facts& Get() {
    if (!facts_) facts_ = v_.facts();
    return *facts_;
  }

 private:
  const ResourceView& v_;
  std::optional<Facts> facts_;
};

// The evaluation itself. With `why` null it only decides, building no explanation:
// most resources under most policies are compliant, and a reason built for each of them
// every cycle and dropped was hundreds of thousands of strings at 100k resources.
Tri FilterTri(const Filter& f, const ResourceView& v, LazyFacts& facts, std::vector<std::string>* why) {
  const Resource& r = *v.resource;
  switch (f.op) {
    case Filter::Op::kAll: return Tri::kTrue;
    case Filter::Op::kAnd: {
      Tri t = Tri::kTrue;
      for (const Filter& c : f.children) t = And(t, FilterTri(c, v, facts, why));
      return t;
    }
    case Filter::Op::kOr: {
      Tri t = Tri::kFalse;
      for (const Filter& c : f.children) t = Or(t, FilterTri(c, v, facts, why));
      return t;
    }
    case Filter::Op::kNot: {
      std::vector<std::string> inner;
      const Tri t = Not(FilterTri(f.children.at(0), v, facts, why ? &inner : nullptr));
      if (why) {
        for (const std::string& w : inner) why->push_back("not (" + w + ")");
      }
      return t;
    }
    case Filter::Op::kLeaf: break;
  }
  switch (f.field) {
    case Filter::Field::kLifecycle: {
      const bool listed = std::find(f.lifecycles.begin(), f.lifecycles.end(), r.lifecycle) != f.lifecycles.end();
      if (r.lifecycle == Lifecycle::kUnknown && !listed) {
        if (why) why->push_back("lifecycle unknown");
        return Tri::kUnknown;
      }
      if (why) why->push_back(std::string(LifecycleName(r.lifecycle)));
      return Of(listed);
    }
    case Filter::Field::kMode: {
      const std::string m(ModeName(r.mode));
      if (why) why->push_back(m.empty() ? "no mode" : m);
      return Of(Contains(f.strings, m));
    }
    case Filter::Field::kAvailability:
      if (why) why->push_back(r.availability.empty() ? "availability unset" : r.availability);
      return Of(Contains(f.strings, r.availability.empty() ? "dedicated" : r.availability));
    case Filter::Field::kIdleFor: {
      const Facts& x = facts.Get();
      return DurationLeaf(x.idle_for, f.duration, "idle", why, x.idle_at_least);
    }
    case Filter::Field::kNoTrafficFor: {
      const Facts& x = facts.Get();
      return DurationLeaf(x.no_traffic_for, f.duration, "no traffic for", why, x.no_traffic_at_least);
    }
    case Filter::Field::kAge: return DurationLeaf(facts.Get().age, f.duration, "age", why);
    case Filter::Field::kSpendUsd: return MoneyLeaf(facts.Get().spend, f.money, "spend", why);
    case Filter::Field::kBurnUsdPerHour: return MoneyLeaf(facts.Get().burn_per_hour, f.money, "burn/h", why);
    case Filter::Field::kGpus: return IntLeaf(r.billing.gpus(), f.integer, "gpus", why);
    case Filter::Field::kReplicas: return IntLeaf(r.billing.replicas, f.integer, "replicas", why);
    case Filter::Field::kBaseModel: return Of(Contains(f.strings, r.base_model));
    case Filter::Field::kName: return Of(f.pattern && Matches(*f.pattern, r.name));
    case Filter::Field::kOwner: return Of(f.pattern && Matches(*f.pattern, r.owner));
    case Filter::Field::kLabels: return Of(LabelsMatch(f.labels, r.labels));
    case Filter::Field::kFlags: {
      bool all = true;
      for (const std::string& flag : f.strings) {
        if (!r.HasFlag(flag)) all = false;
      }
      if (all && why) why->push_back("flags " + Join(f.strings, ", "));
      return Of(all);
    }
    case Filter::Field::kProvider: return Of(Contains(f.strings, r.provider));
    case Filter::Field::kUnpromotedCheckpoints:
      if (!r.checkpoints->known) {
        if (why) why->push_back("checkpoints unknown");
        return Tri::kUnknown;
      }
      return IntLeaf(r.checkpoints->unpromoted, f.integer, "unpromoted checkpoints", why);
  }
  return Tri::kUnknown;
}

Tri WhenTri(const When& w, const AccountAggregates* a, std::vector<std::string>* why) {
  if (w.empty()) return Tri::kTrue;
  if (a == nullptr) {
    if (why) why->push_back("account aggregates unknown");
    return Tri::kUnknown;
  }
  Tri t = Tri::kTrue;
  if (w.account_active_sessions) t = And(t, IntLeaf(a->active_sessions, *w.account_active_sessions, "active sessions", why));
  if (w.account_slot_headroom) {
    t = And(t, IntLeaf(a->slot_cap - a->active_sessions, *w.account_slot_headroom, "slot headroom", why));
  }
  if (w.account_spend_day_usd) t = And(t, MoneyLeaf(a->spend_day, *w.account_spend_day_usd, "account spend today", why));
  if (w.account_spend_week_usd) t = And(t, MoneyLeaf(a->spend_week, *w.account_spend_week_usd, "account spend this week", why));
  if (w.account_spend_month_usd) {
    t = And(t, MoneyLeaf(a->spend_month, *w.account_spend_month_usd, "account spend this month", why));
  }
  return t;
}

}  // namespace

Tri EvalFilter(const Filter& f, const ResourceView& v, std::vector<std::string>& why) {
  LazyFacts facts(v);
  return FilterTri(f, v, facts, &why);
}
Tri EvalWhen(const When& w, const AccountAggregates* a, std::vector<std::string>& why) { return WhenTri(w, a, &why); }

std::string Engine::CheckpointRefusal(const Policy& p, const Resource& r) {
  if (!IsIrreversible(p.action) || p.checkpoints == CheckpointMode::kIgnore) return "";
  const Checkpoints& c = *r.checkpoints;
  if (!c.known) return "checkpoints could not be listed; refusing to delete";
  if (p.checkpoints == CheckpointMode::kPromoteLatest) return "";  // promoted first, verified, then deleted
  if (c.reachable && c.unpromoted > 0 && !c.newest_promotable_promoted) {
    return "newest promotable checkpoint " + (c.newest_promotable_name.empty() ? c.newest_promotable : c.newest_promotable_name) +
           " is unpromoted (checkpoints: refuse)";
  }
  return "";
}

const Policy* Engine::FindPolicy(const std::string& name) const {
  for (const Policy& p : set_.policies) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::optional<std::string> Engine::Exempt(const Policy& p, const Resource& r, std::span<const Snooze> snoozes,
                                          Time now) const {
  for (const Exemption& e : set_.exemptions) {
    if (ExemptionCovers(e, p, r, now)) return "exempt: " + e.reason + Until(e.until);
  }
  for (const Exemption& e : p.exemptions) {
    if (ExemptionCovers(e, p, r, now)) return "exempt: " + e.reason + Until(e.until);
  }
  for (const Snooze& s : snoozes) {
    if (s.until && now >= *s.until) continue;
    if (!s.policy.empty() && s.policy != p.name) continue;
    if (s.resource != r.Key() && s.resource != r.id) continue;
    return "snoozed" + (s.by.empty() ? "" : " by " + s.by) + ": " + s.reason + Until(s.until);
  }
  return std::nullopt;
}

namespace {

Verdict CheckWith(const Policy& p, const ResourceView& v, const AccountAggregates* account, LazyFacts& facts) {
  Verdict out;
  const Resource& r = *v.resource;
  if (!p.resource || *p.resource != r.kind) {
    out.match = Tri::kFalse;
    out.reason = "not a " + std::string(p.resource ? KindName(*p.resource) : "resource of this policy");
    return out;
  }
  std::vector<std::string> why;
  Tri t = FilterTri(p.where, v, facts, &why);
  t = And(t, WhenTri(p.when, account, &why));
  out.match = t;
  if (t == Tri::kUnknown) {
    if (const Facts& f = facts.Get(); f.idle_at_least || f.no_traffic_at_least) {
      for (const std::string& w : why) out.awaiting_history = out.awaiting_history || w.find(kUntilObserved) != std::string::npos;
    }
  }
  out.reason = Summarize(why);
  return out;
}

}  // namespace

Verdict Engine::Check(const Policy& p, const ResourceView& v, const AccountAggregates* account, Time) const {
  LazyFacts facts(v);
  return CheckWith(p, v, account, facts);
}

Verdict Engine::CheckMatchOnly(const Policy& p, const ResourceView& v, const AccountAggregates* account) const {
  LazyFacts facts(v);
  if (p.resource && *p.resource == v.resource->kind &&
      And(FilterTri(p.where, v, facts, nullptr), WhenTri(p.when, account, nullptr)) == Tri::kFalse) {
    return Verdict{.match = Tri::kFalse};
  }
  return CheckWith(p, v, account, facts);
}

EvalOutput Engine::Evaluate(const EvalInput& in) const {
  EvalOutput out;
  const Time now = in.now;
  auto index_of = [&](const ResourceView& v) { return static_cast<size_t>(&v - in.resources.data()); };
  // A resource's key is built only where a decision, a mark or a recent act needs it:
  // held for every resource for the whole evaluation, the keys were 5 MB at 100k.
  auto key_of = [](const ResourceView& v) { return v.resource->Key(); };
  // Resources looked up by key: those a mark or a recent act names. Only they are
  // indexed (a handful), not every listed resource (100k+ nodes built and freed each
  // cycle). A null view: named, but not listed this cycle. Flat (one array, no node
  // per entry): every listed resource's key is looked up in it, and at 300k resources
  // the node table's lookups were 1.5 % of a steady cycle's samples outside libc.
  struct Named {
    const ResourceView* view = nullptr;
    bool marked = false;  // some policy's mark names it
    bool acted = false;   // some policy acted on it within the cooldown
  };
  HashMap<std::string_view, Named> named;
  for (const auto& [k, m] : in.marks) named[k.second].marked = true;
  for (const auto& [k, at] : in.recent_acts) named[k.second].acted = true;
  // Whether a mark (or recent act) names each resource, decided once per resource:
  // asked for every policy, hashing the key each time was a fifth of the evaluation's
  // instructions at 100k (373 M -> 291 M over three cycles). Each key is written into
  // one reused buffer, and kept by nobody.
  std::vector<bool> has_mark(in.resources.size(), false);
  std::vector<bool> has_act(in.resources.size(), false);
  if (!named.empty()) {
    std::string key;
    for (const ResourceView& v : in.resources) {
      ResourceKeyInto(key, v.resource->provider.view(), v.resource->kind, v.resource->id);
      if (auto it = named.find(key); it != named.end()) {
        it->second.view = &v;
        has_mark[index_of(v)] = it->second.marked;
        has_act[index_of(v)] = it->second.acted;
      }
    }
  }
  auto is_marked = [&](const ResourceView& v) -> bool { return has_mark[index_of(v)]; };
  auto listed = [&](std::string_view key) -> const ResourceView* {
    auto it = named.find(key);
    return it == named.end() ? nullptr : it->second.view;
  };
  // An act's resource, for ordering the acts by how long each has been idle.
  std::vector<std::pair<size_t, const ResourceView*>> act_views;
  // The account counts as this cycle's decisions leave them: a slot counts as free once
  // an act (or a recent one, still converging) frees it.
  std::map<std::string, AccountAggregates> working = in.accounts;
  std::unordered_set<const ResourceView*> freeing;
  auto free_slot = [&](const ResourceView& v) {
    if (!HoldsSlot(*v.resource) || !freeing.insert(&v).second) return;
    auto it = working.find(AccountKey(*v.resource));
    if (it != working.end() && it->second.active_sessions > 0) --it->second.active_sessions;
  };
  // An action still converging has freed its slot, whatever its resource's rank below.
  for (const auto& [k, at] : in.recent_acts) {
    if (const ResourceView* v = listed(k.second)) free_slot(*v);
  }
  auto account_of = [&](const Policy& p, const Resource& r) -> const AccountAggregates* {
    if (p.when.empty()) return nullptr;  // only `when` reads the aggregates
    auto it = working.find(AccountKey(r));
    return it == working.end() ? nullptr : &it->second;
  };

  auto decide = [&](const Policy& p, std::string_view key, DecisionType t, std::string reason) {
    Decision d;
    d.policy = p.name;
    d.resource = std::string(key);
    d.action = p.action;
    d.dry_run = in.global_dry_run || p.dry_run.value_or(false);
    d.checkpoints = p.checkpoints;
    d.notify = p.notify;
    d.type = t;
    d.reason = std::move(reason);
    out.decisions.push_back(std::move(d));
    return &out.decisions.back();
  };

  // One resource under one policy: the mark, grace, act lifecycle. Returns where it
  // leaves the resource.
  enum class Fate { kNone, kPending, kActing, kCooling };
  auto lifecycle = [&](const Policy& p, const ResourceView& v, Verdict verdict) -> Fate {
    const Resource& r = *v.resource;
    std::string key;  // built on first need: most resources take no decision
    auto key_text = [&]() -> const std::string& {
      if (key.empty()) key = key_of(v);
      return key;
    };
    auto emit = [&](DecisionType t, std::string reason) { return decide(p, key_text(), t, std::move(reason)); };
    const MarkView* mark = nullptr;
    if (is_marked(v)) {
      auto mark_it = in.marks.find({p.name, key_text()});
      if (mark_it != in.marks.end()) mark = &mark_it->second;
    }
    if (auto exempt = Exempt(p, r, in.snoozes, now)) {
      if (mark) {
        emit(DecisionType::kUnmark, *exempt);
      } else if (verdict.match == Tri::kTrue) {
        emit(DecisionType::kSkip, *exempt);
      }
      return Fate::kNone;
    }
    if (verdict.match == Tri::kFalse) {
      if (mark) emit(DecisionType::kUnmark, "compliant again: " + verdict.reason);
      return Fate::kNone;
    }
    if (verdict.match == Tri::kUnknown) {
      if (mark) {
        emit(DecisionType::kSkip, "facts unknown (" + verdict.reason + "); keeping the mark, not acting");
      } else if (verdict.awaiting_history) {
        emit(DecisionType::kSkip, verdict.reason);
      }
      return Fate::kNone;
    }
    // Matches.
    if (r.transitional || r.lifecycle == Lifecycle::kUnknown || r.lifecycle == Lifecycle::kStarting) {
      if (mark) emit(DecisionType::kSkip, "transitional state " + r.native_status + "; not acting");
      return Fate::kNone;
    }
    // Acted on within the cooldown: the provider is still converging (a deployment
    // scaled to zero shows replicas for a while), so it is neither marked nor acted on
    // again.
    if (IsMutating(p.action) && has_act[index_of(v)]) {
      if (auto it = in.recent_acts.find({p.name, key_text()}); it != in.recent_acts.end()) {
        emit(DecisionType::kSkip, "acted at " + FormatTimeSeconds(it->second) + "; waiting for the provider to show the effect");
        return Fate::kCooling;
      }
    }
    if (!mark) {
      const Time act_after = now + p.grace;
      Decision* m = emit(DecisionType::kMark, verdict.reason + "; acts at " + FormatClockTime(act_after));
      m->act_after = act_after;
      if (!p.notify.empty()) {
        Decision* n = emit(DecisionType::kNotify, verdict.reason + "; " + std::string(ActionName(p.action)) +
                                                      (p.action == ActionType::kNotify ? "" : " at " + FormatClockTime(act_after)));
        n->act_after = act_after;
        n->notice = Notice::kMarked;
      }
      if (p.grace > Duration::zero()) return Fate::kPending;
    } else if (now < mark->act_after) {
      Decision* s = emit(DecisionType::kSkip, "marked; " + verdict.reason + "; acts at " + FormatClockTime(mark->act_after));
      s->act_after = mark->act_after;
      return Fate::kPending;
    }
    if (p.action == ActionType::kNotify) {
      if (mark) emit(DecisionType::kSkip, "notified; " + verdict.reason);
      return Fate::kNone;
    }
    if (std::string refusal = CheckpointRefusal(p, r); !refusal.empty()) {
      emit(DecisionType::kSkip, refusal);
      return Fate::kNone;
    }
    const Time due = mark ? mark->act_after : now;
    Decision* a = emit(DecisionType::kAct, verdict.reason + "; grace ended " + FormatClockTime(due));
    act_views.emplace_back(out.decisions.size() - 1, &v);
    a->act_after = due;
    return Fate::kActing;
  };

  // A slot freed by an act (or one still converging) counts at once for the policies
  // evaluated after it. A mark not yet due does not: another policy's grace is not this
  // one's business.
  auto settle = [&](const Policy& p, const ResourceView& v, Fate f) {
    if (IsMutating(p.action) && (f == Fate::kActing || f == Fate::kCooling)) free_slot(v);
  };
  // A policy reading the account's sessions: candidates in deadline order (a running
  // mark before a new one), then the longest idle, each checked against the counts the
  // ones before it leave, marks included, so it marks and acts on only as many as bring
  // the account to its condition.
  auto ranked = [&](const Policy& p) {
    struct Candidate {
      const ResourceView* view;
      Time deadline;
      Duration idle;
    };
    std::vector<Candidate> candidates;
    for (const ResourceView& v : in.resources) {
      if (!p.resource || v.resource->kind != *p.resource) continue;
      Time deadline = now + p.grace;
      if (is_marked(v)) {
        if (auto m = in.marks.find({p.name, key_of(v)}); m != in.marks.end()) deadline = m->second.act_after;
      }
      candidates.push_back({&v, deadline, v.facts().idle_for.value_or(Duration::zero())});
    }
    std::stable_sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
      if (a.deadline != b.deadline) return a.deadline < b.deadline;
      return a.idle > b.idle;
    });
    for (const Candidate& c : candidates) {
      const ResourceView& v = *c.view;
      const AccountAggregates* account = account_of(p, *v.resource);
      // One still converging is judged on the counts the provider shows (its own slot
      // included), so it reads "waiting for the provider", not "not needed".
      if (has_act[index_of(v)] && in.recent_acts.count({p.name, key_of(v)})) {
        auto before = in.accounts.find(AccountKey(*v.resource));
        if (before != in.accounts.end()) account = &before->second;
      }
      Verdict verdict = Check(p, v, account, now);
      bool not_needed = false;
      if (verdict.match == Tri::kFalse && account != nullptr) {
        auto before = in.accounts.find(AccountKey(*v.resource));
        not_needed = before != in.accounts.end() && before->second.active_sessions != account->active_sessions &&
                     Check(p, v, &before->second, now).match == Tri::kTrue;
        if (not_needed) {
          verdict.reason = "not needed: the resources ranked before it leave the account " +
                           std::to_string(account->active_sessions) + " active sessions (" + verdict.reason + ")";
        }
      }
      const size_t decided = out.decisions.size();
      const Fate f = lifecycle(p, v, verdict);
      if (IsMutating(p.action) && f != Fate::kNone) free_slot(v);
      if (not_needed && out.decisions.size() == decided) decide(p, key_of(v), DecisionType::kSkip, verdict.reason);
    }
  };
  auto reads_sessions = [](const Policy& p) {
    return p.when.account_active_sessions.has_value() || p.when.account_slot_headroom.has_value();
  };
  for (int pass = 0; pass < 2; ++pass) {
  for (const Policy& p : set_.policies) {
    if (reads_sessions(p) != (pass == 1)) continue;
    if (reads_sessions(p)) {
      ranked(p);
      continue;
    }
    if (p.budget) {
      const Budget& b = *p.budget;
      auto it = in.budget_spend.find(p.name);
      if (it == in.budget_spend.end()) continue;
      const Money spent = it->second;
      const double ratio = b.limit.micros() > 0 ? static_cast<double>(spent.micros()) / static_cast<double>(b.limit.micros()) : 0;
      const std::string pct = std::to_string(static_cast<int>(std::floor(ratio * 100))) + "%";
      const std::string summary = "spend " + FormatUsd(spent) + " of " + FormatUsd(b.limit) + " (" + pct + ") this " +
                                  std::string(PeriodName(b.period)) + (b.provider.empty() ? "" : " on " + b.provider);
      const bool exceeded = spent >= b.limit;
      std::string summary_text = summary;
      bool forecast_crosses = false;
      if (auto f = in.budget_forecast.find(p.name); f != in.budget_forecast.end()) {
        const EvalInput::BudgetForecast& fc = f->second;
        summary_text += "; at this rate the " + std::string(PeriodName(b.period)) + " ends at " + FormatUsd(fc.period_end);
        if (!exceeded && fc.crosses_at) {
          forecast_crosses = true;
          summary_text += " and the budget is crossed at " + FormatLocalTime(*fc.crosses_at, b.tz.get());
        }
      }
      // A forecast crossing warns before the threshold does: there is still time to act.
      if (exceeded || ratio >= b.warn_at || forecast_crosses) {
        Decision n;
        n.type = DecisionType::kNotify;
        n.policy = p.name;
        n.reason = summary_text;
        n.notice = exceeded ? Notice::kBudgetExceeded : Notice::kBudgetWarning;
        n.notify = p.notify;
        n.dry_run = in.global_dry_run || p.dry_run.value_or(false);
        out.decisions.push_back(n);
      }
      if (p.action != ActionType::kDeactivate || !p.resource) continue;
      // Over budget: billable resources in scope become targets, in the stated order.
      // Each target's sort key is read once: a view works its facts out when asked, and
      // a comparator would ask for them on every comparison.
      struct Target {
        int64_t key;  // larger first
        const ResourceView* view;
      };
      std::vector<Target> keyed;
      for (const ResourceView& v : in.resources) {
        const Resource& r = *v.resource;
        if (r.kind != *p.resource) continue;
        if (!b.provider.empty() && r.provider != b.provider) continue;
        int64_t key = 0;
        switch (b.order) {
          case BudgetOrder::kIdleLongest: key = v.facts().idle_for.value_or(Duration::zero()).count(); break;
          case BudgetOrder::kBurnHighest: key = v.facts().burn_per_hour.micros(); break;
          case BudgetOrder::kNewest: key = r.created_at.value_or(Time{}).time_since_epoch().count(); break;
        }
        keyed.push_back({key, &v});
      }
      std::stable_sort(keyed.begin(), keyed.end(), [](const Target& x, const Target& y) { return x.key > y.key; });
      std::vector<const ResourceView*> targets;
      targets.reserve(keyed.size());
      for (const Target& t : keyed) targets.push_back(t.view);
      for (const ResourceView* v : targets) {
        Verdict verdict;
        std::vector<std::string> why;
        Tri t = EvalFilter(p.where, *v, why);
        const bool billing = v->resource->billing.billable;
        t = And(t, Of(exceeded && billing));
        verdict.match = t;
        verdict.reason = summary + (why.empty() ? "" : "; " + Summarize(why));
        settle(p, *v, lifecycle(p, *v, verdict));
      }
      continue;
    }
    for (const ResourceView& v : in.resources) {
      if (!p.resource || v.resource->kind != *p.resource) continue;
      // A reason is read only where a mark may be taken back (or the check matches).
      const AccountAggregates* account = account_of(p, *v.resource);
      settle(p, v, lifecycle(p, v, is_marked(v) ? Check(p, v, account, now) : CheckMatchOnly(p, v, account)));
    }
  }
  }

  // Marks whose policy or resource is gone.
  for (const auto& [k, m] : in.marks) {
    const auto& [policy, key] = k;
    const Policy* p = FindPolicy(policy);
    if (p && listed(key) != nullptr) continue;
    Decision d;
    d.type = DecisionType::kUnmark;
    d.policy = policy;
    d.resource = key;
    d.reason = p ? "resource no longer listed" : "policy removed from the configuration";
    d.dry_run = in.global_dry_run;
    out.decisions.push_back(d);
  }

  // Blast radius: too many acts in one cycle means something is wrong with the view of
  // the world (or the policies). Act on none; alert once.
  int64_t acts = 0;
  for (const Decision& d : out.decisions) acts += d.type == DecisionType::kAct;
  int64_t live = 0;
  for (const ResourceView& v : in.resources) {
    if (v.resource->lifecycle != Lifecycle::kDeleted) ++live;
  }
  const Limits& lim = set_.limits;
  const int64_t pct_cap = std::max<int64_t>(1, (live * lim.max_actions_percent + 99) / 100);
  std::string why;
  if (acts > lim.max_actions_per_cycle) {
    why = std::to_string(acts) + " actions exceed max_actions_per_cycle " + std::to_string(lim.max_actions_per_cycle);
  } else if (acts > pct_cap) {
    why = std::to_string(acts) + " actions exceed max_actions_percent " + std::to_string(lim.max_actions_percent) +
          "% of " + std::to_string(live) + " live resources (" + std::to_string(pct_cap) + ")";
  }
  if (!why.empty()) {
    for (Decision& d : out.decisions) {
      if (d.type == DecisionType::kAct) {
        d.type = DecisionType::kSkip;
        d.reason = "blast radius: " + why + "; nothing acted this cycle";
      }
    }
    Decision alert;
    alert.type = DecisionType::kNotify;
    alert.policy = "limits";
    alert.notice = Notice::kBlastRadius;
    alert.reason = "blast radius: " + why + "; nothing acted this cycle";
    alert.dry_run = in.global_dry_run;
    for (const Policy& p : set_.policies) {
      for (const std::string& n : p.notify) {
        if (!Contains(alert.notify, n)) alert.notify.push_back(n);
      }
    }
    out.decisions.push_back(alert);
    out.blast_radius_abort = true;
    out.abort_reason = why;
    acts = 0;
  }
  out.acts = acts;
  for (size_t i = 0; i < out.decisions.size(); ++i) {
    if (out.decisions[i].type == DecisionType::kAct) out.act_order.push_back(i);
  }
  // Each act's idle time, read once (see the budget targets above).
  std::vector<Duration> idle(out.decisions.size(), Duration::zero());
  for (const auto& [i, v] : act_views) {
    if (i < idle.size()) idle[i] = v->facts().idle_for.value_or(Duration::zero());
  }
  auto idle_for = [&](size_t i) { return idle[i]; };
  std::stable_sort(out.act_order.begin(), out.act_order.end(), [&](size_t a, size_t b) {
    const Time ta = out.decisions[a].act_after.value_or(Time{}), tb = out.decisions[b].act_after.value_or(Time{});
    if (ta != tb) return ta < tb;
    return idle_for(a) > idle_for(b);
  });
  return out;
}

}  // namespace loopwarden::policies
