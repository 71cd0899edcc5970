#pragma once
// Structured logging: one JSON object per line ({"ts","level","msg",...fields}) on
// stdout by default, or logfmt-like text on request. Every line passes through the
// secret redactor before it is written, so no configured secret can be printed by any
// log call, whatever the caller put in a message or field.
//
// Under systemd ($JOURNAL_STREAM set) each line starts with "<N>" so journald records
// the priority; the JSON after it stays intact.

#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <mutex>
#include <string>
#include <string_view>

#include "core/status.h"
#include "core/time.h"

namespace loopwarden {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3 };
enum class LogFormat { kJson, kText };

Result<LogLevel> ParseLogLevel(std::string_view s);
Result<LogFormat> ParseLogFormat(std::string_view s);

// One key/value; the value is rendered at construction.
class LogField {
 public:
  LogField(std::string_view key, std::string_view v) : key_(key), value_(v), quoted_(true) {}
  LogField(std::string_view key, const std::string& v) : LogField(key, std::string_view(v)) {}
  LogField(std::string_view key, const char* v) : LogField(key, std::string_view(v)) {}
  LogField(std::string_view key, int v) : LogField(key, static_cast<long long>(v)) {}
  LogField(std::string_view key, unsigned v) : LogField(key, static_cast<long long>(v)) {}
  LogField(std::string_view key, long v) : LogField(key, static_cast<long long>(v)) {}
  LogField(std::string_view key, unsigned long v) : LogField(key, static_cast<long long>(v)) {}
  LogField(std::string_view key, long long v);
  LogField(std::string_view key, double v);
  LogField(std::string_view key, bool v) : key_(key), value_(v ? "true" : "false"), quoted_(false) {}
  LogField(std::string_view key, Duration d);
  LogField(std::string_view key, Time t);
  LogField(std::string_view key, const Status& s) : LogField(key, s.ToString()) {}

  const std::string& key() const { return key_; }
  const std::string& value() const { return value_; }
  bool quoted() const { return quoted_; }

 private:
  std::string key_;
  std::string value_;
  bool quoted_;
};

class Logger {
 public:
  Logger();
  // The process-wide logger every module writes to.
  static Logger& Default();

  void set_level(LogLevel l) { level_ = l; }
  void set_format(LogFormat f) { format_ = f; }
  // Where lines go; the stream must outlive the logger's use. Default std::cout.
  void set_output(std::ostream* out) { out_ = out; }
  // Prefix "<N>" priorities for journald. Default: whether $JOURNAL_STREAM is set.
  void set_journal_prefix(bool on) { journal_prefix_ = on; }
  bool Enabled(LogLevel l) const { return l >= level_; }

  void Log(LogLevel level, std::string_view msg, std::initializer_list<LogField> fields = {});
  void Debug(std::string_view msg, std::initializer_list<LogField> f = {}) { Log(LogLevel::kDebug, msg, f); }
  void Info(std::string_view msg, std::initializer_list<LogField> f = {}) { Log(LogLevel::kInfo, msg, f); }
  void Warn(std::string_view msg, std::initializer_list<LogField> f = {}) { Log(LogLevel::kWarn, msg, f); }
  void Error(std::string_view msg, std::initializer_list<LogField> f = {}) { Log(LogLevel::kError, msg, f); }

  // Formats one line without writing it (for tests and the audit log).
  std::string Format(Time ts, LogLevel level, std::string_view msg, std::initializer_list<LogField> fields) const;

 private:
  LogLevel level_ = LogLevel::kInfo;
  LogFormat format_ = LogFormat::kJson;
  std::ostream* out_;
  bool journal_prefix_;
  std::mutex mu_;
};

inline Logger& Log() { return Logger::Default(); }

}  // namespace loopwarden
