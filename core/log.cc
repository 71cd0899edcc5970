#include "core/log.h"

#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "core/secrets.h"
#include "core/strings.h"

namespace loopwarden {
namespace {

std::string_view LevelName(LogLevel l) {
  switch (l) {
    case LogLevel::kDebug: return "debug";
    case LogLevel::kInfo: return "info";
    case LogLevel::kWarn: return "warn";
    case LogLevel::kError: return "error";
  }
  return "info";
}

// syslog priorities journald understands.
int JournalPriority(LogLevel l) {
  switch (l) {
    case LogLevel::kDebug: return 7;
    case LogLevel::kInfo: return 6;
    case LogLevel::kWarn: return 4;
    case LogLevel::kError: return 3;
  }
  return 6;
}

bool NeedsQuoting(std::string_view v) {
  if (v.empty()) return true;
  for (char c : v) {
    if (c == ' ' || c == '"' || c == '=' || static_cast<unsigned char>(c) < 0x20) return true;
  }
  return false;
}

}  // namespace

Result<LogLevel> ParseLogLevel(std::string_view s) {
  if (s == "debug") return LogLevel::kDebug;
  if (s == "info") return LogLevel::kInfo;
  if (s == "warn" || s == "warning") return LogLevel::kWarn;
  if (s == "error") return LogLevel::kError;
  return InvalidArgument("unknown log level '" + std::string(s) + "' (one of debug, info, warn, error)");
}

Result<LogFormat> ParseLogFormat(std::string_view s) {
  if (s == "json") return LogFormat::kJson;
  if (s == "text") return LogFormat::kText;
  return InvalidArgument("unknown log format '" + std::string(s) + "' (one of json, text)");
}

LogField::LogField(std::string_view key, long long v) : key_(key), value_(std::to_string(v)), quoted_(false) {}

LogField::LogField(std::string_view key, double v) : key_(key), quoted_(false) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  value_ = buf;
}

LogField::LogField(std::string_view key, Duration d) : key_(key), value_(FormatDuration(d)), quoted_(true) {}
LogField::LogField(std::string_view key, Time t) : key_(key), value_(FormatTime(t)), quoted_(true) {}

Logger::Logger() : out_(&std::cout), journal_prefix_(std::getenv("JOURNAL_STREAM") != nullptr) {}

Logger& Logger::Default() {
  static Logger* l = new Logger();  // never destroyed: usable from atexit and signal paths
  return *l;
}

std::string Logger::Format(Time ts, LogLevel level, std::string_view msg,
                           std::initializer_list<LogField> fields) const {
  std::string line;
  if (format_ == LogFormat::kJson) {
    line = "{\"ts\":\"" + FormatTimeMillis(ts) + "\",\"level\":\"" + std::string(LevelName(level)) +
           "\",\"msg\":" + JsonQuote(msg);
    for (const LogField& f : fields) {
      line += "," + JsonQuote(f.key()) + ":";
      line += f.quoted() ? JsonQuote(f.value()) : f.value();
    }
    line += "}";
  } else {
    line = FormatTimeMillis(ts) + " " + ToLower(LevelName(level)) + " " + std::string(msg);
    for (const LogField& f : fields) {
      line += " " + f.key() + "=";
      line += NeedsQuoting(f.value()) ? JsonQuote(f.value()) : f.value();
    }
  }
  line = Redact(line);
  if (journal_prefix_) line = "<" + std::to_string(JournalPriority(level)) + ">" + line;
  return line;
}

void Logger::Log(LogLevel level, std::string_view msg, std::initializer_list<LogField> fields) {
  if (!Enabled(level)) return;
  // Log timestamps are real wall time even under a ScaledClock: they say when a person
  // could have seen the line, and simulated time is logged as a field where it matters.
  Time now = std::chrono::time_point_cast<Duration>(std::chrono::system_clock::now());
  std::string line = Format(now, level, msg, fields);
  std::lock_guard lock(mu_);
  *out_ << line << '\n';
  out_->flush();
}

}  // namespace loopwarden
