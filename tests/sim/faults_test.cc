// Each fault kind of the simulator, seeded, counted, over real loopback HTTP.
#include <doctest/doctest.h>

#include "tests/sim/sim_fixture.h"

using namespace loopwarden;
using namespace loopwarden::testing;
using namespace std::chrono_literals;

namespace {

const char* kScenario = R"(
baseten:
  - org: acme
    keys: [{key: bt-key, owner: ana@example.com}]
    runs:
      - {id: run0001, mode: dedicated, created: -1h, activity: [{from: -1h, to: forever}]}
fireworks:
  - account: acme-ml
    keys: [{key: fw-key}]
    sessions:
      - {id: ts-a, created: -1h}
      - {id: ts-b, created: -1h}
      - {id: ts-c, created: -1h}
)";

void SetFaults(SimFixture& f, const std::string& json) {
  REQUIRE(f.Bt("POST", "/_sim/faults", json).status == 200);
}

}  // namespace

TEST_CASE("faults: 5xx at a given rate, in each provider's error shape") {
  SimFixture f(kScenario);
  SetFaults(f, R"({"seed":3,"rules":[{"match":"/v1/*","error_rate":1.0}]})");
  auto bt = f.Bt("GET", "/v1/loops/runs?scope=org");
  CHECK((bt.status == 500 || bt.status == 502 || bt.status == 503));
  CHECK(bt.obj().contains("error"));
  auto fw = f.Fw("GET", "/v1/accounts/acme-ml/trainingSessions");
  CHECK(fw.status >= 500);
  CHECK(fw.obj().contains("code"));
  CHECK(fw.obj().contains("message"));
  SetFaults(f, R"({"seed":3,"rules":[{"match":"/v1/loops/*","error_rate":0.5}]})");
  int errors = 0;
  for (int i = 0; i < 100; ++i) errors += f.Bt("GET", "/v1/loops/runs").status >= 500;
  CHECK(errors > 30);
  CHECK(errors < 70);
}

TEST_CASE("faults: 429 with retry_after in the body and Retry-After in the header, bursts on the clock") {
  SimFixture f(kScenario);
  SetFaults(f, R"({"rules":[{"match":"/v1/loops/runs","rate_limit_rate":1.0,"retry_after_seconds":7}]})");
  auto r = f.Bt("GET", "/v1/loops/runs");
  CHECK(r.status == 429);
  CHECK(r.obj().at("retry_after").as_int64() == 7);
  CHECK(r.Header("Retry-After") == "7");
  SetFaults(f, R"({"rules":[{"match":"/v1/accounts/*","burst_every_seconds":600,"burst_length_seconds":30}]})");
  // The burst covers the first 30 s of each 10-minute slot of simulated time.
  const int64_t into = ToUnixSeconds(f.Now()) % 600;
  f.Advance(std::chrono::seconds(600 - into + 5));
  CHECK(f.Fw("GET", "/v1/accounts/acme-ml/trainingSessions").status == 429);
  f.Advance(60s);
  CHECK(f.Fw("GET", "/v1/accounts/acme-ml/trainingSessions").status == 200);
}

TEST_CASE("faults: connection reset, truncated body and malformed JSON") {
  SimFixture f(kScenario);
  SetFaults(f, R"({"rules":[{"match":"/v1/loops/runs*","reset_rate":1.0}]})");
  auto reset = f.Bt("GET", "/v1/loops/runs");
  CHECK(reset.transport.code() == StatusCode::kUnavailable);
  // A mutating call runs, then loses its answer: the journal has it, the client does not.
  auto lost = f.Bt("POST", "/v1/loops/runs/run0001/deactivate");
  CHECK_FALSE(lost.transport.ok());
  SetFaults(f, "{}");
  CHECK(Str(f.Bt("GET", "/v1/loops/runs/run0001").obj().at("run").at("status").at("name")) == "INACTIVE");
  REQUIRE(f.sim().world().journal.size() == 1);
  CHECK(f.sim().world().journal[0].status == 0);

  SetFaults(f, R"({"rules":[{"match":"/v1/loops/runs","truncate_rate":1.0}]})");
  CHECK(f.Bt("GET", "/v1/loops/runs").transport.code() == StatusCode::kUnavailable);
  SetFaults(f, R"({"rules":[{"match":"/v1/loops/runs","malformed_rate":1.0}]})");
  auto bad = f.Bt("GET", "/v1/loops/runs");
  CHECK(bad.status == 200);
  CHECK(bad.json.is_null());  // not JSON
}

TEST_CASE("faults: added latency, in real time") {
  SimFixture f(kScenario);
  SetFaults(f, R"({"rules":[{"match":"/v1/loops/*","latency_rate":1.0,"latency_seconds":0.3}]})");
  const auto start = std::chrono::steady_clock::now();
  CHECK(f.Bt("GET", "/v1/loops/runs").status == 200);
  CHECK(std::chrono::steady_clock::now() - start >= 300ms);
}

TEST_CASE("faults: a failing page in the middle of a listing") {
  SimFixture f(kScenario);
  SetFaults(f, R"({"rules":[{"match":"/v1/accounts/*/trainingSessions","fail_page":2}]})");
  auto p1 = f.Fw("GET", "/v1/accounts/acme-ml/trainingSessions?pageSize=1");
  REQUIRE(p1.status == 200);
  const std::string token = Str(p1.obj().at("nextPageToken"));
  CHECK(f.Fw("GET", "/v1/accounts/acme-ml/trainingSessions?pageSize=1&pageToken=" + token).status == 503);
  auto after = f.Fw("GET", "/v1/accounts/acme-ml/trainingSessions?pageSize=2");
  CHECK(after.status == 200);  // page 1 of a different pagination
}

TEST_CASE("faults: stale reads show a listing from before a mutation, while a GET is fresh") {
  SimFixture f(kScenario);
  SetFaults(f, R"({"stale_reads_seconds":60})");
  REQUIRE(f.Bt("POST", "/v1/loops/runs/run0001/deactivate").status == 200);
  auto list = f.Bt("GET", "/v1/loops/runs?scope=org");
  CHECK(Str(list.obj().at("runs").at(0).at("status").at("name")) == "ACTIVE");
  CHECK(Str(f.Bt("GET", "/v1/loops/runs/run0001").obj().at("run").at("status").at("name")) == "INACTIVE");
  f.Advance(61s);
  CHECK(Str(f.Bt("GET", "/v1/loops/runs?scope=org").obj().at("runs").at(0).at("status").at("name")) == "INACTIVE");
}

TEST_CASE("faults are counted per kind and a bad configuration is refused") {
  SimFixture f(kScenario);
  SetFaults(f, R"({"rules":[{"match":"/v1/loops/runs","error_rate":1.0},{"match":"/v1/loops/samplers","reset_rate":1.0}]})");
  f.Bt("GET", "/v1/loops/runs");
  f.Bt("GET", "/v1/loops/runs");
  // The reset meets a pooled connection, so the client resends the (idempotent) GET
  // once on a fresh one: two resets.
  f.Bt("GET", "/v1/loops/samplers");
  auto c = f.Bt("GET", "/_sim/faults");
  CHECK(c.obj().at("counts").at("error_5xx").as_int64() == 2);
  CHECK(c.obj().at("counts").at("connection_reset").as_int64() == 2);
  CHECK(c.obj().at("total").as_int64() == 4);
  auto bad = f.Bt("POST", "/_sim/faults", R"({"rules":[{"match":"*","eror_rate":1}]})");
  CHECK(bad.status == 400);
  CHECK(Str(bad.obj().at("error")) == "fault configuration: unknown rule key 'eror_rate'");
}
