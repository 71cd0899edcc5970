#include <doctest/doctest.h>

#include <boost/json/parse.hpp>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <vector>

#include "core/log.h"
#include "core/strings.h"
#include "daemon/cli.h"
#include "tests/store/fixtures.h"
#include "tests/testing/temp_dir.h"

namespace cli = loopwarden::cli;

namespace {

struct Outcome {
  int code;
  std::string out;
  std::string err;
};

Outcome Run(std::vector<const char*> args) {
  args.insert(args.begin(), "loopwarden");
  std::ostringstream out, err;
  int code = cli::Main(static_cast<int>(args.size()), args.data(), out, err);
  return {code, out.str(), err.str()};
}

}  // namespace

TEST_CASE("exit codes follow the documented scheme") {
  CHECK(Run({}).code == cli::kExitUsage);
  auto unknown = Run({"rnu"});
  CHECK(unknown.code == cli::kExitUsage);
  CHECK(unknown.err.find("unknown command 'rnu' (did you mean 'run'?)") != std::string::npos);
  auto flag = Run({"check", "--explian"});
  CHECK(flag.code == cli::kExitUsage);
  CHECK(flag.err.find("unknown flag '--explian' for check (did you mean '--explain'?)") != std::string::npos);
  CHECK(Run({"report", "--since"}).code == cli::kExitUsage);
  CHECK(Run({"version"}).code == cli::kExitOk);
  CHECK(Run({"--help"}).code == cli::kExitOk);
  CHECK(Run({"check", "--config", "tests/daemon/testdata/bad/02-wrong-type.yaml"}).code == cli::kExitConfig);
  CHECK(Run({"check", "--log-level", "loud"}).code == cli::kExitUsage);
}

TEST_CASE("check prints every error and a FAILED summary, or SUCCESS with --explain") {
  setenv("BT_KEY", "bt-cli-test-key", 1);
  auto bad = Run({"check", "-c", "tests/daemon/testdata/bad/14-several-errors.yaml"});
  CHECK(bad.code == cli::kExitConfig);
  CHECK(bad.out == "Checking 'tests/daemon/testdata/bad/14-several-errors.yaml'  FAILED: 4 errors\n");
  CHECK(bad.err.find("poll_interval: must be at least 1s") != std::string::npos);
  CHECK(bad.err.find("max_actions_prcent") != std::string::npos);

  setenv("BASETEN_API_KEY", "k1-abcdef", 1);
  setenv("FIREWORKS_API_KEY", "k2-abcdef", 1);
  setenv("SLACK_WEBHOOK_URL", "https://hooks.slack.com/services/T/B/cli-test", 1);
  setenv("HOOK_SECRET", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", 1);
  setenv("LOOPWARDEN_ADMIN_TOKEN", "cli-test-admin-token", 1);
  auto good = Run({"check", "--config=examples/loopwarden.yaml", "--explain"});
  CHECK(good.code == cli::kExitOk);
  CHECK(good.out.find("Checking 'examples/loopwarden.yaml'  SUCCESS: 2 providers, 2 notifiers, 5 policies, 2 "
                      "exemptions") == 0);
  CHECK(good.out.find("policy idle-dedicated-trainers\n  resource: baseten.run\n  where: mode = dedicated and "
                      "lifecycle = running and idle_for >= 20m\n") != std::string::npos);
  CHECK(good.out.find("dry_run: yes (global)") != std::string::npos);
  auto schema = Run({"check", "--schema"});
  CHECK(schema.code == cli::kExitOk);
  CHECK(schema.out.rfind("{\"$schema\":", 0) == 0);
}

TEST_CASE("per-command help: help COMMAND and COMMAND --help print that command's flags, not the global text") {
  // Issue 18: `help run` and every `<cmd> --help` printed the global usage.
  const std::string global = Run({"--help"}).out;
  for (const char* cmd : {"run", "plan", "check", "status", "report", "snooze"}) {
    CAPTURE(cmd);
    auto help = Run({"help", cmd});
    CHECK(help.code == cli::kExitOk);
    CHECK(help.out.rfind(std::string("usage: loopwarden ") + cmd, 0) == 0);
    CHECK(help.out != global);
    auto flag = Run({cmd, "--help"});
    CHECK(flag.code == cli::kExitOk);
    CHECK(flag.out == help.out);
    CHECK(Run({cmd, "-h"}).out == help.out);
  }
  CHECK(Run({"help", "run"}).out.find("--once") != std::string::npos);
  CHECK(Run({"help", "check"}).out.find("--schema") != std::string::npos);
  CHECK(Run({"report", "--help"}).out.find("--since DURATION") != std::string::npos);
  CHECK(Run({"plan", "--help"}).out.find("2 something would act") != std::string::npos);
  // Every flag a command accepts is in its help.
  CHECK(Run({"help", "snooze"}).out.find("--address HOST:PORT") != std::string::npos);
  auto unknown = Run({"help", "rnu"});
  CHECK(unknown.code == cli::kExitUsage);
  CHECK(unknown.err.find("no command 'rnu' (did you mean 'run'?)") != std::string::npos);
  CHECK(Run({"help"}).out == global);
}

TEST_CASE("report after the daemon stopped: running GPU time is counted up to the last poll, and says so") {
  loopwarden::testing::TempDir dir;
  const std::string db = dir.File("state.db");
  const auto last_poll = std::chrono::time_point_cast<loopwarden::Duration>(std::chrono::system_clock::now()) -
                         std::chrono::hours(20);
  {
    auto s = loopwarden::store::Store::Open({.path = db});
    REQUIRE(s.ok());
    loopwarden::ListedResource r = loopwarden::testing::Run("g8");  // $52 an hour
    r.activity.busy_now = true;
    auto snap = loopwarden::testing::Snap({r});
    REQUIRE((*s)->Ingest({&snap, 1}, last_poll - std::chrono::hours(1), loopwarden::testing::Prices()).ok());
    REQUIRE((*s)->Ingest({&snap, 1}, last_poll, loopwarden::testing::Prices()).ok());
  }
  const std::string cfg = dir.File("lw.yaml");
  {
    std::ofstream(cfg) << "state_path: " << db << "\nproviders:\n  - {name: bt, type: baseten, api_key_env: BT_KEY}\n";
  }
  auto text = Run({"report", "--since", "2d", "-c", cfg.c_str()});
  CHECK(text.code == cli::kExitOk);
  CHECK(text.out.find("Nothing has polled since") != std::string::npos);
  CHECK(text.out.find("$52.00") != std::string::npos);  // one observed hour, not 21
  auto json = Run({"report", "--since", "2d", "--json", "-c", cfg.c_str()});
  CHECK(json.out.find("\"open_counted_until\"") != std::string::npos);
}

TEST_CASE("run with a bad configuration logs each error as its own JSON line, and nothing else on stderr") {
  // Issue 18: the errors were plain text among JSON log lines.
  setenv("BT_KEY", "bt-cli-test-key", 1);
  std::ostringstream log;
  loopwarden::Log().set_output(&log);
  auto r = Run({"run", "-c", "tests/daemon/testdata/bad/14-several-errors.yaml"});
  loopwarden::Log().set_output(&std::cout);
  CHECK(r.code == cli::kExitConfig);
  CHECK(r.err.empty());
  int errors = 0;
  bool summary = false;
  for (const std::string& line : loopwarden::Split(log.str(), '\n')) {
    if (line.empty()) continue;
    CAPTURE(line);
    boost::system::error_code ec;
    auto v = boost::json::parse(line, ec);
    REQUIRE_FALSE(ec);
    const auto& o = v.as_object();
    CHECK(o.at("level").as_string() == "error");
    if (o.at("msg").as_string() == "configuration error") {
      ++errors;
      CHECK(std::string(o.at("error").as_string()).rfind("tests/daemon/testdata/bad/14-several-errors.yaml:", 0) == 0);
    }
    if (o.at("msg").as_string() == "not starting") summary = o.at("errors").as_int64() == 4 && o.at("exit_code").as_int64() == 78;
  }
  CHECK(errors == 4);
  CHECK(summary);
  CHECK(log.str().find("max_actions_prcent") != std::string::npos);
}

TEST_CASE("status names the resources that bill at no known price, loudly, in text and JSON") {
  setenv("BT_KEY", "bt-cli-test-key", 1);
  loopwarden::testing::TempDir dir;
  const std::string db = dir.File("state.db");
  const auto now = std::chrono::time_point_cast<loopwarden::Duration>(std::chrono::system_clock::now());
  {
    auto s = loopwarden::store::Store::Open({.path = db});
    REQUIRE(s.ok());
    loopwarden::ListedResource priced = loopwarden::testing::Run("g8");
    loopwarden::ListedResource unpriced = loopwarden::testing::Run("gb300");
    unpriced.billing.gpu_type = "GB300";
    auto snap = loopwarden::testing::Snap({priced, unpriced});
    REQUIRE((*s)->Ingest({&snap, 1}, now - std::chrono::minutes(5), loopwarden::testing::Prices()).ok());
  }
  const std::string cfg = dir.File("lw.yaml");
  std::ofstream(cfg) << "state_path: " << db << "\nproviders:\n  - {name: bt, type: baseten, api_key_env: BT_KEY}\n";
  auto text = Run({"status", "-c", cfg.c_str()});
  CHECK(text.code == cli::kExitOk);
  CHECK(text.out.find("UNPRICED: 1 resource(s) bill at a price loopwarden does not know") != std::string::npos);
  CHECK(text.out.find("  bt/baseten.run/gb300\n") != std::string::npos);
  CHECK(text.out.find("bt/baseten.run/g8\n") == std::string::npos);
  auto json = Run({"status", "--json", "-c", cfg.c_str()});
  CHECK(json.out.find("\"unpriced\":[\"bt/baseten.run/gb300\"]") != std::string::npos);
}
