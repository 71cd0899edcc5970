#include "reconcile/events.h"

#include <chrono>

namespace loopwarden::reconcile {

namespace {

std::string Us(Time t) { return std::to_string(ToUnixMicros(t)); }

void Describe(exporters::Event& e, const Resource& r) {
  e.resource = r.Key();
  e.resource_name = r.name;
  e.owner = r.owner;
  e.kind = std::string(KindName(r.kind));
  e.provider = r.provider;
}

}  // namespace

exporters::Event MarkedEvent(const store::Mark& m, const policies::Policy& p, const Resource* r, bool dry_run) {
  exporters::Event e;
  e.type = "marked";
  e.dedupe_key = "marked|" + m.policy + "|" + m.resource + "|" + Us(m.marked_at);
  e.policy = m.policy;
  if (r != nullptr) Describe(e, *r);
  e.resource = m.resource;
  e.action = std::string(ActionName(p.action));
  e.reason = m.reason;
  e.act_at = m.act_after;
  e.dry_run = dry_run;
  e.at = m.marked_at;
  return e;
}

exporters::Event ActEvent(std::string type, const policies::Policy& p, const Resource& r, const std::string& dedupe,
                          std::string reason, Time at) {
  exporters::Event e;
  e.dedupe_key = type + "|" + dedupe;
  e.type = std::move(type);
  e.policy = p.name;
  Describe(e, r);
  e.action = std::string(ActionName(p.action));
  e.reason = std::move(reason);
  e.at = at;
  return e;
}

exporters::Event NoticeEvent(const policies::Decision& d, const policies::Policy* p, Time now) {
  exporters::Event e;
  e.policy = d.policy;
  e.reason = d.reason;
  e.dry_run = d.dry_run;
  e.at = now;
  e.action = std::string(ActionName(d.action));
  switch (d.notice) {
    case policies::Notice::kBudgetWarning:
    case policies::Notice::kBudgetExceeded: {
      e.type = d.notice == policies::Notice::kBudgetWarning ? "budget_warning" : "budget_exceeded";
      const Time period = p && p->budget ? p->budget->Start(now) : now;
      e.dedupe_key = e.type + "|" + d.policy + "|" + Us(period);
      break;
    }
    case policies::Notice::kBlastRadius:
      e.type = "blast_radius";
      e.dedupe_key = "blast_radius|" + Us(std::chrono::floor<std::chrono::hours>(now));
      break;
    default: e.type = "notice"; e.dedupe_key = "notice|" + d.policy + "|" + d.resource + "|" + Us(now);
  }
  return e;
}

}  // namespace loopwarden::reconcile
