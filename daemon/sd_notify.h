#pragma once
// The systemd notify protocol over $NOTIFY_SOCKET, without libsystemd (sd_notify(3) and
// its self-contained example): READY=1, RELOADING=1 with MONOTONIC_USEC, STOPPING=1,
// WATCHDOG=1, STATUS=…. A no-op when $NOTIFY_SOCKET is unset.

#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"
#include "core/time.h"

namespace loopwarden::daemon {

class SdNotifier {
 public:
  // Reads $NOTIFY_SOCKET, $WATCHDOG_USEC and $WATCHDOG_PID.
  SdNotifier();
  bool enabled() const { return !socket_.empty(); }
  Status Send(std::string_view message) const;
  Status Ready(std::string_view status = {}) const;
  Status Reloading() const;
  Status Stopping() const;
  Status Watchdog() const { return Send("WATCHDOG=1"); }
  // Half of WATCHDOG_USEC when the watchdog is meant for this process.
  std::optional<Duration> watchdog_interval() const { return watchdog_; }

 private:
  std::string socket_;
  std::optional<Duration> watchdog_;
};

}  // namespace loopwarden::daemon
