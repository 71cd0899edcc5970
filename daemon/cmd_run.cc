// `loopwarden run` and `loopwarden plan`: flags to options.
#include <ostream>

#include "daemon/commands.h"
#include "daemon/daemon.h"

namespace loopwarden::cli {

bool TimeFlags(const Args& args, std::optional<ScaledClockOptions>& out, std::ostream& err) {
  if (!args.Has("--time-scale") && !args.Has("--epoch") && !args.Has("--time-anchor")) return true;
  ScaledClockOptions o;
  o.scale = std::atof(args.Get("--time-scale", "1").c_str());
  if (!(o.scale > 0)) {
    err << "loopwarden: --time-scale must be a positive number\n";
    return false;
  }
  const Time wall = std::chrono::time_point_cast<Duration>(std::chrono::system_clock::now());
  o.epoch = wall;
  if (args.Has("--epoch")) {
    auto e = ParseTime(args.Get("--epoch"));
    if (!e.ok()) {
      err << "loopwarden: --epoch: " << e.status().message() << "\n";
      return false;
    }
    o.epoch = *e;
  }
  o.anchor = wall;
  if (args.Has("--time-anchor")) {
    char* end = nullptr;
    const std::string v = args.Get("--time-anchor");
    const double a = std::strtod(v.c_str(), &end);
    if (end == v.c_str() || *end != '\0') {
      err << "loopwarden: --time-anchor must be a Unix time in seconds, not '" << v << "'\n";
      return false;
    }
    o.anchor = FromUnixMicros(static_cast<int64_t>(a * 1e6));
  }
  out = o;
  return true;
}

int CmdRun(const Args& args, std::ostream&, std::ostream& err) {
  daemon::RunOptions o;
  o.config_path = ConfigPath(args);
  o.once = args.Has("--once");
  if (!TimeFlags(args, o.time, err)) return kExitUsage;
  return daemon::RunDaemon(o, err);
}

int CmdPlan(const Args& args, std::ostream& out, std::ostream& err) {
  daemon::PlanOptions o;
  o.config_path = ConfigPath(args);
  o.json = args.Has("--json");
  if (!TimeFlags(args, o.time, err)) return kExitUsage;
  return daemon::RunPlan(o, out, err);
}

}  // namespace loopwarden::cli
