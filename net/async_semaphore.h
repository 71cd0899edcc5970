#pragma once
// A counting semaphore for coroutines on one io_context: bounded concurrency per
// provider. Waiters are served first come, first served. A waiter whose coroutine is
// cancelled leaves the queue and gets operation_aborted.
//
// Used from the io_context thread only.

#include <boost/asio/awaitable.hpp>
#include <cstddef>
#include <deque>

namespace loopwarden::net {

class AsyncSemaphore {
 public:
  explicit AsyncSemaphore(size_t count) : available_(count) {}
  // Completes holding one unit; pair with Release() (or use Permit).
  boost::asio::awaitable<void> Acquire();
  void Release();
  size_t available() const { return available_; }
  size_t waiting() const { return waiters_.size(); }

  // Releases on destruction.
  class Permit {
   public:
    explicit Permit(AsyncSemaphore& s) : s_(&s) {}
    Permit(Permit&& o) noexcept : s_(o.s_) { o.s_ = nullptr; }
    Permit(const Permit&) = delete;
    ~Permit() {
      if (s_) s_->Release();
    }

   private:
    AsyncSemaphore* s_;
  };

 private:
  struct Waiter;
  size_t available_;
  std::deque<Waiter*> waiters_;
};

}  // namespace loopwarden::net
