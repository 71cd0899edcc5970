#include "core/timezone.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdint>
#include <fstream>
#include <limits>
#include <sstream>

namespace loopwarden {

namespace {

int64_t BigEndian(const std::string& b, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | static_cast<unsigned char>(b[at + static_cast<size_t>(i)]);
  // Sign-extend 4-byte values.
  if (bytes == 4) return static_cast<int32_t>(static_cast<uint32_t>(v));
  return static_cast<int64_t>(v);
}

bool ValidName(const std::string& n) {
  if (n.empty() || n.size() > 64 || n.front() == '/' || n.find("..") != std::string::npos) return false;
  return std::all_of(n.begin(), n.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '/' || c == '_' || c == '-' || c == '+';
  });
}

}  // namespace

Result<std::shared_ptr<const TimeZone>> TimeZone::Load(const std::string& name, const std::string& zoneinfo_dir) {
  if (name == "UTC" || name == "Etc/UTC" || name == "Z") {
    auto tz = std::make_shared<TimeZone>();
    tz->name_ = "UTC";
    return std::shared_ptr<const TimeZone>(std::move(tz));
  }
  if (!ValidName(name)) return InvalidArgument("'" + name + "' is not a time zone name such as Europe/Berlin");
  const std::string path = zoneinfo_dir + "/" + name;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return NotFound("unknown time zone '" + name + "' (no " + path + "; names look like America/New_York)");
  }
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return Parse(name, bytes.str());
}

Result<std::shared_ptr<const TimeZone>> TimeZone::Parse(const std::string& name, const std::string& b) {
  auto bad = [&](const std::string& why) { return InvalidArgument("time zone " + name + ": " + why); };
  if (b.size() < 44 || b.compare(0, 4, "TZif") != 0) return bad("not a TZif file");
  auto counts = [&](size_t at, int64_t c[6]) -> bool {
    if (b.size() < at + 44) return false;
    for (int i = 0; i < 6; ++i) c[i] = BigEndian(b, at + 20 + static_cast<size_t>(i) * 4, 4);
    return std::all_of(c, c + 6, [](int64_t v) { return v >= 0 && v < 100000; });
  };
  int64_t c[6];  // isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt
  if (!counts(0, c)) return bad("damaged header");
  const char version = b[4];
  size_t at = 44;
  int width = 4;
  if (version >= '2') {
    // Skip the 32-bit block; the 64-bit one after it has the whole range.
    at += static_cast<size_t>(c[3] * 5 + c[4] * 6 + c[5] + c[2] * 8 + c[1] + c[0]);
    if (!counts(at, c)) return bad("damaged second header");
    at += 44;
    width = 8;
  }
  const int64_t timecnt = c[3], typecnt = c[4];
  const size_t need = static_cast<size_t>(timecnt * (width + 1) + typecnt * 6 + c[5] + c[2] * (width + 4) + c[1] + c[0]);
  if (typecnt < 1 || b.size() < at + need) return bad("truncated");
  auto tz = std::make_shared<TimeZone>();
  tz->name_ = name;
  const size_t types_at = at + static_cast<size_t>(timecnt * (width + 1));
  std::vector<int32_t> type_offset(static_cast<size_t>(typecnt));
  for (int64_t i = 0; i < typecnt; ++i) {
    type_offset[static_cast<size_t>(i)] = static_cast<int32_t>(BigEndian(b, types_at + static_cast<size_t>(i) * 6, 4));
  }
  tz->initial_offset_ = type_offset[0];
  for (int64_t i = 0; i < timecnt; ++i) {
    const int64_t t = BigEndian(b, at + static_cast<size_t>(i * width), width);
    const auto type = static_cast<unsigned char>(b[at + static_cast<size_t>(timecnt * width + i)]);
    if (type >= typecnt) return bad("transition to a type that does not exist");
    if (!tz->transitions_.empty() && t <= tz->transitions_.back()) return bad("transitions out of order");
    tz->transitions_.push_back(t);
    tz->offsets_.push_back(type_offset[type]);
  }
  // A slim file keeps recurring rules only in its footer ("CET-1CEST,M3.5.0,M10.5.0/3").
  if (version >= '2') {
    const size_t footer = at + need;
    const size_t end = b.find('\n', footer + 1);
    const std::string rule = end == std::string::npos ? "" : b.substr(footer + 1, end - footer - 1);
    const int64_t last = tz->transitions_.empty() ? std::numeric_limits<int64_t>::min() : tz->transitions_.back();
    if (rule.find(',') != std::string::npos && last < 2'100'000'000) {  // before 2036-07
      return bad("this tz database is 'slim' (daylight-saving rules only as '" + rule +
                 "'); install Debian's tzdata, whose files list every transition");
    }
  }
  return std::shared_ptr<const TimeZone>(std::move(tz));
}

Duration TimeZone::OffsetAt(Time utc) const {
  const int64_t s = std::chrono::duration_cast<std::chrono::seconds>(utc.time_since_epoch()).count();
  auto it = std::upper_bound(transitions_.begin(), transitions_.end(), s);
  const int32_t off = it == transitions_.begin() ? initial_offset_ : offsets_[static_cast<size_t>(it - transitions_.begin() - 1)];
  return std::chrono::seconds(off);
}

Time TimeZone::FromLocal(Time local) const {
  // Try the offsets in force just before and after; prefer the later valid instant.
  const Time guess = local - OffsetAt(local);
  const Time later = local - OffsetAt(guess);
  if (later + OffsetAt(later) == local) return later;
  if (guess + OffsetAt(guess) == local) return guess;
  // In a gap (clocks jumped forward past `local`): the instant of the jump, the first
  // that exists on the local clock after it.
  const int64_t from = std::chrono::duration_cast<std::chrono::seconds>(std::min(guess, later).time_since_epoch()).count();
  auto it = std::upper_bound(transitions_.begin(), transitions_.end(), from);
  if (it == transitions_.end()) return std::max(guess, later);
  return Time(std::chrono::duration_cast<Duration>(std::chrono::seconds(*it)));
}

std::string FormatLocalTime(Time utc, const TimeZone* tz) {
  const Time local = tz ? utc + tz->OffsetAt(utc) : utc;
  const auto day = std::chrono::floor<std::chrono::days>(local);
  const std::chrono::year_month_day ymd{day};
  const auto minutes = std::chrono::duration_cast<std::chrono::minutes>(local - day).count();
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02u %02lld:%02lld ", static_cast<int>(ymd.year()),
                static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                static_cast<long long>(minutes / 60), static_cast<long long>(minutes % 60));
  return std::string(buf) + (tz ? tz->name() : "UTC");
}

}  // namespace loopwarden
