// Observability against a running daemon: every metric the Grafana dashboard and the
// alert rules use is one loopwarden exports, and a real Prometheus scrapes it.
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <regex>
#include <set>

#include "tests/e2e/e2e_fixture.h"

namespace loopwarden::testing {
namespace {

using namespace std::chrono_literals;

const std::string kPolicies =
    "  - {name: idle-dedicated-trainers, resource: baseten.run, where: {mode: dedicated, lifecycle: running,"
    " idle_for: \">= 20m\"}, action: deactivate, grace: 0s, notify: [slack]}\n"
    "  - {name: daily-budget, budget: {provider: bt, period: day, limit_usd: 1}, action: notify, notify: [slack]}\n";

std::string Config() {
  return "state_path: ${STATE}\npoll_interval: 1m\ndry_run: false\nlisten: 127.0.0.1:0\n"
         "providers:\n"
         "  - {name: bt, type: baseten, base_url: \"${SIM_URL}\", api_key_env: BASETEN_API_KEY, activity_window: 4h}\n"
         "  - {name: fw, type: fireworks, account: acme-ml, base_url: \"${SIM_URL}\", api_key_env: FIREWORKS_API_KEY}\n"
         "pricing: {gpu_hour_usd: {H100: 6.50, H200: 7.00}}\n"
         "notifiers:\n  - {name: slack, type: slack, webhook_url_env: SLACK_WEBHOOK_URL}\n"
         "policies:\n" + kPolicies;
}

// Metric families in a /metrics body, from its # TYPE lines.
std::map<std::string, std::string> Families(const std::string& metrics) {
  std::map<std::string, std::string> out;
  static const std::regex re("^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) ([a-z]+)$");
  std::istringstream in(metrics);
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_match(line, m, re)) out[m[1]] = m[2];
  }
  return out;
}

std::set<std::string> MetricNamesIn(const std::string& text) {
  std::set<std::string> out;
  static const std::regex re("loopwarden_[a-z_]+");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator(); ++it) {
    out.insert(it->str());
  }
  return out;
}

int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

TEST_CASE("every metric the dashboard and the alert rules use is exported by a running daemon") {
  E2E e(30);
  e.StartReceiver("slack", "slack");
  e.WriteConfig(Config());
  e.StartDaemon();
  REQUIRE(WaitUntil([&] { return !e.Calls("/v1/loops/runs/rforgot/deactivate").empty(); }, 30s));
  REQUIRE(WaitUntil([&] { return !e.Received("slack").empty(); }, 20s));
  REQUIRE(WaitUntil([&] { return E2E::Sample(e.Get("/metrics"), "loopwarden_cycles_total") >= 3; }, 20s));
  const std::string metrics = e.Get("/metrics");
  const auto families = Families(metrics);
  REQUIRE(families.size() >= 25);

  std::set<std::string> used = MetricNamesIn(ReadFile("deploy/grafana/dashboards/loopwarden.json"));
  const auto in_rules = MetricNamesIn(ReadFile("deploy/prometheus/loopwarden.rules.yml"));
  used.insert(in_rules.begin(), in_rules.end());
  REQUIRE(used.size() >= 15);
  for (std::string name : used) {
    for (const char* suffix : {"_bucket", "_sum", "_count"}) {
      const std::string s(suffix);
      if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0 &&
          families.count(name.substr(0, name.size() - s.size())) &&
          families.at(name.substr(0, name.size() - s.size())) == "histogram") {
        name = name.substr(0, name.size() - s.size());
      }
    }
    CHECK_MESSAGE(families.count(name) == 1, name << " is used by deploy/ but not exported");
    // A family with at least one sample, so panels and alerts have data.
    CHECK_MESSAGE(metrics.find("\n" + name) != std::string::npos, name << " has no samples");
  }
}

TEST_CASE("a real Prometheus scrapes loopwarden and answers a query for its spend") {
  // Not a skip: a scrape test that passes without a scraper proves nothing.
  REQUIRE_MESSAGE(std::system("test -x /usr/bin/prometheus") == 0,
                  "/usr/bin/prometheus is not installed: scripts/install-deps.sh --test installs it");
  E2E e(30);
  e.StartReceiver("slack", "slack");
  e.WriteConfig(Config());
  e.StartDaemon();
  const int port = FreePort();
  std::ofstream(e.dir().File("prometheus.yml"))
      << "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
         "scrape_configs:\n  - job_name: loopwarden\n    static_configs:\n      - targets: ['"
      << e.AdminUrl().substr(7) << "']\n";
  auto prom = Process::Start({"/usr/bin/prometheus", "--config.file=" + e.dir().File("prometheus.yml"),
                              "--storage.tsdb.path=" + e.dir().File("tsdb"),
                              "--web.listen-address=127.0.0.1:" + std::to_string(port), "--log.level=warn"},
                             {}, e.dir().File("prometheus.log"));
  const std::string api = "http://127.0.0.1:" + std::to_string(port) + "/api/v1/query?query=";
  std::string body;
  const bool got = WaitUntil(
      [&] {
        auto r = Fetch("GET", api + "sum%20by%20(provider)%20(loopwarden_spend_usd_total)");
        if (!r.ok() || r->status != 200) return false;
        body = r->body;
        return body.find("\"provider\":\"bt\"") != std::string::npos;
      },
      60s, 250ms);
  INFO(prom->Log());
  REQUIRE_MESSAGE(got, "Prometheus never returned a loopwarden spend series: " << body);
  auto up = Fetch("GET", api + "up%7Bjob%3D%22loopwarden%22%7D");
  REQUIRE(up.ok());
  CHECK(up->body.find("\"value\":[") != std::string::npos);
  CHECK(up->body.find(",\"1\"]") != std::string::npos);
}

}  // namespace
}  // namespace loopwarden::testing
