#include "net/async_event.h"

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace loopwarden::net {

boost::asio::awaitable<void> AsyncEvent::Wait() {
  while (!notified_) {
    boost::system::error_code ec;
    co_await timer_.async_wait(boost::asio::redirect_error(boost::asio::use_awaitable, ec));
    // A cancel without Notify() is our caller being cancelled: let it unwind.
    if (ec == boost::asio::error::operation_aborted && !notified_) {
      throw boost::system::system_error(boost::asio::error::operation_aborted);
    }
  }
}

}  // namespace loopwarden::net
