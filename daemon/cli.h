#pragma once
// The `loopwarden` command line: subcommands, flags and exit codes.
//
// Exit codes (CONVENTIONS.md §6.3): 0 ok; 1 runtime failure; 2 usage error, and for
// `plan` "something would act" (terraform's -detailed-exitcode); 78 configuration
// error (EX_CONFIG, which systemd's RestartPreventExitStatus=78 does not restart).

#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace loopwarden::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitChanges = 2;
inline constexpr int kExitConfig = 78;

// Parsed arguments: the subcommand, its positional arguments and its flags.
struct Args {
  std::string command;
  std::vector<std::string> positional;
  std::map<std::string, std::string> flags;  // "--since" -> "7d"; boolean flags -> "true"
  bool Has(const std::string& f) const { return flags.count(f) > 0; }
  std::string Get(const std::string& f, const std::string& fallback = "") const;
};

// Parses argv. Unknown commands or flags, and missing flag values, are usage errors
// whose message names the offender.
struct ParseOutcome {
  std::optional<Args> args;
  std::string error;
};
ParseOutcome ParseArgs(int argc, const char* const* argv);

// Runs the command line; returns the process exit code. Output goes to `out`,
// diagnostics to `err`.
int Main(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

std::string Usage();
// One command's help (`loopwarden help run`, `loopwarden run --help`); nullopt if no such command.
std::optional<std::string> CommandUsage(std::string_view name);

}  // namespace loopwarden::cli
