#include "daemon/cli.h"

#include <algorithm>
#include <cstdlib>
#include <ostream>
#include <set>

#include "core/log.h"
#include "core/strings.h"
#include "daemon/commands.h"

namespace loopwarden::cli {
namespace {

struct CommandSpec {
  std::string_view name;
  std::string_view summary;
  std::vector<std::string_view> value_flags;
  std::vector<std::string_view> bool_flags;
  int (*fn)(const Args&, std::ostream&, std::ostream&);
};

const std::vector<CommandSpec>& Commands() {
  static const std::vector<CommandSpec> kCommands = {
      {"run", "the daemon: poll, decide, act, notify, export", {"--time-scale", "--epoch", "--time-anchor"},
       {"--once"}, CmdRun},
      {"plan", "one poll; print what would happen and why; change nothing (exit 2 if something would act)",
       {"--time-scale", "--epoch", "--time-anchor"}, {"--json"}, CmdPlan},
      {"check", "validate the configuration file", {}, {"--explain", "--schema"}, CmdCheck},
      {"status", "resources, idle ones and pending marks, from the database",
       {"--time-scale", "--epoch", "--time-anchor"}, {"--json"}, CmdStatus},
      {"report", "spend, idle spend, actions and savings",
       {"--since", "--by", "--time-scale", "--epoch", "--time-anchor"}, {"--json"}, CmdReport},
      {"snooze", "exempt a resource for a while, through the running daemon",
       {"--for", "--reason", "--policy", "--by", "--address"}, {}, CmdSnooze},
      {"version", "print version, revision and compiler", {}, {}, CmdVersion},
  };
  return kCommands;
}

const std::vector<std::string_view> kCommonValueFlags = {"--config", "--log-level", "--log-format"};

}  // namespace

std::string Args::Get(const std::string& f, const std::string& fallback) const {
  auto it = flags.find(f);
  return it == flags.end() ? fallback : it->second;
}

std::string Usage() {
  std::string u =
      "usage: loopwarden <command> [flags]\n\n"
      "commands:\n";
  for (const CommandSpec& c : Commands()) {
    u += "  " + std::string(c.name) + std::string(10 - c.name.size(), ' ') + std::string(c.summary) + "\n";
  }
  u +=
      "\nflags for every command:\n"
      "  -c, --config PATH     configuration file (default $LOOPWARDEN_CONFIG or /etc/loopwarden/loopwarden.yaml)\n"
      "  --log-level LEVEL     debug, info (default), warn, error\n"
      "  --log-format FORMAT   json (default) or text\n"
      "  -h, --help            this help\n"
      "\ncommand flags:\n"
      "  run     --once (one cycle, then exit)\n"
      "  plan    --json\n"
      "  check   --explain (print the resolved policies), --schema (print the JSON Schema)\n"
      "  status  --json\n"
      "  report  --since 7d, --by provider|account|kind|model|owner, --json\n"
      "  snooze  RESOURCE --for 2h --reason TEXT [--policy NAME] [--by WHO] [--address HOST:PORT]\n"
      "  run, plan, status and report also take --time-scale N --epoch T [--time-anchor UNIX]\n"
      "  to share the simulator's accelerated clock\n"
      "\nexit codes: 0 ok, 1 failure, 2 usage (plan: something would act), 78 configuration error\n";
  return u;
}

ParseOutcome ParseArgs(int argc, const char* const* argv) {
  ParseOutcome r;
  std::vector<std::string> a(argv + 1, argv + argc);
  if (a.empty()) {
    r.error = "missing command";
    return r;
  }
  Args args;
  if (a[0] == "-h" || a[0] == "--help" || a[0] == "help") {
    args.command = "help";
    r.args = args;
    return r;
  }
  if (a[0] == "--version") a[0] = "version";
  const CommandSpec* spec = nullptr;
  for (const CommandSpec& c : Commands()) {
    if (c.name == a[0]) spec = &c;
  }
  if (spec == nullptr) {
    std::vector<std::string> names;
    for (const CommandSpec& c : Commands()) names.emplace_back(c.name);
    r.error = "unknown command '" + a[0] + "'";
    if (auto s = Suggest(a[0], names)) r.error += " (did you mean '" + *s + "'?)";
    return r;
  }
  args.command = a[0];
  auto is_in = [](const std::vector<std::string_view>& v, std::string_view f) {
    return std::find(v.begin(), v.end(), f) != v.end();
  };
  for (size_t i = 1; i < a.size(); ++i) {
    std::string tok = a[i];
    if (tok == "--") {
      for (++i; i < a.size(); ++i) args.positional.push_back(a[i]);
      break;
    }
    if (tok.size() < 2 || tok[0] != '-') {
      args.positional.push_back(tok);
      continue;
    }
    if (tok == "-c") tok = "--config";
    if (tok == "-h") tok = "--help";
    std::string value;
    bool has_value = false;
    if (size_t eq = tok.find('='); eq != std::string::npos) {
      value = tok.substr(eq + 1);
      tok = tok.substr(0, eq);
      has_value = true;
    }
    if (tok == "--help") {
      args.flags["--help"] = "true";
      continue;
    }
    if (is_in(spec->bool_flags, tok)) {
      if (has_value) {
        r.error = "flag " + tok + " takes no value";
        return r;
      }
      args.flags[tok] = "true";
      continue;
    }
    if (is_in(spec->value_flags, tok) || is_in(kCommonValueFlags, tok)) {
      if (!has_value) {
        if (i + 1 >= a.size()) {
          r.error = "flag " + tok + " needs a value";
          return r;
        }
        value = a[++i];
      }
      args.flags[tok] = value;
      continue;
    }
    std::vector<std::string> known;
    for (auto f : spec->value_flags) known.emplace_back(f);
    for (auto f : spec->bool_flags) known.emplace_back(f);
    for (auto f : kCommonValueFlags) known.emplace_back(f);
    r.error = "unknown flag '" + tok + "' for " + args.command;
    if (auto s = Suggest(tok, known)) r.error += " (did you mean '" + *s + "'?)";
    return r;
  }
  r.args = std::move(args);
  return r;
}

int Main(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  ParseOutcome parsed = ParseArgs(argc, argv);
  if (!parsed.args) {
    err << "loopwarden: " << parsed.error << "\n\n" << Usage();
    return kExitUsage;
  }
  const Args& args = *parsed.args;
  if (args.command == "help" || args.Has("--help")) {
    out << Usage();
    return kExitOk;
  }
  Logger& log = Logger::Default();
  if (args.Has("--log-level")) {
    auto l = ParseLogLevel(args.Get("--log-level"));
    if (!l.ok()) {
      err << "loopwarden: --log-level: " << l.status().message() << "\n";
      return kExitUsage;
    }
    log.set_level(*l);
  }
  if (args.Has("--log-format")) {
    auto f = ParseLogFormat(args.Get("--log-format"));
    if (!f.ok()) {
      err << "loopwarden: --log-format: " << f.status().message() << "\n";
      return kExitUsage;
    }
    log.set_format(*f);
  }
  for (const CommandSpec& c : Commands()) {
    if (c.name == args.command) return c.fn(args, out, err);
  }
  return kExitUsage;
}

std::string ConfigPath(const Args& args) {
  if (args.Has("--config")) return args.Get("--config");
  if (const char* env = std::getenv("LOOPWARDEN_CONFIG"); env && *env) return env;
  return "/etc/loopwarden/loopwarden.yaml";
}

}  // namespace loopwarden::cli
