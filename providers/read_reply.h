#pragma once
// A GET whose 2xx body is read as it arrives, by the caller's own parser: the provider
// resource bodies go to simdjson (simd_json.h), with no Boost.JSON DOM built first.

#include <boost/asio/awaitable.hpp>
#include <string>
#include <string_view>

#include "core/status.h"
#include "providers/transport.h"

namespace loopwarden::providers {

template <class T>
struct ReadReply {
  Reply reply;
  Result<T> read;  // what `parse` made of the body: always ok when `reply` is
};

// GET `path`, its 2xx body read by `parse(body, what)`. A body it refuses is a malformed
// reply, which the transport retries as it retries one; so when `reply` is ok, `read`
// holds what was read. T is named, not deduced from an argument: GCC 12 destroys a
// brace-initialized aggregate passed to a coroutine twice.
template <class T, class Parse>
boost::asio::awaitable<ReadReply<T>> GetRead(Transport& transport, std::string path, Parse parse) {
  ReadReply<T> out{{}, InvalidArgument("not read")};
  Call call("GET", std::move(path));
  call.read = [&out, parse](const std::string& body, std::string_view what) {
    out.read = parse(body, what);
    return out.read.ok() ? Status::Ok() : out.read.status();
  };
  out.reply = co_await transport.Send(std::move(call));
  co_return out;
}

}  // namespace loopwarden::providers
