#include "daemon/config_reload.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <memory>
#include <optional>

namespace loopwarden::daemon {

namespace {

using Slot = std::shared_ptr<std::optional<Result<config::Config>>>;

// A named coroutine holding its own copies: the caller's frame may be gone (cancelled
// at the drain timeout) before the worker finishes.
boost::asio::awaitable<void> RunLoad(std::function<Result<config::Config>()> load, Slot out) {
  out->emplace(load());
  co_return;
}

}  // namespace

boost::asio::awaitable<Result<config::Config>> LoadOffThread(boost::asio::thread_pool& pool,
                                                             std::function<Result<config::Config>()> load) {
  Slot out = std::make_shared<std::optional<Result<config::Config>>>();
  co_await boost::asio::co_spawn(pool, RunLoad(std::move(load), out), boost::asio::use_awaitable);
  co_return std::move(**out);
}

}  // namespace loopwarden::daemon
