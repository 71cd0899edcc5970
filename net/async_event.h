#pragma once
// A one-thread coroutine event: Wait() completes once Notify() has been called (now or
// before, since the last Reset()). Used to wake the reconcile loop early (reload,
// shutdown) from its sleep. Used from the io_context thread only.

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>

namespace loopwarden::net {

class AsyncEvent {
 public:
  explicit AsyncEvent(boost::asio::any_io_executor ex)
      : timer_(ex, boost::asio::steady_timer::time_point::max()) {}
  boost::asio::awaitable<void> Wait();
  void Notify() {
    notified_ = true;
    timer_.cancel();
  }
  void Reset() {
    notified_ = false;
    timer_.expires_at(boost::asio::steady_timer::time_point::max());
  }
  bool notified() const { return notified_; }

 private:
  boost::asio::steady_timer timer_;
  bool notified_ = false;
};

}  // namespace loopwarden::net
