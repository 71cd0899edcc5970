#include <doctest/doctest.h>

#include <sstream>

#include "core/log.h"
#include "core/secrets.h"

namespace lw = loopwarden;
using namespace std::chrono_literals;

TEST_CASE("log lines are JSON objects with ts, level, msg and typed fields") {
  lw::Logger log;
  log.set_journal_prefix(false);
  const lw::Time ts = lw::ParseTime("2026-08-01T09:00:00.250Z").value();
  std::string line = log.Format(ts, lw::LogLevel::kWarn, "poll failed",
                                {{"provider", "baseten-prod"}, {"attempt", 3}, {"partial", true}, {"after", 90s}});
  CHECK(line ==
        R"({"ts":"2026-08-01T09:00:00.250Z","level":"warn","msg":"poll failed","provider":"baseten-prod","attempt":3,"partial":true,"after":"1m30s"})");
}

TEST_CASE("text format and journald priority prefix") {
  lw::Logger log;
  log.set_format(lw::LogFormat::kText);
  log.set_journal_prefix(true);
  const lw::Time ts = lw::ParseTime("2026-08-01T09:00:00Z").value();
  CHECK(log.Format(ts, lw::LogLevel::kError, "act failed", {{"reason", "http 500"}}) ==
        "<3>2026-08-01T09:00:00.000Z error act failed reason=\"http 500\"");
}

TEST_CASE("no registered secret survives into a log line, wherever it was put") {
  lw::RegisterSecret("sk-marker-0123456789");
  lw::RegisterSecret("https://hooks.slack.com/services/T000/B000/XXXXSECRETXXXX");
  lw::Logger log;
  log.set_journal_prefix(false);
  std::ostringstream out;
  log.set_output(&out);
  log.Error("request to https://api.baseten.co failed with key sk-marker-0123456789",
            {{"url", "https://hooks.slack.com/services/T000/B000/XXXXSECRETXXXX"},
             {"target", "/services/T000/B000/XXXXSECRETXXXX"}});
  const std::string s = out.str();
  CHECK(s.find("sk-marker") == std::string::npos);
  CHECK(s.find("XXXXSECRETXXXX") == std::string::npos);
  CHECK(s.find("[REDACTED]") != std::string::npos);
  CHECK_FALSE(lw::ContainsSecret(s));
}

TEST_CASE("invalid UTF-8 and control characters still give valid JSON") {
  lw::Logger log;
  log.set_journal_prefix(false);
  std::string line = log.Format(lw::Time{}, lw::LogLevel::kInfo, std::string("bad \xff byte\n\x01"), {});
  CHECK(line.find("bad \xEF\xBF\xBD byte\\n\\u0001") != std::string::npos);
}

TEST_CASE("levels filter") {
  lw::Logger log;
  log.set_level(lw::LogLevel::kWarn);
  std::ostringstream out;
  log.set_output(&out);
  log.Info("hidden");
  log.Warn("shown");
  CHECK(out.str().find("hidden") == std::string::npos);
  CHECK(out.str().find("shown") != std::string::npos);
  CHECK(lw::ParseLogLevel("loud").status().message() == "unknown log level 'loud' (one of debug, info, warn, error)");
}
