#pragma once
// Time and Duration: one timeline for the whole program.
//
// loopwarden schedules against wall-clock instants because mark deadlines are absolute
// times stored in the database and shown to people ("acts at 10:42Z"). Under a
// ScaledClock the same type carries simulated time, so the simulator, the daemon and
// the benchmarks agree on "now" without translation.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/compact_optional.h"
#include "core/status.h"

namespace loopwarden {

using Duration = std::chrono::microseconds;
using Time = std::chrono::sys_time<std::chrono::microseconds>;
// An optional instant or duration in 8 bytes, for the fields of records kept per
// resource (core/compact_optional.h).
using OptionalTime = CompactOptional<Time>;
using OptionalDuration = CompactOptional<Duration>;

using std::chrono_literals::operator""s;
using std::chrono_literals::operator""min;
using std::chrono_literals::operator""h;
using std::chrono_literals::operator""ms;

constexpr Duration kDay = std::chrono::hours(24);

// Parses "90s", "20m", "1h30m", "2d", "1w", "500ms", "0s"; components in descending
// order, each at most once. Bad input is an error that quotes the text.
Result<Duration> ParseDuration(std::string_view text);
// Also accepts protobuf JSON durations ("3600s", "0.5s").
Result<Duration> ParseProtoDuration(std::string_view text);

// The shortest exact form: 5400s -> "1h30m", 172800s -> "2d", 0 -> "0s", 1500ms -> "1.5s".
std::string FormatDuration(Duration d);

// Parses RFC 3339 / ISO 8601 instants: "2026-07-20T22:51:58Z", "…58.115Z",
// "…58.123456Z", "…58+02:00". Sub-microsecond digits are truncated.
Result<Time> ParseTime(std::string_view text);
// "2026-07-20T22:51:58Z", or with fractional seconds when non-zero ("…58.115Z",
// trimmed to the significant milliseconds or microseconds).
std::string FormatTime(Time t);
// Always whole seconds ("…58Z").
std::string FormatTimeSeconds(Time t);
// Always milliseconds ("…58.115Z").
std::string FormatTimeMillis(Time t);
// Hours and minutes of day for human reasons: "10:42Z".
std::string FormatClockTime(Time t);

int64_t ToUnixMillis(Time t);
int64_t ToUnixSeconds(Time t);
double ToUnixSecondsDouble(Time t);
Time FromUnixMillis(int64_t ms);
Time FromUnixSeconds(int64_t s);
Time FromUnixMicros(int64_t us);
int64_t ToUnixMicros(Time t);

// Truncates to the start of the UTC hour / day containing t.
Time FloorToHour(Time t);
Time FloorToDay(Time t);

}  // namespace loopwarden
