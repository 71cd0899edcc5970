// The exposition: HELP and TYPE per family, histogram invariants, label escaping, and
// the promtool lint rules re-checked on our own names.
#include <doctest/doctest.h>

#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "core/secrets.h"
#include "core/strings.h"
#include "exporters/metrics.h"

using namespace loopwarden;
using namespace loopwarden::exporters;

namespace {

struct Family {
  std::string help, type;
  std::vector<std::string> samples;
};

std::map<std::string, Family> Parse(const std::string& text) {
  std::map<std::string, Family> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("# HELP ", 0) == 0) {
      auto sp = line.find(' ', 7);
      out[line.substr(7, sp - 7)].help = line.substr(sp + 1);
    } else if (line.rfind("# TYPE ", 0) == 0) {
      auto sp = line.find(' ', 7);
      out[line.substr(7, sp - 7)].type = line.substr(sp + 1);
    } else if (!line.empty()) {
      std::string name = line.substr(0, line.find_first_of("{ "));
      for (const char* suffix : {"_bucket", "_sum", "_count"}) {
        const std::string s(suffix);
        if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0 &&
            out.count(name.substr(0, name.size() - s.size()))) {
          name = name.substr(0, name.size() - s.size());
        }
      }
      out[name].samples.push_back(line);
    }
  }
  return out;
}

Metrics& Populated() {
  static Metrics m;
  static bool done = false;
  if (!done) {
    done = true;
    m.SetBuildInfo("0.1.0", "abc123", "GNU-12.2.0");
    m.RecordCycle(0.42, true, 1.7e9);
    m.RecordPoll("baseten-prod", 0.3, true);
    m.SetProviderRequests("baseten-prod", {{"2xx", 10}, {"5xx", 2}}, {{"transient", 2}});
    m.SetResources({{{"baseten-prod", "baseten.run", "running"}, 3}});
    m.SetIdle({{{"baseten-prod", "baseten.run"}, 1}}, {{"baseten-prod", 16}});
    m.AddIdleGpuSeconds("baseten-prod", 960);
    m.SetSpendTotals({{{"baseten-prod", "gpu_time"}, Money::FromDollars(52)}}, {{"baseten-prod", Money::FromDollars(13)}});
    m.SetBudget("daily-budget", Money::FromDollars(500), Money::FromDollars(400));
    m.RecordDecision("idle", "mark");
    m.RecordAction("idle", "deactivate", exporters::ActionResult::kOk);
    m.ObserveActionLatency(0.3);
    m.ObserveActionLatency(2);
    m.SetMarks({{"idle", 2}}, 1.7e9);
    m.RecordNotification("ml-slack", true);
    m.RecordConfigReload(true, 1.7e9);
  }
  return m;
}

}  // namespace

TEST_CASE("every family has HELP and TYPE, histograms are well formed, the body ends in a newline") {
  const std::string text = Populated().RenderText();
  REQUIRE_FALSE(text.empty());
  CHECK(text.back() == '\n');
  auto families = Parse(text);
  CHECK(families.size() >= 25);
  for (const auto& [name, f] : families) {
    CAPTURE(name);
    CHECK_FALSE(f.help.empty());
    CHECK_FALSE(f.type.empty());
    CHECK(name.rfind("loopwarden_", 0) == 0);
  }
  const auto& h = families.at("loopwarden_action_latency_seconds");
  CHECK(h.type == "histogram");
  std::string inf, count;
  for (const std::string& s : h.samples) {
    if (s.find("le=\"+Inf\"") != std::string::npos) inf = s.substr(s.rfind(' ') + 1);
    if (s.rfind("loopwarden_action_latency_seconds_count", 0) == 0) count = s.substr(s.rfind(' ') + 1);
  }
  CHECK(inf == "2");
  CHECK(inf == count);
  CHECK(text.find("loopwarden_build_info{compiler=\"GNU-12.2.0\",revision=\"abc123\",version=\"0.1.0\"} 1") !=
        std::string::npos);
  CHECK(text.find("loopwarden_spend_usd_total{meter=\"gpu_time\",provider=\"baseten-prod\"} 52") != std::string::npos);
  CHECK(text.find("loopwarden_budget_utilization_ratio{budget=\"daily-budget\"} 0.8") != std::string::npos);
}

TEST_CASE("the promtool lint rules hold for every name: units, _total, no type names, snake_case") {
  auto families = Parse(Populated().RenderText());
  const std::regex snake("^[a-z_][a-z0-9_]*$");
  const std::regex abbreviated("_(s|ms|us|ns|sec|b|kb|mb|gb|tb|pb|m|h|d)(_|$)");
  const std::regex nonbase("_(milliseconds|microseconds|minutes|hours|days|weeks|bits|kilobytes)(_|$)");
  for (const auto& [name, f] : families) {
    CAPTURE(name);
    CHECK(std::regex_match(name, snake));
    CHECK_FALSE(std::regex_search(name, abbreviated));
    CHECK_FALSE(std::regex_search(name, nonbase));
    const bool total = name.size() > 6 && name.compare(name.size() - 6, 6, "_total") == 0;
    CHECK(total == (f.type == "counter"));
    for (const char* t : {"_counter", "_gauge", "_summary", "_histogram"}) CHECK(name.find(t) == std::string::npos);
    CHECK(name.find(':') == std::string::npos);
  }
}

TEST_CASE("label values are escaped and stay bounded, a series that disappears reads 0") {
  Metrics m;
  m.RecordDecision("quote\"back\\slash\nnewline", "skip");
  const std::string text = m.RenderText();
  CHECK(text.find(R"(policy="quote\"back\\slash\nnewline")") != std::string::npos);
  m.SetResources({{{"p", "baseten.run", "running"}, 2}});
  m.SetResources({{{"p", "baseten.run", "stopped"}, 2}});
  const std::string after = m.RenderText();
  CHECK(after.find(R"(loopwarden_resources{kind="baseten.run",lifecycle="running",provider="p"} 0)") != std::string::npos);
  CHECK(after.find(R"(loopwarden_resources{kind="baseten.run",lifecycle="stopped",provider="p"} 2)") != std::string::npos);
  // Counters from cumulative totals only move forward.
  m.SetProviderRequests("p", {{"2xx", 5}}, {});
  m.SetProviderRequests("p", {{"2xx", 3}}, {});
  m.SetProviderRequests("p", {{"2xx", 9}}, {});
  CHECK(m.RenderText().find(R"(loopwarden_provider_requests_total{class="2xx",provider="p"} 11)") != std::string::npos);
}

TEST_CASE("hardening: no secret, invalid UTF-8 or NUL reaches a label value in the exposition") {
  const std::string secret = "bt-MARKER-label-3f9a";
  RegisterSecret(secret);
  Metrics m;
  m.RecordDecision("idle-" + secret, "mark");  // a policy named with an expanded ${VAR}
  m.RecordDecision(std::string("nul\0byte", 8), "mark");
  m.RecordDecision("bad\xff\xfe utf8 caf\xc3\xa9", "mark");
  const std::string text = m.RenderText();
  CHECK(text.find(secret) == std::string::npos);
  CHECK(text.find("[REDACTED]") != std::string::npos);
  CHECK(text.find('\0') == std::string::npos);
  CHECK(text.find("\xff") == std::string::npos);
  CHECK(text.find("caf\xc3\xa9") != std::string::npos);  // valid UTF-8 stays
  CHECK(SafeText(std::string("a\0b\x01\n\tc\xc3", 8)) == "a\xEF\xBF\xBD" "b\xEF\xBF\xBD\n\tc\xEF\xBF\xBD");
}

TEST_CASE("loopwarden_actions_total: every result series exists at 0 from the start, and HELP names exactly those results") {
  Metrics m;
  m.DeclareActions({{"idle-trainers", "deactivate"}, {"stale-sessions", "promote_then_delete"},
                    {"stale-sessions", "promote_checkpoint"}});
  const std::string text = m.RenderText();
  for (ActionResult r : kAllActionResults) {
    const std::string series = "loopwarden_actions_total{action=\"deactivate\",policy=\"idle-trainers\",result=\"" +
                               std::string(ActionResultName(r)) + "\"} 0\n";
    CAPTURE(series);
    CHECK(text.find(series) != std::string::npos);
  }
  CHECK(text.find("loopwarden_actions_total{action=\"promote_checkpoint\",policy=\"stale-sessions\",result=\"unverified\"} 0\n") !=
        std::string::npos);
  // HELP lists each result once, in the enum's order, and nothing else.
  const size_t help = text.find("# HELP loopwarden_actions_total ");
  REQUIRE(help != std::string::npos);
  const std::string line = text.substr(help, text.find('\n', help) - help);
  const std::string list = line.substr(line.find('(') + 1, line.rfind(')') - line.find('(') - 1);
  std::vector<std::string> named;
  for (size_t at = 0; at <= list.size();) {
    const size_t comma = list.find(", ", at);
    named.push_back(list.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
    if (comma == std::string::npos) break;
    at = comma + 2;
  }
  REQUIRE(named.size() == std::size(kAllActionResults));
  for (size_t i = 0; i < named.size(); ++i) CHECK(named[i] == ActionResultName(kAllActionResults[i]));
  // Declaring again (a reload) keeps counts.
  m.RecordAction("idle-trainers", "deactivate", ActionResult::kOk);
  m.DeclareActions({{"idle-trainers", "deactivate"}});
  CHECK(m.RenderText().find("loopwarden_actions_total{action=\"deactivate\",policy=\"idle-trainers\",result=\"ok\"} 1\n") !=
        std::string::npos);
}

TEST_CASE("loopwarden_unpriced_resources: per provider, 0 included, so an alert sees the series before it fires") {
  Metrics m;
  m.SetUnpriced({{"fw-prod", 3}, {"bt-prod", 0}});
  const std::string text = m.RenderText();
  CHECK(text.find("# TYPE loopwarden_unpriced_resources gauge") != std::string::npos);
  CHECK(text.find("loopwarden_unpriced_resources{provider=\"fw-prod\"} 3") != std::string::npos);
  CHECK(text.find("loopwarden_unpriced_resources{provider=\"bt-prod\"} 0") != std::string::npos);
  m.SetUnpriced({{"bt-prod", 0}});  // fw-prod removed by a reload: its series reads 0, not a stale 3
  CHECK(m.RenderText().find("loopwarden_unpriced_resources{provider=\"fw-prod\"} 0") != std::string::npos);
}
