// Error classification for every error shape both providers use.
#include <doctest/doctest.h>

#include "providers/errors.h"

using namespace loopwarden;
using namespace loopwarden::providers;
using namespace std::chrono_literals;

namespace {
const Time kNow = ParseTime("2026-08-01T12:00:00Z").value();
net::HttpResponse R(int status, std::string body, net::Headers h = {}) {
  net::HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  r.headers = std::move(h);
  return r;
}
}  // namespace

TEST_CASE("Baseten: status first, then body fields, 429 in the documented order") {
  struct Case {
    net::HttpResponse res;
    ErrorClass cls;
    const char* detail;
  };
  const Case cases[] = {
      {R(200, "{}"), ErrorClass::kNone, ""},
      {R(401, R"({"error":"Invalid API key"})"), ErrorClass::kAuth, ""},
      {R(403, R"({"error":"no org"})"), ErrorClass::kAuth, ""},
      {R(404, R"({"error":"Run x not found"})"), ErrorClass::kNotFound, ""},
      {R(409, R"({"error":"Sampler s is paired to run r1; deactivate the run","run_id":"r1"})"), ErrorClass::kConflict, "paired"},
      {R(409, R"({"error":"Sampler s is paired to run r9; deactivate the run"})"), ErrorClass::kConflict, "paired"},
      {R(409, R"({"error":"Checkpoint c is in use: deployed as d"})"), ErrorClass::kConflict, "in_use"},
      {R(400, R"({"error":"bad"})"), ErrorClass::kInvalid, ""},
      {R(402, R"({"error":"payment required"})"), ErrorClass::kQuota, "billing"},
      {R(429, R"({"error":"x","details":{"limit":"org_cap"},"retry_after":5})"), ErrorClass::kQuota, "org_cap"},
      {R(429, R"({"error":"Rate limit exceeded. Please try again later.","retry_after":37})"), ErrorClass::kRateLimited, ""},
      {R(429, R"({"error":"slow down"})", {{"Retry-After", "12"}}), ErrorClass::kRateLimited, ""},
      {R(429, R"({"error":"no capacity","details":{"limit":"capacity"}})"), ErrorClass::kCapacity, "capacity"},
      {R(429, "not json"), ErrorClass::kCapacity, "capacity"},
      {R(500, ""), ErrorClass::kTransient, ""},
      {R(503, "<html>"), ErrorClass::kTransient, ""},
      {R(418, "{}"), ErrorClass::kUnknown, ""},
  };
  for (const Case& c : cases) {
    CAPTURE(c.res.status);
    CAPTURE(c.res.body);
    ProviderError e = ClassifyBaseten(c.res, kNow);
    CHECK(e.cls == c.cls);
    CHECK(e.detail == c.detail);
  }
  auto ra = ClassifyBaseten(R(429, R"({"error":"x","retry_after":37})", {{"Retry-After", "40"}}), kNow);
  CHECK(ra.retry_after == Duration(40s));  // the larger of body and header
  CHECK(ClassifyBaseten(cases[4].res, kNow).run_id == "r1");
  CHECK(ClassifyBaseten(cases[5].res, kNow).run_id == "r9");
}

TEST_CASE("Fireworks: gRPC status bodies, the gateway shape, lenient shapes, slot cap vs throttling by text") {
  struct Case {
    net::HttpResponse res;
    ErrorClass cls;
    const char* detail;
  };
  const Case cases[] = {
      {R(401, R"({"code":16,"message":"invalid API key","details":[]})"), ErrorClass::kAuth, ""},
      {R(403, R"({"code":7,"message":"denied"})"), ErrorClass::kAuth, ""},
      {R(404, R"({"code":5,"message":"RlorTrainerJob x not found"})"), ErrorClass::kNotFound, ""},
      {R(409, R"({"code":6,"message":"Model m already exists"})"), ErrorClass::kConflict, "exists"},
      {R(400, R"({"code":9,"message":"cannot cancel job in state: JOB_STATE_DELETED"})"), ErrorClass::kConflict,
       "precondition"},
      {R(400, R"({"code":3,"message":"output_model_id is required"})"), ErrorClass::kInvalid, ""},
      {R(429, R"({"error":{"message":"maximum concurrent serverless training runs exceeded: in use 8, limit 8","param":null,"code":"RATE_LIMIT_EXCEEDED","type":"error"},"request_id":"u"})"),
       ErrorClass::kQuota, "slot_cap"},
      {R(429, R"({"code":8,"message":"Too many training requests. Wait and try again.","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"RATE_LIMIT_EXCEEDED"}]})",
         {{"Retry-After", "3"}}),
       ErrorClass::kRateLimited, ""},
      {R(429, R"({"code":8,"message":"quota","details":[{"reason":"QUOTA_EXCEEDED"}]})"), ErrorClass::kQuota, "quota"},
      {R(503, R"({"code":8,"message":"out of capacity","details":[{"reason":"INSUFFICIENT_CAPACITY"}]})"),
       ErrorClass::kCapacity, "capacity"},
      {R(412, R"({"code":9,"message":"account suspended"})"), ErrorClass::kConflict, "precondition"},
      {R(402, R"({"error":"billing"})"), ErrorClass::kQuota, "billing"},
      {R(500, R"({"code":13,"message":"internal"})"), ErrorClass::kTransient, ""},
      {R(503, R"({"error":{"message":"scaling up","code":"DEPLOYMENT_SCALING_UP","type":"error"}})"), ErrorClass::kTransient, ""},
      {R(408, ""), ErrorClass::kTransient, ""},
      {R(400, R"({"error":{"message":"bad"}})"), ErrorClass::kInvalid, ""},
      {R(400, R"({"error":"bad"})"), ErrorClass::kInvalid, ""},
  };
  for (const Case& c : cases) {
    CAPTURE(c.res.status);
    CAPTURE(c.res.body);
    ProviderError e = ClassifyFireworks(c.res, kNow);
    CHECK(e.cls == c.cls);
    CHECK(e.detail == c.detail);
  }
  auto slot = ClassifyFireworks(
      R(429, R"({"error":{"message":"maximum concurrent serverless training runs for base model accounts/fireworks/models/qwen3p8-27b exceeded: in use 1, limit 1","code":"RATE_LIMIT_EXCEEDED"}})"),
      kNow);
  CHECK(slot.model == "accounts/fireworks/models/qwen3p8-27b");
  CHECK(slot.in_use == 1);
  CHECK(slot.limit == 1);
  CHECK(ClassifyFireworks(cases[7].res, kNow).retry_after == Duration(3s));
  CHECK(TransportFailure(DeadlineExceeded("reading timed out")).cls == ErrorClass::kTransient);
  CHECK(TransportFailure(Unauthenticated("TLS certificate not trusted")).cls == ErrorClass::kAuth);
}
