#pragma once
// Reading the rows of a large body one at a time, without its whole DOM.
//
// A Fireworks billingUsage body over its 35-day window is about 3.5 MB for an
// account of 5,000 resources, and its DOM took 17 MB: the largest block a 100k-resource
// cycle held, and the moment that set its peak memory. Its rows are only summed, so
// each is built, handed over and dropped before the next.

#include <boost/json/value.hpp>
#include <functional>
#include <initializer_list>
#include <string_view>

#include "core/status.h"

namespace loopwarden::json {

// Parses `body`, which must be a JSON object, and calls `each(key, element)` for every
// element of the arrays under the top-level `keys`, in document order. Each element
// lives only during its call. A key whose value is not an array is skipped, as an
// absent one is; a key in `keys` that appears twice is refused (which copy counts is
// not ours to guess). The whole body is checked as json::Parse checks it (syntax,
// UTF-8, depth 64, nothing after the value, at most `max_bytes`), and errors name
// `what`. On an error, elements before it may have been passed.
Status ForEachElement(std::string_view body, std::string_view what, std::initializer_list<std::string_view> keys,
                      const std::function<void(std::string_view key, const boost::json::value& element)>& each,
                      size_t max_bytes = 256 << 20);

}  // namespace loopwarden::json
