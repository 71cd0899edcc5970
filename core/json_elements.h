#pragma once
// Reading the rows of a large body one at a time, without its whole DOM.
//
// A Baseten usage_summary body is 1.8 MB per account at 100k resources and its DOM
// took 8.4 MB; a Fireworks billingUsage body over its 35-day window is 3.5 MB, and its
// DOM took 17 MB. Each was in turn the largest block a cycle held, and set the process's
// peak memory, though their rows are only read once, in order. So each row is built,
// handed over and dropped before the next.

#include <boost/json/value.hpp>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace loopwarden::json {

// What a body held at a listed path.
enum class Found : uint8_t { kAbsent, kNull, kArray, kOther };

// Parses `body`, which must be a JSON object, and calls `each(path, element)` for every
// element of the arrays at the listed `paths`, in document order. A path names object
// keys from the top, joined by '/' ("dedicated_usage/breakdown"); it does not reach
// into arrays. Each element lives only during its call. Returns, for each path in
// order, what was there; a path whose value is not an array is only reported. A listed
// path that appears twice (a key repeated in its object) is refused: which copy counts
// is not ours to guess. The whole body is checked as json::Parse checks it (syntax,
// UTF-8, depth 64, nothing after the value, at most `max_bytes`), and errors name
// `what`. On an error, elements before it may have been passed.
// With `keep`, an element that is an object is built with only the members named there:
// the others are read and checked like the rest of the body, then dropped unbuilt. A
// Fireworks bill row has a dozen members and its reader wants six; building the other
// six was a fifth of the cost of reading a bill (2.40 G instructions of a 100k fleet's
// first poll, 1.93 G without).
Result<std::vector<Found>> ForEachElement(
    std::string_view body, std::string_view what, std::initializer_list<std::string_view> paths,
    const std::function<void(std::string_view path, const boost::json::value& element)>& each,
    std::initializer_list<std::string_view> keep = {}, size_t max_bytes = 256 << 20);

}  // namespace loopwarden::json
