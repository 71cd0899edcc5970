#include "daemon/plan_output.h"

#include <algorithm>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include "core/strings.h"

namespace loopwarden::daemon {

namespace {

namespace bj = boost::json;
using policies::Decision;
using policies::DecisionType;

std::string DecisionLabel(const Decision& d) {
  if (d.type == DecisionType::kAct) return d.dry_run ? "would " + std::string(ActionName(d.action)) : std::string(ActionName(d.action));
  if (d.type == DecisionType::kNotify) return "notify:" + std::string(policies::NoticeName(d.notice));
  return std::string(policies::DecisionName(d.type));
}

int Rank(const Decision& d) {
  switch (d.type) {
    case DecisionType::kAct: return 0;
    case DecisionType::kMark: return 1;
    case DecisionType::kNotify: return 2;
    case DecisionType::kUnmark: return 3;
    case DecisionType::kSkip: return 4;
  }
  return 5;
}

std::vector<const Decision*> Ordered(const std::vector<Decision>& decisions) {
  std::vector<const Decision*> v;
  for (const Decision& d : decisions) {
    // A mark's own notify line repeats the mark; the table shows the mark.
    if (d.type == DecisionType::kNotify && d.notice == policies::Notice::kMarked) continue;
    v.push_back(&d);
  }
  std::stable_sort(v.begin(), v.end(), [](const Decision* a, const Decision* b) {
    if (Rank(*a) != Rank(*b)) return Rank(*a) < Rank(*b);
    return a->resource < b->resource;
  });
  return v;
}

}  // namespace

bool WouldChange(const std::vector<Decision>& decisions) {
  for (const Decision& d : decisions) {
    if (d.type == DecisionType::kAct) return true;
    if (d.type == DecisionType::kMark && IsMutating(d.action)) return true;
  }
  return false;
}

std::string FormatPlanTable(const std::vector<Decision>& decisions, const store::Store& store) {
  std::vector<std::vector<std::string>> rows;
  for (const Decision* d : Ordered(decisions)) {
    std::string resource = d->resource.empty() ? "-" : d->resource;
    if (const store::ResourceState* st = d->resource.empty() ? nullptr : store.Find(d->resource)) {
      if (!st->resource.name.empty() && st->resource.name != st->resource.id) resource += " (" + st->resource.name + ")";
    }
    std::string when = "-";
    if (d->type == DecisionType::kAct) when = "now";
    else if (d->act_after) when = FormatTimeSeconds(*d->act_after);
    rows.push_back({resource, d->policy, DecisionLabel(*d), when, d->reason});
  }
  if (rows.empty()) return "No resource matches any policy: nothing to do.\n";
  return FormatTable({"RESOURCE", "POLICY", "DECISION", "WHEN", "REASON"}, rows);
}

std::string PlanJson(const std::vector<Decision>& decisions, const store::Store& store, Time at, bool dry_run) {
  bj::array list;
  int64_t acts = 0;
  for (const Decision* d : Ordered(decisions)) {
    acts += d->type == DecisionType::kAct;
    bj::object o;
    o["resource"] = d->resource;
    if (const store::ResourceState* st = d->resource.empty() ? nullptr : store.Find(d->resource)) {
      o["name"] = st->resource.name.view();
      o["kind"] = std::string(KindName(st->resource.kind));
      o["owner"] = st->resource.owner.view();
    }
    o["policy"] = d->policy;
    o["decision"] = std::string(policies::DecisionName(d->type));
    o["action"] = std::string(ActionName(d->action));
    if (d->notice != policies::Notice::kNone) o["notice"] = std::string(policies::NoticeName(d->notice));
    o["reason"] = d->reason;
    if (d->act_after) o["act_after"] = FormatTimeMillis(*d->act_after);
    o["dry_run"] = d->dry_run;
    list.push_back(std::move(o));
  }
  bj::object root;
  root["at"] = FormatTimeMillis(at);
  root["dry_run"] = dry_run;
  root["would_act"] = acts;
  root["would_change"] = WouldChange(decisions);
  root["decisions"] = std::move(list);
  return bj::serialize(root);
}

}  // namespace loopwarden::daemon
