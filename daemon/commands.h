#pragma once
// One function per subcommand; cli.cc parses and dispatches. Each returns an exit code.

#include <iosfwd>
#include <optional>

#include "core/clock.h"

#include "daemon/cli.h"

namespace loopwarden::cli {

int CmdCheck(const Args& args, std::ostream& out, std::ostream& err);
int CmdVersion(const Args& args, std::ostream& out, std::ostream& err);
int CmdRun(const Args& args, std::ostream& out, std::ostream& err);
int CmdPlan(const Args& args, std::ostream& out, std::ostream& err);
int CmdStatus(const Args& args, std::ostream& out, std::ostream& err);
int CmdReport(const Args& args, std::ostream& out, std::ostream& err);
int CmdSnooze(const Args& args, std::ostream& out, std::ostream& err);

// --time-scale N --epoch T [--time-anchor UNIX]: the simulator's accelerated clock.
// False (after printing why) when a value is bad.
bool TimeFlags(const Args& args, std::optional<ScaledClockOptions>& out, std::ostream& err);

// The configuration path: --config, else $LOOPWARDEN_CONFIG, else the packaged default.
std::string ConfigPath(const Args& args);

}  // namespace loopwarden::cli
