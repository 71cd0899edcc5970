#pragma once
// Runs many coroutines with bounded parallelism on the current executor, and waits for
// all of them. Cancelling the awaiting coroutine cancels the running tasks (each sees
// operation_aborted in its own waits) and rethrows once every running task has
// returned, so tasks may capture the caller's locals by reference; tasks not started
// yet never start.
//
// Tasks must not throw; they catch what they call. Used from the io_context thread only.

#include <boost/asio/awaitable.hpp>
#include <functional>
#include <vector>

namespace loopwarden::net {

using Task = std::function<boost::asio::awaitable<void>()>;

boost::asio::awaitable<void> RunAll(std::vector<Task> tasks, size_t parallelism);

}  // namespace loopwarden::net
