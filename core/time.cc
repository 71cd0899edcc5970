#include "core/time.h"

#include <array>
#include <cstdint>
#include <cstdio>

namespace loopwarden {
namespace {

struct Unit {
  std::string_view suffix;
  Duration length;
};

// Longest suffix first so "ms" is not read as "m" followed by garbage.
constexpr std::array<Unit, 6> kUnits{{
    {"ms", std::chrono::milliseconds(1)},
    {"w", std::chrono::hours(24 * 7)},
    {"d", std::chrono::hours(24)},
    {"h", std::chrono::hours(1)},
    {"m", std::chrono::minutes(1)},
    {"s", std::chrono::seconds(1)},
}};

int UnitRank(std::string_view suffix) {
  // Larger units rank lower; components must appear in increasing rank.
  if (suffix == "w") return 0;
  if (suffix == "d") return 1;
  if (suffix == "h") return 2;
  if (suffix == "m") return 3;
  if (suffix == "s") return 4;
  return 5;  // ms
}

Status BadDuration(std::string_view text, std::string_view why) {
  return InvalidArgument("invalid duration '" + std::string(text) + "': " + std::string(why) +
                         " (examples: 90s, 20m, 1h30m, 2d)");
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Reads exactly `n` digits at text[pos].
bool ReadDigits(std::string_view text, size_t pos, size_t n, int& out) {
  if (pos + n > text.size()) return false;
  int v = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!IsDigit(text[pos + i])) return false;
    v = v * 10 + (text[pos + i] - '0');
  }
  out = v;
  return true;
}

}  // namespace

Result<Duration> ParseDuration(std::string_view text) {
  if (text.empty()) return BadDuration(text, "empty");
  Duration total{0};
  size_t i = 0;
  int last_rank = -1;
  while (i < text.size()) {
    if (!IsDigit(text[i])) return BadDuration(text, "expected a number");
    int64_t n = 0;
    while (i < text.size() && IsDigit(text[i])) {
      if (n > 1'000'000'000) return BadDuration(text, "too large");
      n = n * 10 + (text[i] - '0');
      ++i;
    }
    const Unit* unit = nullptr;
    for (const Unit& u : kUnits) {
      if (text.substr(i, u.suffix.size()) == u.suffix) {
        unit = &u;
        break;
      }
    }
    if (unit == nullptr) return BadDuration(text, "expected a unit (ms, s, m, h, d, w)");
    int rank = UnitRank(unit->suffix);
    if (rank <= last_rank) return BadDuration(text, "units must go from largest to smallest, each once");
    last_rank = rank;
    i += unit->suffix.size();
    // Checked before multiplying: "5124095577h" must not wrap around to 58 minutes.
    constexpr Duration kMax = std::chrono::hours(24 * 365 * 100);
    if (n > kMax / unit->length || total > kMax - unit->length * n) {
      return BadDuration(text, "too large (at most 100 years)");
    }
    total += unit->length * n;
  }
  return total;
}

Result<Duration> ParseProtoDuration(std::string_view text) {
  if (text.size() < 2 || text.back() != 's') {
    return InvalidArgument("invalid protobuf duration '" + std::string(text) + "'");
  }
  std::string_view num = text.substr(0, text.size() - 1);
  int64_t whole = 0;
  int64_t frac_us = 0;
  size_t i = 0;
  bool any = false;
  while (i < num.size() && IsDigit(num[i])) {
    whole = whole * 10 + (num[i] - '0');
    ++i;
    any = true;
    if (whole > 1'000'000'000'000) return InvalidArgument("protobuf duration too large: '" + std::string(text) + "'");
  }
  if (i < num.size() && num[i] == '.') {
    ++i;
    int64_t scale = 100000;
    while (i < num.size() && IsDigit(num[i])) {
      frac_us += (num[i] - '0') * scale;
      scale /= 10;
      ++i;
      any = true;
    }
  }
  if (!any || i != num.size()) return InvalidArgument("invalid protobuf duration '" + std::string(text) + "'");
  return std::chrono::seconds(whole) + Duration(frac_us);
}

std::string FormatDuration(Duration d) {
  if (d < Duration::zero()) return "-" + FormatDuration(-d);
  if (d == Duration::zero()) return "0s";
  std::string out;
  int64_t us = d.count();
  const int64_t kSec = 1'000'000;
  if (us % kSec != 0) {
    // Sub-second precision: print as seconds with a fraction, or milliseconds.
    if (us < kSec && us % 1000 == 0) return std::to_string(us / 1000) + "ms";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3f", static_cast<double>(us) / kSec);
    std::string s = buf;
    while (!s.empty() && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s + "s";
  }
  int64_t secs = us / kSec;
  const int64_t days = secs / 86400;
  secs %= 86400;
  const int64_t hours = secs / 3600;
  secs %= 3600;
  const int64_t mins = secs / 60;
  secs %= 60;
  if (days) out += std::to_string(days) + "d";
  if (hours) out += std::to_string(hours) + "h";
  if (mins) out += std::to_string(mins) + "m";
  if (secs) out += std::to_string(secs) + "s";
  return out;
}

namespace {

// The form every provider sends, "2026-12-31T23:59:59Z" with or without a fraction, read
// with no calls and no branch per digit: a steady poll at 100k parses about 150,000 of
// them, and the general reading below was 2 % of its instructions. Anything else (an
// offset, a lowercase 't', a bad field) is left to the general reading, which also
// words the errors; what both accept they read alike.
std::optional<Time> ParseZuluTime(std::string_view text) {
  const size_t n = text.size();
  if (n < 20 || text[n - 1] != 'Z') return std::nullopt;
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  unsigned bad = 0;
  auto digit = [&](size_t at) {
    const unsigned v = static_cast<unsigned>(p[at]) - '0';
    bad |= v > 9 ? 1u : 0u;
    return v;
  };
  auto two = [&](size_t at) { return digit(at) * 10 + digit(at + 1); };
  const unsigned y = two(0) * 100 + two(2), mo = two(5), d = two(8), h = two(11), mi = two(14), sec = two(17);
  bad |= (p[4] != '-') | (p[7] != '-') | (p[10] != 'T') | (p[13] != ':') | (p[16] != ':');
  int64_t frac_us = 0;
  if (n > 20) {
    // ".f" to ".ffffff…": digits past the sixth are read and dropped, as below.
    bad |= (p[19] != '.') | (n == 21);
    int64_t scale = 100000;
    for (size_t i = 20; i + 1 < n; ++i) {
      frac_us += digit(i) * scale;
      scale /= 10;
    }
  }
  if (bad != 0 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60) return std::nullopt;
  const std::chrono::year_month_day ymd{std::chrono::year(static_cast<int>(y)), std::chrono::month(mo),
                                        std::chrono::day(d)};
  if (!ymd.ok()) return std::nullopt;
  return std::chrono::sys_days(ymd) + std::chrono::hours(h) + std::chrono::minutes(mi) + std::chrono::seconds(sec) +
         Duration(frac_us);
}

}  // namespace

Result<Time> ParseTime(std::string_view text) {
  if (std::optional<Time> t = ParseZuluTime(text)) return *t;
  auto bad = [&](std::string_view why) {
    return InvalidArgument("invalid timestamp '" + std::string(text) + "': " + std::string(why));
  };
  int y, mo, d, h, mi, s;
  if (text.size() < 19) return bad("expected an RFC 3339 time like 2026-12-31T00:00:00Z");
  if (!ReadDigits(text, 0, 4, y) || text[4] != '-' || !ReadDigits(text, 5, 2, mo) || text[7] != '-' ||
      !ReadDigits(text, 8, 2, d)) {
    return bad("expected YYYY-MM-DD");
  }
  if (text[10] != 'T' && text[10] != 't' && text[10] != ' ') return bad("expected 'T' after the date");
  if (!ReadDigits(text, 11, 2, h) || text[13] != ':' || !ReadDigits(text, 14, 2, mi) || text[16] != ':' ||
      !ReadDigits(text, 17, 2, s)) {
    return bad("expected hh:mm:ss");
  }
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60) return bad("field out of range");
  std::chrono::year_month_day ymd{std::chrono::year(y), std::chrono::month(static_cast<unsigned>(mo)),
                                  std::chrono::day(static_cast<unsigned>(d))};
  if (!ymd.ok()) return bad("no such date");
  size_t i = 19;
  int64_t frac_us = 0;
  if (i < text.size() && text[i] == '.') {
    ++i;
    int64_t scale = 100000;
    size_t start = i;
    while (i < text.size() && IsDigit(text[i])) {
      frac_us += (text[i] - '0') * scale;
      scale /= 10;
      ++i;
    }
    if (i == start) return bad("empty fraction");
  }
  int offset_minutes = 0;
  if (i < text.size() && (text[i] == 'Z' || text[i] == 'z')) {
    ++i;
  } else if (i < text.size() && (text[i] == '+' || text[i] == '-')) {
    int oh, om;
    if (!ReadDigits(text, i + 1, 2, oh) || i + 3 >= text.size() || text[i + 3] != ':' ||
        !ReadDigits(text, i + 4, 2, om)) {
      return bad("bad UTC offset");
    }
    offset_minutes = (oh * 60 + om) * (text[i] == '-' ? -1 : 1);
    i += 6;
  } else {
    return bad("missing time zone (Z or +hh:mm)");
  }
  if (i != text.size()) return bad("trailing characters");
  Time t = std::chrono::sys_days(ymd) + std::chrono::hours(h) + std::chrono::minutes(mi) +
           std::chrono::seconds(s) + Duration(frac_us) - std::chrono::minutes(offset_minutes);
  return t;
}

namespace {
std::string FormatWith(Time t, int frac_digits_mode) {
  // frac_digits_mode: -1 = trim, 0 = none, 3 = millis.
  auto day = std::chrono::floor<std::chrono::days>(t);
  std::chrono::year_month_day ymd{day};
  auto rest = t - day;
  int64_t us = rest.count();
  int64_t secs = us / 1'000'000;
  int64_t frac = us % 1'000'000;
  char buf[64];
  int n = std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02lld:%02lld:%02lld", static_cast<int>(ymd.year()),
                        static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                        static_cast<long long>(secs / 3600), static_cast<long long>((secs / 60) % 60),
                        static_cast<long long>(secs % 60));
  std::string out(buf, static_cast<size_t>(n));
  if (frac_digits_mode == 3) {
    std::snprintf(buf, sizeof buf, ".%03lld", static_cast<long long>(frac / 1000));
    out += buf;
  } else if (frac_digits_mode == -1 && frac != 0) {
    if (frac % 1000 == 0) {
      std::snprintf(buf, sizeof buf, ".%03lld", static_cast<long long>(frac / 1000));
    } else {
      std::snprintf(buf, sizeof buf, ".%06lld", static_cast<long long>(frac));
    }
    out += buf;
  }
  out += 'Z';
  return out;
}
}  // namespace

std::string FormatTime(Time t) { return FormatWith(t, -1); }
std::string FormatTimeSeconds(Time t) { return FormatWith(std::chrono::floor<std::chrono::seconds>(t), 0); }
std::string FormatTimeMillis(Time t) { return FormatWith(t, 3); }

std::string FormatClockTime(Time t) {
  auto day = std::chrono::floor<std::chrono::days>(t);
  int64_t secs = std::chrono::duration_cast<std::chrono::seconds>(t - day).count();
  char buf[48];
  std::snprintf(buf, sizeof buf, "%02lld:%02lldZ", static_cast<long long>(secs / 3600),
                static_cast<long long>((secs / 60) % 60));
  return buf;
}

int64_t ToUnixMillis(Time t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}
int64_t ToUnixSeconds(Time t) {
  return std::chrono::floor<std::chrono::seconds>(t.time_since_epoch()).count();
}
double ToUnixSecondsDouble(Time t) { return static_cast<double>(t.time_since_epoch().count()) / 1e6; }
int64_t ToUnixMicros(Time t) { return t.time_since_epoch().count(); }
Time FromUnixMillis(int64_t ms) { return Time(std::chrono::milliseconds(ms)); }
Time FromUnixSeconds(int64_t s) { return Time(std::chrono::seconds(s)); }
Time FromUnixMicros(int64_t us) { return Time(Duration(us)); }
Time FloorToHour(Time t) { return std::chrono::floor<std::chrono::hours>(t); }
Time FloorToDay(Time t) { return std::chrono::floor<std::chrono::days>(t); }

}  // namespace loopwarden
