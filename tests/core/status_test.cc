#include <doctest/doctest.h>

#include "core/status.h"

namespace lw = loopwarden;

namespace {
lw::Result<int> Half(int x) {
  if (x % 2) return lw::InvalidArgument("odd: " + std::to_string(x));
  return x / 2;
}
lw::Result<int> Quarter(int x) {
  LW_ASSIGN_OR_RETURN(int h, Half(x));
  LW_ASSIGN_OR_RETURN(int q, Half(h));
  return q;
}
}  // namespace

TEST_CASE("Result carries a value or the failing status through LW_ASSIGN_OR_RETURN") {
  CHECK(Quarter(8).value() == 2);
  auto r = Quarter(6);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == lw::StatusCode::kInvalidArgument);
  CHECK(r.status().message() == "odd: 3");
  CHECK(r.status().ToString() == "invalid_argument: odd: 3");
  CHECK(r.value_or(-1) == -1);
}

TEST_CASE("Status context prefixes the message and keeps the code") {
  lw::Status s = lw::NotFound("run k4q95w5").WithContext("refresh");
  CHECK(s.code() == lw::StatusCode::kNotFound);
  CHECK(s.message() == "refresh: run k4q95w5");
  CHECK(lw::Status::Ok().WithContext("x").ok());
}
