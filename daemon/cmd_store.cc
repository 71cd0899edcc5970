// `loopwarden status` and `loopwarden report`: read-only views of the database.
#include <algorithm>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>
#include <filesystem>
#include <ostream>

#include "config/config.h"
#include "core/strings.h"
#include "daemon/commands.h"
#include "store/postgres.h"
#include "store/store.h"

namespace loopwarden::cli {

namespace {

namespace bj = boost::json;

struct Opened {
  std::unique_ptr<store::Store> store;
  Time now;
  Duration poll_interval;
};

// The configuration names the database; secrets are not needed to read it.
std::optional<Opened> OpenForReading(const Args& args, std::ostream& err, int& code) {
  auto cfg = config::LoadConfig(ConfigPath(args), {.resolve_secrets = false, .env = {}});
  if (!cfg.ok()) {
    err << cfg.status().message() << "\n";
    code = kExitConfig;
    return std::nullopt;
  }
  std::optional<ScaledClockOptions> t;
  if (!TimeFlags(args, t, err)) {
    code = kExitUsage;
    return std::nullopt;
  }
  std::error_code ec;
  // A PostgreSQL DSN has no file to look for: the store names a database without tables.
  if (!store::pg::IsDsn(cfg->state_path) && !std::filesystem::exists(cfg->state_path, ec)) {
    err << "loopwarden: no database at " << cfg->state_path << " yet: `loopwarden run` creates it\n";
    code = kExitFailure;
    return std::nullopt;
  }
  auto store = store::Store::Open({.path = cfg->state_path, .read_only = true, .create = false});
  if (!store.ok()) {
    err << "loopwarden: " << store.status().message() << "\n";
    code = kExitFailure;
    return std::nullopt;
  }
  std::unique_ptr<Clock> clock = t ? std::unique_ptr<Clock>(new ScaledClock(*t)) : MakeRealClock();
  return Opened{std::move(*store), clock->Now(), cfg->poll_interval};
}

std::string Ago(Duration d) { return FormatDuration(std::chrono::duration_cast<std::chrono::seconds>(d)); }

}  // namespace

int CmdStatus(const Args& args, std::ostream& out, std::ostream& err) {
  int code = kExitOk;
  auto o = OpenForReading(args, err, code);
  if (!o) return code;
  auto v = o->store->QueryStatus(o->now, std::chrono::minutes(15));
  if (!v.ok()) {
    err << "loopwarden: " << v.status().message() << "\n";
    return kExitFailure;
  }
  if (args.Has("--json")) {
    bj::array counts, idle, marks;
    for (const auto& c : v->counts) {
      counts.push_back(bj::object{{"provider", c.provider}, {"kind", c.kind}, {"lifecycle", c.lifecycle}, {"count", c.count}});
    }
    for (const auto& i : v->idle) {
      idle.push_back(bj::object{{"resource", i.resource}, {"name", i.name}, {"kind", i.kind},
                                {"idle_seconds", std::chrono::duration_cast<std::chrono::seconds>(i.idle_for).count()},
                                {"burn_usd_per_hour", FormatMoney(i.burn_per_hour)}});
    }
    for (const auto& m : v->marks) {
      marks.push_back(bj::object{{"policy", m.policy}, {"resource", m.resource}, {"marked_at", FormatTimeSeconds(m.marked_at)},
                                 {"act_after", FormatTimeSeconds(m.act_after)}, {"action", m.action}, {"reason", m.reason}});
    }
    bj::array unpriced;
    for (const std::string& k : v->unpriced) unpriced.push_back(bj::string(k));
    out << bj::serialize(bj::object{{"at", FormatTimeSeconds(o->now)}, {"database", o->store->path()},
                                    {"resources", std::move(counts)}, {"idle", std::move(idle)}, {"marks", std::move(marks)},
                                    {"unpriced", std::move(unpriced)}})
        << "\n";
    return kExitOk;
  }
  out << "loopwarden status at " << FormatTimeSeconds(o->now) << " (" << o->store->path() << ")\n\n";
  std::vector<std::vector<std::string>> rows;
  for (const auto& c : v->counts) rows.push_back({c.provider, c.kind, c.lifecycle, std::to_string(c.count)});
  out << "Resources\n" << (rows.empty() ? "  none yet\n" : FormatTable({"PROVIDER", "KIND", "LIFECYCLE", "COUNT"}, rows));
  rows.clear();
  for (const auto& i : v->idle) rows.push_back({i.resource, i.name, i.kind, Ago(i.idle_for), FormatUsd(i.burn_per_hour)});
  out << "\nIdle for 15m or more\n"
      << (rows.empty() ? "  none\n" : FormatTable({"RESOURCE", "NAME", "KIND", "IDLE FOR", "BURN/H"}, rows));
  rows.clear();
  for (const auto& m : v->marks) {
    rows.push_back({m.resource, m.policy, m.action, FormatTimeSeconds(m.act_after), m.reason});
  }
  out << "\nMarked\n" << (rows.empty() ? "  none\n" : FormatTable({"RESOURCE", "POLICY", "ACTION", "ACTS AT", "REASON"}, rows));
  if (!v->unpriced.empty()) {
    // Loud on purpose: spend that counts as 0 makes every budget and report wrong.
    out << "\nUNPRICED: " << v->unpriced.size()
        << " resource(s) bill at a price loopwarden does not know; their spend counts as USD 0.\n"
        << "Set pricing.gpu_hour_usd or pricing.tokens_per_million_usd (the daemon's log names each):\n";
    const size_t shown = std::min<size_t>(v->unpriced.size(), 10);
    for (size_t i = 0; i < shown; ++i) out << "  " << v->unpriced[i] << "\n";
    if (shown < v->unpriced.size()) out << "  … and " << v->unpriced.size() - shown << " more\n";
  }
  return kExitOk;
}

int CmdReport(const Args& args, std::ostream& out, std::ostream& err) {
  auto by = store::ParseGroupBy(args.Get("--by", "provider"));
  if (!by) {
    err << "loopwarden: --by must be one of provider, account, kind, model, owner, team, label:KEY\n";
    return kExitUsage;
  }
  auto since = ParseDuration(args.Get("--since", "7d"));
  if (!since.ok() || *since <= Duration::zero()) {
    err << "loopwarden: --since: " << (since.ok() ? "must be positive" : since.status().message()) << "\n";
    return kExitUsage;
  }
  int code = kExitOk;
  auto o = OpenForReading(args, err, code);
  if (!o) return code;
  auto rep = o->store->QueryReport(o->now - *since, o->now, *by);
  if (!rep.ok()) {
    err << "loopwarden: " << rep.status().message() << "\n";
    return kExitFailure;
  }
  const std::string group = args.Get("--by", "provider");
  if (args.Has("--json")) {
    bj::array rows;
    auto row = [](const store::ReportRow& r) {
      return bj::object{{"group", r.group}, {"spend_usd", FormatMoney(r.spend)}, {"idle_spend_usd", FormatMoney(r.idle_spend)},
                        {"actions", r.actions}, {"estimated_savings_usd", FormatMoney(r.savings)}};
    };
    for (const auto& r : rep->rows) rows.push_back(row(r));
    bj::object doc{{"since", FormatTimeSeconds(rep->since)}, {"until", FormatTimeSeconds(rep->until)},
                   {"by", group}, {"rows", std::move(rows)}, {"total", row(rep->total)}};
    if (rep->open_counted_until) doc["open_counted_until"] = FormatTimeSeconds(*rep->open_counted_until);
    out << bj::serialize(doc) << "\n";
    return kExitOk;
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : rep->rows) {
    rows.push_back({r.group, FormatUsd(r.spend), FormatUsd(r.idle_spend), std::to_string(r.actions), FormatUsd(r.savings)});
  }
  rows.push_back({"TOTAL", FormatUsd(rep->total.spend), FormatUsd(rep->total.idle_spend), std::to_string(rep->total.actions),
                  FormatUsd(rep->total.savings)});
  std::string upper = group;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  out << "Spend from " << FormatTimeSeconds(rep->since) << " to " << FormatTimeSeconds(rep->until) << "\n";
  // Between two polls of a running daemon the bound is a poll interval old at most: not
  // worth a note.
  if (rep->open_counted_until && o->now - *rep->open_counted_until > 2 * o->poll_interval) {
    out << "Nothing has polled since " << FormatTimeSeconds(*rep->open_counted_until)
        << ": GPU time still running then is counted up to each account's last listing, not to now.\n";
  }
  out << FormatTable({upper, "SPEND", "IDLE SPEND", "ACTIONS", "EST. SAVINGS"}, rows);
  out << "\nEstimated savings: the hourly burn of what loopwarden stopped, until the end of the window or until the\n"
         "provider's own inactivity timeout would have stopped it.\n";
  return kExitOk;
}

}  // namespace loopwarden::cli
