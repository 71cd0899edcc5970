#include <doctest/doctest.h>

#include "core/money.h"
#include "core/time.h"

namespace lw = loopwarden;
using namespace std::chrono_literals;

TEST_CASE("durations parse from the forms operators write") {
  CHECK(lw::ParseDuration("90s").value() == 90s);
  CHECK(lw::ParseDuration("20m").value() == 20min);
  CHECK(lw::ParseDuration("1h30m").value() == 90min);
  CHECK(lw::ParseDuration("2d").value() == 48h);
  CHECK(lw::ParseDuration("1w").value() == 168h);
  CHECK(lw::ParseDuration("500ms").value() == 500ms);
  CHECK(lw::ParseDuration("0s").value() == 0s);
  CHECK(lw::ParseDuration("1d2h3m4s").value() == 24h + 2h + 3min + 4s);
}

TEST_CASE("bad durations are errors that quote the text") {
  struct Case {
    const char* in;
    const char* msg;
  };
  const Case cases[] = {
      {"", "invalid duration '': empty (examples: 90s, 20m, 1h30m, 2d)"},
      {"soon", "invalid duration 'soon': expected a number (examples: 90s, 20m, 1h30m, 2d)"},
      {"20", "invalid duration '20': expected a unit (ms, s, m, h, d, w) (examples: 90s, 20m, 1h30m, 2d)"},
      {"30m1h", "invalid duration '30m1h': units must go from largest to smallest, each once (examples: 90s, 20m, 1h30m, 2d)"},
      {"5x", "invalid duration '5x': expected a unit (ms, s, m, h, d, w) (examples: 90s, 20m, 1h30m, 2d)"},
      {"-5m", "invalid duration '-5m': expected a number (examples: 90s, 20m, 1h30m, 2d)"},
      {"1h 30m", "invalid duration '1h 30m': expected a number (examples: 90s, 20m, 1h30m, 2d)"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.in);
    auto r = lw::ParseDuration(c.in);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message() == c.msg);
  }
}

TEST_CASE("durations print in their shortest exact form and round-trip") {
  CHECK(lw::FormatDuration(90min) == "1h30m");
  CHECK(lw::FormatDuration(48h) == "2d");
  CHECK(lw::FormatDuration(0s) == "0s");
  CHECK(lw::FormatDuration(47min) == "47m");
  CHECK(lw::FormatDuration(90s) == "1m30s");
  CHECK(lw::FormatDuration(1500ms) == "1.5s");
  CHECK(lw::FormatDuration(250ms) == "250ms");
  for (auto d : {lw::Duration(90s), lw::Duration(26h + 1s), lw::Duration(7 * 24h), lw::Duration(59min)}) {
    CHECK(lw::ParseDuration(lw::FormatDuration(d)).value() == d);
  }
}

TEST_CASE("protobuf durations from Fireworks") {
  CHECK(lw::ParseProtoDuration("3600s").value() == 1h);
  CHECK(lw::ParseProtoDuration("0.5s").value() == 500ms);
  CHECK_FALSE(lw::ParseProtoDuration("1h").ok());
  CHECK_FALSE(lw::ParseProtoDuration("s").ok());
}

TEST_CASE("money parses exactly as micro-USD") {
  CHECK(lw::ParseMoney("6.50").value().micros() == 6'500'000);
  CHECK(lw::ParseMoney("6").value().micros() == 6'000'000);
  CHECK(lw::ParseMoney("0.248").value().micros() == 248'000);
  CHECK(lw::ParseMoney("$12.40").value().micros() == 12'400'000);
  CHECK(lw::ParseMoney("0.000001").value().micros() == 1);
  CHECK(lw::ParseMoney("-3.1").value().micros() == -3'100'000);
  CHECK(lw::ParseMoney("0.10833").value().micros() == 108'330);
}

TEST_CASE("bad money is an error that quotes the text") {
  CHECK(lw::ParseMoney("6.5000001").status().message() ==
        "invalid amount '6.5000001': more than 6 decimal places (examples: 6.50, 0.248, 500)");
  CHECK(lw::ParseMoney("six").status().message() == "invalid amount 'six': expected digits (examples: 6.50, 0.248, 500)");
  CHECK(lw::ParseMoney("1e3").status().message() ==
        "invalid amount '1e3': unexpected characters (examples: 6.50, 0.248, 500)");
  CHECK_FALSE(lw::ParseMoney("").ok());
  CHECK_FALSE(lw::ParseMoney(".").ok());
}

TEST_CASE("money prints with at least two decimals and never rounds") {
  CHECK(lw::FormatMoney(lw::Money::FromMicros(6'500'000)) == "6.50");
  CHECK(lw::FormatMoney(lw::Money::FromMicros(248'000)) == "0.248");
  CHECK(lw::FormatMoney(lw::Money::FromMicros(1)) == "0.000001");
  CHECK(lw::FormatMoney(lw::Money::FromMicros(-3'100'000)) == "-3.10");
  CHECK(lw::FormatMoney(lw::Money()) == "0.00");
  CHECK(lw::FormatUsd(lw::Money::FromMicros(6'499'999)) == "$6.50");
}

TEST_CASE("price scaling is exact integer arithmetic with half-up rounding") {
  const lw::Money h100 = lw::ParseMoney("6.50").value();
  // 8 GPUs for one hour at $6.50/GPU-hour.
  CHECK(lw::ScalePrice(h100, 8 * 3600, 3600).micros() == 52'000'000);
  // One GPU-second: 6.5e6 / 3600 = 1805.555… -> 1806.
  CHECK(lw::ScalePrice(h100, 1, 3600).micros() == 1806);
  // 3,924,000 tokens at $1.86 per million.
  CHECK(lw::ScalePrice(lw::ParseMoney("1.86").value(), 3'924'000, 1'000'000).micros() == 7'298'640);
  // A year of 100k GPUs does not overflow.
  CHECK(lw::ScalePrice(h100, int64_t{100'000} * 365 * 86400, 3600).micros() == int64_t{5'694'000'000'000'000});
}

TEST_CASE("hardening: a duration too large for its unit is an error, never a wrapped small one") {
  // 5124095577h in microseconds passes 2^63: it once wrapped to 58 minutes.
  auto h = lw::ParseDuration("5124095577h");
  REQUIRE_FALSE(h.ok());
  CHECK(h.status().message().find("too large") != std::string::npos);
  CHECK_FALSE(lw::ParseDuration("999999999w").ok());
  CHECK_FALSE(lw::ParseDuration("36500d1ms").ok());  // just over 100 years
  CHECK(lw::ParseDuration("36500d").ok());            // 100 years exactly
  CHECK_FALSE(lw::ParseDuration("5124095h").ok());    // 584 years: representable, still refused
}
