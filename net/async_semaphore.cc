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

asio::awaitable<void> AsyncSemaphore::Acquire() {
  if (available_ > 0 && waiters_.empty()) {
    --available_;
    co_return;
  }
  auto ex = co_await asio::this_coro::executor;
  Waiter w{asio::steady_timer(ex, asio::steady_timer::time_point::max())};
  waiters_.push_back(&w);
  boost::system::error_code ec;
  co_await w.timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  if (!w.granted) {
    waiters_.erase(std::remove(waiters_.begin(), waiters_.end(), &w), waiters_.end());
    throw boost::system::system_error(asio::error::operation_aborted);
  }
}

void AsyncSemaphore::Release() {
  if (!waiters_.empty()) {
    // Hand the unit straight to the next waiter.
    Waiter* w = waiters_.front();
    waiters_.pop_front();
    w->granted = true;
    w->timer.cancel();
    return;
  }
  ++available_;
}

}  // namespace loopwarden::net
