#include <doctest/doctest.h>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <vector>

#include "core/clock.h"

namespace lw = loopwarden;
namespace asio = boost::asio;
using namespace std::chrono_literals;

namespace {

void Drain(asio::io_context& ioc) {
  ioc.restart();
  ioc.poll();
}

asio::awaitable<void> SleepAndRecord(lw::Clock& clock, lw::Time deadline, int id, std::vector<int>& woke,
                                     std::vector<lw::Time>& at) {
  co_await clock.SleepUntil(deadline);
  woke.push_back(id);
  at.push_back(clock.Now());
}

const lw::Time kStart = lw::ParseTime("2026-08-01T09:00:00Z").value();

}  // namespace

TEST_CASE("ManualClock moves only on Advance and wakes sleepers in deadline order") {
  asio::io_context ioc;
  lw::ManualClock clock(kStart);
  std::vector<int> woke;
  std::vector<lw::Time> at;
  // Spawned out of deadline order on purpose.
  asio::co_spawn(ioc, SleepAndRecord(clock, kStart + 30s, 3, woke, at), asio::detached);
  asio::co_spawn(ioc, SleepAndRecord(clock, kStart + 10s, 1, woke, at), asio::detached);
  asio::co_spawn(ioc, SleepAndRecord(clock, kStart + 20s, 2, woke, at), asio::detached);
  Drain(ioc);
  CHECK(woke.empty());
  CHECK(clock.sleepers() == 3);
  CHECK(clock.NextDeadline() == kStart + 10s);

  clock.Advance(9s);
  Drain(ioc);
  CHECK(woke.empty());

  clock.Advance(25s);  // passes all three deadlines at once
  Drain(ioc);
  CHECK(woke == std::vector<int>{1, 2, 3});
  CHECK(clock.sleepers() == 0);
  CHECK(clock.Now() == kStart + 34s);
}

TEST_CASE("ManualClock sleep in the past completes at once") {
  asio::io_context ioc;
  lw::ManualClock clock(kStart);
  std::vector<int> woke;
  std::vector<lw::Time> at;
  asio::co_spawn(ioc, SleepAndRecord(clock, kStart - 1s, 7, woke, at), asio::detached);
  Drain(ioc);
  CHECK(woke == std::vector<int>{7});
}

TEST_CASE("cancelling a ManualClock sleeper ends it with operation_aborted and leaves no waiter") {
  asio::io_context ioc;
  lw::ManualClock clock(kStart);
  asio::cancellation_signal signal;
  bool aborted = false;
  asio::co_spawn(ioc, clock.SleepUntil(kStart + 1h),
                 asio::bind_cancellation_slot(signal.slot(), [&](std::exception_ptr e) {
                   try {
                     if (e) std::rethrow_exception(e);
                   } catch (const boost::system::system_error& se) {
                     aborted = se.code() == asio::error::operation_aborted;
                   }
                 }));
  Drain(ioc);
  CHECK(clock.sleepers() == 1);
  // Coroutines pass only terminal cancellation through unless they opt in to more.
  signal.emit(asio::cancellation_type::terminal);
  Drain(ioc);
  CHECK(aborted);
  CHECK(clock.sleepers() == 0);
}

TEST_CASE("ScaledClock runs N times faster from its epoch, and shares a timeline through the anchor") {
  const lw::Time anchor = std::chrono::time_point_cast<lw::Duration>(std::chrono::system_clock::now());
  lw::ScaledClock a({.epoch = kStart, .scale = 3600, .anchor = anchor});
  lw::ScaledClock b({.epoch = kStart, .scale = 3600, .anchor = anchor});
  // Read close together in real time: the two clocks agree within a few simulated seconds.
  const auto ta = a.Now();
  const auto tb = b.Now();
  CHECK(std::chrono::abs(ta - tb) < 5s);
  CHECK(ta >= kStart);
  CHECK(a.RealPerClockSecond() == doctest::Approx(1.0 / 3600));

  // A simulated minute at 3600x is about 17 ms of real time: bounded by run_for.
  asio::io_context ioc;
  std::vector<int> woke;
  std::vector<lw::Time> at;
  const lw::Time deadline = a.Now() + 60s;
  asio::co_spawn(ioc, SleepAndRecord(a, deadline, 1, woke, at), asio::detached);
  ioc.run_for(2s);
  REQUIRE(woke.size() == 1);
  CHECK(at[0] >= deadline);

  a.Jump(1h);
  CHECK(a.Now() - b.Now() >= 59min);
}

TEST_CASE("the real clock sleeps until its deadline and not before") {
  auto clock = lw::MakeRealClock();
  asio::io_context ioc;
  std::vector<int> woke;
  std::vector<lw::Time> at;
  const lw::Time deadline = clock->Now() + 20ms;
  asio::co_spawn(ioc, SleepAndRecord(*clock, deadline, 1, woke, at), asio::detached);
  ioc.run_for(2s);
  REQUIRE(woke.size() == 1);
  CHECK(at[0] >= deadline);
}
