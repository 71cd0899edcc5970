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
  std::string_view synopsis;  // after "loopwarden <name>"
  std::string_view details;   // flags, behaviour and exit codes of this command
};

const std::vector<CommandSpec>& Commands() {
  static const std::vector<CommandSpec> kCommands = {
      {"run", "the daemon: poll, decide, act, notify, export", {"--time-scale", "--epoch", "--time-anchor"},
       {"--once"}, CmdRun, "[--once] [-c PATH]",
       "  --once                one cycle (poll, decide, act, notify), then exit: for cron\n"
       "\nRuns until SIGTERM or SIGINT; SIGHUP reloads the configuration. One writer per\n"
       "database: a second run on the same state_path is refused, naming the holder's pid.\n"
       "On a PostgreSQL state_path, replicas elect a leader: the others stand by, and\n"
       "--once acts only when none leads.\n"
       "Exit codes: 0 stopped cleanly, 1 failure (with --once: the cycle failed), 75 the\n"
       "leader lease was lost (start again: it stands by), 78 configuration error.\n"},
      {"plan", "one poll; print what would happen and why; change nothing (exit 2 if something would act)",
       {"--time-scale", "--epoch", "--time-anchor"}, {"--json"}, CmdPlan, "[--json] [-c PATH]",
       "  --json                the decisions as JSON instead of a table\n"
       "\nPolls every provider once and evaluates the policies against the database without\n"
       "writing to it or calling anything that changes a resource.\n"
       "Exit codes: 0 nothing would act, 2 something would act, 1 no provider could be listed, 78 configuration error.\n"},
      {"check", "validate the configuration file", {}, {"--explain", "--schema"}, CmdCheck,
       "[--explain | --schema] [-c PATH]",
       "  --explain             print every policy as loopwarden resolved it (defaults filled in)\n"
       "  --schema              print the configuration's JSON Schema (for editors and CI)\n"
       "\nReads the file and every secret it names; contacts nothing.\n"
       "Exit codes: 0 valid, 78 invalid (each error names its line and column).\n"},
      {"status", "resources, idle ones and pending marks, from the database",
       {"--time-scale", "--epoch", "--time-anchor"}, {"--json"}, CmdStatus, "[--json] [-c PATH]",
       "  --json                JSON instead of text\n"
       "\nReads the database only (works beside a running daemon).\n"},
      {"report", "spend, idle spend, actions and savings",
       {"--since", "--by", "--time-scale", "--epoch", "--time-anchor"}, {"--json"}, CmdReport,
       "[--since 7d] [--by provider|account|kind|model|owner|team|label:KEY] [--json] [-c PATH]",
       "  --since DURATION      the period to report, back from now (default 7d)\n"
       "  --by FIELD            group spend by provider (default), account, kind, model, owner, team\n"
       "                        (Baseten team_name) or label:KEY (a label's or annotation's value)\n"
       "  --json                JSON instead of text\n"
       "\nReads the database only (works beside a running daemon).\n"},
      {"snooze", "exempt a resource for a while, through the running daemon",
       {"--for", "--reason", "--policy", "--by", "--address"}, {}, CmdSnooze,
       "RESOURCE --for 2h --reason TEXT [--policy NAME] [--by WHO] [--address HOST:PORT]",
       "  RESOURCE              provider/kind/id, as `status` prints it\n"
       "  --for DURATION        how long the exemption lasts\n"
       "  --reason TEXT         why (kept with the snooze and shown in notices)\n"
       "  --policy NAME         only this policy (default: every policy)\n"
       "  --by WHO              who asked (default: $USER)\n"
       "  --address HOST:PORT   the daemon's admin address (default: the configuration's listen)\n"
       "\nSends the snooze to the running daemon with the admin token from the configuration.\n"},
      {"version", "print version, revision and compiler", {}, {}, CmdVersion, "", ""},
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
      "  -h, --help            this help; `loopwarden help COMMAND` or `COMMAND --help` for one command\n"
      "\ncommand flags:\n"
      "  run     --once (one cycle, then exit)\n"
      "  plan    --json\n"
      "  check   --explain (print the resolved policies), --schema (print the JSON Schema)\n"
      "  status  --json\n"
      "  report  --since 7d, --by provider|account|kind|model|owner|team|label:KEY, --json\n"
      "  snooze  RESOURCE --for 2h --reason TEXT [--policy NAME] [--by WHO] [--address HOST:PORT]\n"
      "  run, plan, status and report also take --time-scale N --epoch T [--time-anchor UNIX]\n"
      "  to share the simulator's accelerated clock\n"
      "\nexit codes: 0 ok, 1 failure, 2 usage (plan: something would act), 78 configuration error\n";
  return u;
}

std::optional<std::string> CommandUsage(std::string_view name) {
  for (const CommandSpec& c : Commands()) {
    if (c.name != name) continue;
    std::string u = "usage: loopwarden " + std::string(c.name) + (c.synopsis.empty() ? "" : " ") + std::string(c.synopsis) +
                    "\n\n" + std::string(c.summary) + "\n\nflags:\n" + std::string(c.details);
    if (std::find(c.value_flags.begin(), c.value_flags.end(), "--time-scale") != c.value_flags.end()) {
      u += "\n  --time-scale N --epoch T [--time-anchor UNIX]   share the simulator's accelerated clock\n";
    }
    u += "\nflags for every command: -c/--config PATH, --log-level LEVEL, --log-format json|text, -h/--help\n";
    return u;
  }
  return std::nullopt;
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
    if (a.size() > 1) args.positional.push_back(a[1]);  // help COMMAND
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
  if (args.command == "help" && !args.positional.empty()) {
    const std::string& name = args.positional.front();
    if (auto u = CommandUsage(name)) {
      out << *u;
      return kExitOk;
    }
    std::vector<std::string> names;
    for (const CommandSpec& c : Commands()) names.emplace_back(c.name);
    err << "loopwarden: no command '" << name << "'";
    if (auto s = Suggest(name, names)) err << " (did you mean '" << *s << "'?)";
    err << "\n\n" << Usage();
    return kExitUsage;
  }
  if (args.command == "help") {
    out << Usage();
    return kExitOk;
  }
  if (args.Has("--help")) {
    out << CommandUsage(args.command).value_or(Usage());
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
