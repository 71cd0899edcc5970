#include "net/async_semaphore.h"

#include <algorithm>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace loopwarden::net {

namespace asio = boost::asio;

struct AsyncSemaphore::Waiter {
  asio::steady_timer timer;
  bool granted = false;
};

namespace {
// Takes a waiter out of the queue however its coroutine ends (resumed, cancelled, or
// destroyed while suspended), so the queue never holds a dangling pointer.
struct LeaveQueue {
  std::shared_ptr<AsyncSemaphore::State> s;
  AsyncSemaphore::Waiter* w;
  ~LeaveQueue() {
    if (!w->granted) s->waiters.erase(std::remove(s->waiters.begin(), s->waiters.end(), w), s->waiters.end());
  }
};
}  // namespace

asio::awaitable<void> AsyncSemaphore::Acquire() {
  std::shared_ptr<State> s = s_;
  if (s->available > 0 && s->waiters.empty()) {
    --s->available;
    co_return;
  }
  auto ex = co_await asio::this_coro::executor;
  Waiter w{asio::steady_timer(ex, asio::steady_timer::time_point::max())};
  s->waiters.push_back(&w);
  LeaveQueue leave{s, &w};
  boost::system::error_code ec;
  co_await w.timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  if (!w.granted) throw boost::system::system_error(asio::error::operation_aborted);
}

void AsyncSemaphore::Release(State& s) {
  if (!s.waiters.empty()) {
    // Hand the unit straight to the next waiter.
    Waiter* w = s.waiters.front();
    s.waiters.pop_front();
    w->granted = true;
    w->timer.cancel();
    return;
  }
  ++s.available;
}

}  // namespace loopwarden::net
