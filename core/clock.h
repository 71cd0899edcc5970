#pragma once
// The injected clock: Envoy's TimeSource idea with Seastar's manual_clock::advance.
//
// Schedule time (poll intervals, mark deadlines, backoff, simulated activity) goes
// through a Clock, never std::chrono::*::now() directly, so tests move time by hand and
// the simulator and benchmarks run a day in minutes. Network I/O timeouts are real time
// (Beast's stream timers) and do not go through the Clock.
//
// All clocks are used from one io_context thread.

#include <boost/asio/awaitable.hpp>
#include <memory>
#include <optional>
#include <vector>

#include "core/time.h"

namespace loopwarden {

namespace asio = boost::asio;

class Clock {
 public:
  virtual ~Clock() = default;
  virtual Time Now() const = 0;
  // Completes once Now() >= deadline (at once if it already is). Throws
  // boost::system::system_error(operation_aborted) when the awaiting coroutine's
  // cancellation slot fires, as Asio's own waits do.
  virtual asio::awaitable<void> SleepUntil(Time deadline) = 0;
  asio::awaitable<void> SleepFor(Duration d);
  // Real seconds per clock second: 1 for real time, 1/N for a clock N times faster.
  // Lets callers turn a clock-time budget into a real-time I/O timeout.
  virtual double RealPerClockSecond() const { return 1.0; }
};

// Wall-clock time. A sleep re-arms if the wall clock moved backwards while it waited.
std::unique_ptr<Clock> MakeRealClock();

struct ScaledClockOptions {
  Time epoch;                  // what the clock reads at `anchor`
  double scale = 1.0;          // clock seconds per real second
  std::optional<Time> anchor;  // the real wall-clock instant of `epoch`; default: now
};

// Runs `scale` times faster than real time from `epoch`. Two processes given the same
// epoch, scale and anchor read the same time, which is how the simulator, the daemon
// and the benchmark harness share one simulated timeline.
class ScaledClock : public Clock {
 public:
  explicit ScaledClock(const ScaledClockOptions& options);
  Time Now() const override;
  asio::awaitable<void> SleepUntil(Time deadline) override;
  double RealPerClockSecond() const override { return 1.0 / scale_; }
  // Jumps forward (the simulator's /_sim/advance). Sleepers notice at their next wake.
  void Jump(Duration d) { offset_ += d; }
  double scale() const { return scale_; }

 private:
  Time epoch_;
  double scale_;
  std::chrono::steady_clock::time_point steady_anchor_;
  Duration offset_{0};
};

// Time moves only in Advance()/Set(). Each sleeper waits on its own never-expiring
// steady_timer; Advance cancels the due ones in deadline order, so they resume in that
// order. Drain the io_context after advancing to run them.
class ManualClock : public Clock {
 public:
  explicit ManualClock(Time start) : now_(start) {}
  Time Now() const override { return now_; }
  asio::awaitable<void> SleepUntil(Time deadline) override;
  void Advance(Duration d);
  void Set(Time t);
  // Sleepers still waiting.
  size_t sleepers() const { return waiters_.size(); }
  // The earliest pending deadline, if any sleeper waits.
  std::optional<Time> NextDeadline() const;

 private:
  struct Waiter;
  void Fire();
  Time now_;
  std::vector<Waiter*> waiters_;
};

}  // namespace loopwarden
