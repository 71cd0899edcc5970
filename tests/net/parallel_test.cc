// RunAll: bounded parallelism, and a cancelled caller resumes only after its tasks
// have unwound (they capture the caller's locals by reference).
#include <doctest/doctest.h>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <algorithm>
#include <chrono>
#include <vector>

#include "net/parallel.h"

using namespace loopwarden;
namespace asio = boost::asio;
using namespace std::chrono_literals;

namespace {

// A task that waits on a timer (an hour unless `after` says otherwise), counting how
// many run at once.
net::Task Waiting(int& running, int& most, int& started, int& unwound, std::chrono::milliseconds after = 1h) {
  return [&running, &most, &started, &unwound, after]() -> asio::awaitable<void> {
    ++started;
    most = std::max(most, ++running);
    asio::steady_timer t(co_await asio::this_coro::executor, after);
    boost::system::error_code ec;
    co_await t.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    --running;
    ++unwound;
  };
}

}  // namespace

TEST_CASE("RunAll runs every task, never more at once than asked") {
  asio::io_context ioc;
  int running = 0, most = 0, started = 0, unwound = 0;
  std::vector<net::Task> tasks;
  for (int i = 0; i < 7; ++i) tasks.push_back(Waiting(running, most, started, unwound, 1ms));
  bool done = false;
  asio::co_spawn(ioc, net::RunAll(std::move(tasks), 3), [&](std::exception_ptr e) { done = !e; });
  for (int i = 0; i < 1000 && !done; ++i) ioc.run_one_for(10ms);
  REQUIRE(done);
  CHECK(unwound == 7);
  CHECK(most == 3);
}

TEST_CASE("RunAll: a cancelled caller resumes only after every running task has returned, and no new one starts") {
  asio::io_context ioc;
  asio::cancellation_signal cancel;
  int running = 0, most = 0, started = 0, unwound = 0;
  int unwound_when_resumed = -1;
  bool aborted = false, finished = false;
  auto caller = [&]() -> asio::awaitable<void> {
    std::vector<net::Task> tasks;
    for (int i = 0; i < 5; ++i) tasks.push_back(Waiting(running, most, started, unwound));
    try {
      co_await net::RunAll(std::move(tasks), 3);
    } catch (const boost::system::system_error& e) {
      aborted = e.code() == asio::error::operation_aborted;
    }
    unwound_when_resumed = unwound;
    finished = true;
  };
  asio::co_spawn(ioc, caller(), asio::bind_cancellation_slot(cancel.slot(), asio::detached));
  for (int i = 0; i < 100 && started < 3; ++i) ioc.run_one_for(10ms);
  REQUIRE(started == 3);
  cancel.emit(asio::cancellation_type::terminal);
  for (int i = 0; i < 100 && !finished; ++i) ioc.run_one_for(10ms);
  REQUIRE(finished);
  CHECK(aborted);
  CHECK(unwound_when_resumed == 3);
  CHECK(started == 3);
}
