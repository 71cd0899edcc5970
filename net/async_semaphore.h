#pragma once
// A counting semaphore for coroutines on one io_context: bounded concurrency per
// provider. Waiters are served first come, first served. A waiter whose coroutine is
// cancelled leaves the queue and gets operation_aborted.
//
// The count lives in shared state that permits and waiters hold, so tearing down an
// io_context with requests still suspended (a test that timed out, a forced shutdown)
// never touches a semaphore that is already gone.
//
// Used from the io_context thread only.

#include <boost/asio/awaitable.hpp>
#include <cstddef>
#include <deque>
#include <memory>

namespace loopwarden::net {

class AsyncSemaphore {
 public:
  explicit AsyncSemaphore(size_t count) : s_(std::make_shared<State>(State{count, {}})) {}
  // Completes holding one unit; pair with Release() (or use Permit).
  boost::asio::awaitable<void> Acquire();
  void Release() { Release(*s_); }
  size_t available() const { return s_->available; }
  size_t waiting() const { return s_->waiters.size(); }

  struct Waiter;
  struct State {
    size_t available;
    std::deque<Waiter*> waiters;
  };

  // Releases on destruction, if the semaphore still exists.
  class Permit {
   public:
    explicit Permit(AsyncSemaphore& s) : s_(s.s_) {}
    Permit(Permit&& o) noexcept : s_(std::move(o.s_)) { o.s_.reset(); }
    Permit(const Permit&) = delete;
    ~Permit() {
      if (auto s = s_.lock()) AsyncSemaphore::Release(*s);
    }

   private:
    std::weak_ptr<State> s_;
  };

 private:
  static void Release(State& s);
  std::shared_ptr<State> s_;
};

}  // namespace loopwarden::net
