#include <doctest/doctest.h>

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
