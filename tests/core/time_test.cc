#include <doctest/doctest.h>

#include <cstdio>
#include <random>
#include <string>

#include "core/time.h"

namespace lw = loopwarden;
using namespace std::chrono_literals;

TEST_CASE("provider timestamps parse as instants whatever their precision") {
  auto a = lw::ParseTime("2026-07-20T22:51:58Z").value();
  auto b = lw::ParseTime("2026-07-20T22:51:58.115Z").value();
  auto c = lw::ParseTime("2026-08-01T09:41:02.123456Z").value();
  auto d = lw::ParseTime("2026-07-20T23:51:58+01:00").value();
  CHECK(lw::ToUnixSeconds(a) == 1784587918);
  CHECK(b - a == 115ms);
  CHECK(a == d);
  CHECK(lw::FormatTime(c) == "2026-08-01T09:41:02.123456Z");
  CHECK(lw::FormatTime(b) == "2026-07-20T22:51:58.115Z");
  CHECK(lw::FormatTime(a) == "2026-07-20T22:51:58Z");
  CHECK(lw::FormatTimeMillis(a) == "2026-07-20T22:51:58.000Z");
  CHECK(lw::FormatClockTime(a) == "22:51Z");
}

TEST_CASE("bad timestamps say what is wrong") {
  CHECK(lw::ParseTime("2026-07-20").status().message() == "invalid timestamp '2026-07-20': expected an RFC 3339 time like 2026-12-31T00:00:00Z");
  CHECK(lw::ParseTime("2026-07-20T22:51:58").status().message() ==
        "invalid timestamp '2026-07-20T22:51:58': missing time zone (Z or +hh:mm)");
  CHECK(lw::ParseTime("2026-02-30T00:00:00Z").status().message() ==
        "invalid timestamp '2026-02-30T00:00:00Z': no such date");
  CHECK_FALSE(lw::ParseTime("2026-07-20T25:00:00Z").ok());
  CHECK_FALSE(lw::ParseTime("2026-07-20T22:51:58Zjunk").ok());
}

TEST_CASE("hour and day floors") {
  auto t = lw::ParseTime("2026-07-20T22:51:58.5Z").value();
  CHECK(lw::FormatTime(lw::FloorToHour(t)) == "2026-07-20T22:00:00Z");
  CHECK(lw::FormatTime(lw::FloorToDay(t)) == "2026-07-20T00:00:00Z");
}

TEST_CASE("a Z timestamp reads as the same instant, or fails alike, as its +00:00 twin") {
  // Text ending in Z takes a quick reading (the providers' form); with +00:00 it takes
  // the general one. Over valid stamps of every fraction length, and the same with one
  // character changed, both must agree: on success, on the instant, on the error.
  std::mt19937 rng(20261206);
  const std::string alphabet = "0123456789-T:.xZ t+";
  int parsed = 0, refused = 0;
  for (int i = 0; i < 20000; ++i) {
    char text[64];
    const int year = 1970 + static_cast<int>(rng() % 131), month = 1 + static_cast<int>(rng() % 12);
    const int day = 1 + static_cast<int>(rng() % 31), hour = static_cast<int>(rng() % 24);
    const int minute = static_cast<int>(rng() % 60), second = static_cast<int>(rng() % 61);
    int len = std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d", year, month, day, hour, minute, second);
    const int digits = static_cast<int>(rng() % 11) - 1;  // -1: no '.', 0: '.' alone
    if (digits >= 0) {
      text[len++] = '.';
      for (int k = 0; k < digits; ++k) text[len++] = static_cast<char>('0' + rng() % 10);
    }
    std::string z(text, static_cast<size_t>(len));
    if (i % 2 == 1) z[rng() % z.size()] = alphabet[rng() % alphabet.size()];  // one character changed
    CAPTURE(z);
    const auto quick = lw::ParseTime(z + "Z");
    const auto general = lw::ParseTime(z + "+00:00");
    REQUIRE(quick.ok() == general.ok());
    if (quick.ok()) {
      CHECK(*quick == *general);
      ++parsed;
    } else {
      // The same complaint, about the text as given.
      CHECK(quick.status().message().substr(quick.status().message().find("': ")) ==
            general.status().message().substr(general.status().message().find("': ")));
      ++refused;
    }
  }
  CHECK(parsed > 5000);  // both kinds were exercised
  CHECK(refused > 5000);
  CHECK(lw::ParseTime("2026-07-20T23:59:60Z").value() == lw::ParseTime("2026-07-21T00:00:00Z").value());  // leap second
  CHECK(lw::ParseTime("2028-02-29T00:00:00Z").ok());
  CHECK(lw::ParseTime("2026-07-20t22:51:58Z").value() == lw::ParseTime("2026-07-20T22:51:58Z").value());
  CHECK(lw::ParseTime("2026-07-20T22:51:58.1234567Z").value() == lw::ParseTime("2026-07-20T22:51:58.123456Z").value());
  CHECK(lw::ParseTime("2026-07-20T22:51:58.Z").status().message() ==
        "invalid timestamp '2026-07-20T22:51:58.Z': empty fraction");
}
