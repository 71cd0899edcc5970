#include "net/parallel.h"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <memory>

namespace loopwarden::net {

namespace asio = boost::asio;

namespace {

// Shared by the waiting coroutine and its workers, so either may outlive the other.
struct Group {
  explicit Group(asio::any_io_executor ex) : done(ex, asio::steady_timer::time_point::max()) {}
  std::vector<Task> tasks;
  size_t next = 0;
  size_t running = 0;
  asio::steady_timer done;
  std::vector<std::unique_ptr<asio::cancellation_signal>> signals;
};

asio::awaitable<void> Worker(std::shared_ptr<Group> g) {
  auto state = co_await asio::this_coro::cancellation_state;
  while (g->next < g->tasks.size() && state.cancelled() == asio::cancellation_type::none) {
    Task& t = g->tasks[g->next++];
    co_await t();
  }
}

}  // namespace

asio::awaitable<void> RunAll(std::vector<Task> tasks, size_t parallelism) {
  if (tasks.empty()) co_return;
  auto ex = co_await asio::this_coro::executor;
  auto g = std::make_shared<Group>(ex);
  g->tasks = std::move(tasks);
  const size_t workers = std::max<size_t>(1, std::min(parallelism, g->tasks.size()));
  g->running = workers;
  for (size_t i = 0; i < workers; ++i) {
    g->signals.push_back(std::make_unique<asio::cancellation_signal>());
    asio::co_spawn(ex, Worker(g), asio::bind_cancellation_slot(g->signals.back()->slot(), [g](std::exception_ptr) {
                     if (--g->running == 0) g->done.cancel();
                   }));
  }
  // A cancellation of the caller reaches this wait (Asio installs the wait's handler in
  // the caller's slot); it is then forwarded to every worker.
  auto state = co_await asio::this_coro::cancellation_state;
  boost::system::error_code ec;
  while (g->running > 0) {
    co_await g->done.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    if (g->running > 0 && ec == asio::error::operation_aborted && state.cancelled() != asio::cancellation_type::none) {
      for (auto& s : g->signals) s->emit(asio::cancellation_type::terminal);
      // The tasks are the caller's lambdas and may hold references into its frame:
      // rethrowing before they have unwound would let them resume into freed memory.
      co_await asio::this_coro::reset_cancellation_state();
      while (g->running > 0) co_await g->done.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      throw boost::system::system_error(asio::error::operation_aborted);
    }
  }
}

}  // namespace loopwarden::net
