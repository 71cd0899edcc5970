#pragma once
// IANA time zones from the system's compiled tz database (/usr/share/zoneinfo, TZif),
// for budget periods that start at local midnight. GCC 12's libstdc++ has no
// std::chrono::tzdb, and TZ= with localtime_r is process-global.
//
// The "fat" TZif files Debian ships list every transition to 2037; a "slim" file of a
// zone with daylight saving (rules only in its POSIX footer) is refused with a message
// that says so, rather than answered with a wrong offset half the year.

#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/time.h"

namespace loopwarden {

class TimeZone {
 public:
  // "UTC" (also "Etc/UTC") needs no file. A name that is not a zone is an error naming
  // the file it looked for.
  static Result<std::shared_ptr<const TimeZone>> Load(const std::string& name,
                                                     const std::string& zoneinfo_dir = "/usr/share/zoneinfo");
  // From TZif bytes (tests, fuzzing); `name` is only for messages.
  static Result<std::shared_ptr<const TimeZone>> Parse(const std::string& name, const std::string& bytes);

  const std::string& name() const { return name_; }
  // Local time minus UTC at the instant `utc`.
  Duration OffsetAt(Time utc) const;
  // The UTC instant of a local wall-clock time (the later one when a transition
  // repeats it, the first valid one after a gap).
  Time FromLocal(Time local) const;

 private:
  std::string name_;
  std::vector<int64_t> transitions_;  // UTC seconds, ascending
  std::vector<int32_t> offsets_;      // offset (s) in force from transitions_[i]
  int32_t initial_offset_ = 0;        // before the first transition
};

// "2026-08-14 17:30 Europe/Berlin" ("… UTC" without a zone): for people, in notices.
std::string FormatLocalTime(Time utc, const TimeZone* tz);

}  // namespace loopwarden
