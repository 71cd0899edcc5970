#pragma once
// Runs one coroutine to completion on `ioc`, bounded in real time, and rethrows what it
// threw. For tests over real loopback sockets, which cannot use the ManualClock.

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <exception>
#include <stdexcept>

namespace loopwarden::testing {

template <class Awaitable>
void RunAsync(boost::asio::io_context& ioc, Awaitable&& a, std::chrono::seconds limit = std::chrono::seconds(20)) {
  bool done = false;
  std::exception_ptr error;
  boost::asio::co_spawn(ioc, std::forward<Awaitable>(a), [&](std::exception_ptr e) {
    done = true;
    error = e;
  });
  ioc.restart();
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done && std::chrono::steady_clock::now() < deadline) ioc.run_one_for(std::chrono::milliseconds(50));
  if (!done) throw std::runtime_error("coroutine did not finish within the test's time limit");
  if (error) std::rethrow_exception(error);
}

}  // namespace loopwarden::testing
