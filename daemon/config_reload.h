#pragma once
// Reading and checking the configuration off the io thread. A file near the 4 MiB limit
// takes about 2.5 s to parse and check; on the io thread that would hold /healthz,
// /readyz and /metrics for as long (a liveness probe may restart the pod for it).

#include <boost/asio/awaitable.hpp>
#include <boost/asio/thread_pool.hpp>
#include <functional>

#include "config/config.h"

namespace loopwarden::daemon {

// Runs `load` on `pool` and resumes on the caller's executor with its result. `load`
// must not touch anything owned by the io thread.
boost::asio::awaitable<Result<config::Config>> LoadOffThread(boost::asio::thread_pool& pool,
                                                             std::function<Result<config::Config>()> load);

}  // namespace loopwarden::daemon
