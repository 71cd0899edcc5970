// Time zones from the system's tz database, for budget periods at local midnight.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "core/timezone.h"

using namespace loopwarden;
using namespace std::chrono_literals;

namespace {
Time T(const char* s) { return ParseTime(s).value(); }
bool HaveZoneinfo() { return std::filesystem::exists("/usr/share/zoneinfo/Europe/Berlin"); }
}  // namespace

TEST_CASE("time zones: offsets across daylight saving, local midnight back to UTC, readable times") {
  if (!HaveZoneinfo()) {
    MESSAGE("SKIP: no /usr/share/zoneinfo (Debian's tzdata)");
    return;
  }
  auto berlin = TimeZone::Load("Europe/Berlin");
  REQUIRE(berlin.ok());
  CHECK((*berlin)->OffsetAt(T("2026-01-15T12:00:00Z")) == Duration(1h));
  CHECK((*berlin)->OffsetAt(T("2026-07-15T12:00:00Z")) == Duration(2h));
  // Clocks go forward at 01:00Z on 2026-03-29.
  CHECK((*berlin)->OffsetAt(T("2026-03-29T00:59:59Z")) == Duration(1h));
  CHECK((*berlin)->OffsetAt(T("2026-03-29T01:00:00Z")) == Duration(2h));
  CHECK((*berlin)->FromLocal(T("2026-07-15T00:00:00Z")) == T("2026-07-14T22:00:00Z"));
  CHECK((*berlin)->FromLocal(T("2026-01-15T00:00:00Z")) == T("2026-01-14T23:00:00Z"));
  // 02:30 local does not exist that night: the first instant after the gap.
  CHECK((*berlin)->FromLocal(T("2026-03-29T02:30:00Z")) == T("2026-03-29T01:00:00Z"));
  auto ny = TimeZone::Load("America/New_York");
  REQUIRE(ny.ok());
  CHECK((*ny)->OffsetAt(T("2026-12-03T12:00:00Z")) == -Duration(5h));
  CHECK(FormatLocalTime(T("2026-12-03T17:30:00Z"), ny->get()) == "2026-12-03 12:30 America/New_York");
  CHECK(FormatLocalTime(T("2026-12-03T17:30:00Z"), nullptr) == "2026-12-03 17:30 UTC");
}

TEST_CASE("time zones: UTC needs no file, and a bad name or file is refused naming what and where") {
  auto utc = TimeZone::Load("UTC", "/nonexistent");
  REQUIRE(utc.ok());
  CHECK((*utc)->OffsetAt(T("2026-07-15T12:00:00Z")) == Duration::zero());
  auto missing = TimeZone::Load("Europe/Berln", "/nonexistent");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().message() ==
        "unknown time zone 'Europe/Berln' (no /nonexistent/Europe/Berln; names look like America/New_York)");
  auto escape = TimeZone::Load("../../etc/passwd");
  REQUIRE_FALSE(escape.ok());
  CHECK(escape.status().message().find("is not a time zone name") != std::string::npos);
  auto damaged = TimeZone::Parse("X/Y", std::string("TZif2") + std::string(60, '\xff'));
  REQUIRE_FALSE(damaged.ok());
  CHECK(damaged.status().message().rfind("time zone X/Y: ", 0) == 0);
  CHECK_FALSE(TimeZone::Parse("X/Y", "not a tz file").ok());
  if (HaveZoneinfo()) {
    // A file cut short is damaged, not a zone with fewer transitions.
    std::string bytes;
    {
      std::ifstream in("/usr/share/zoneinfo/Europe/Berlin", std::ios::binary);
      bytes.assign(std::istreambuf_iterator<char>(in), {});
    }
    CHECK(TimeZone::Parse("Europe/Berlin", bytes).ok());
    auto cut = TimeZone::Parse("Europe/Berlin", bytes.substr(0, bytes.size() / 2));
    REQUIRE_FALSE(cut.ok());
    CHECK(cut.status().message() == "time zone Europe/Berlin: truncated");
  }
}
