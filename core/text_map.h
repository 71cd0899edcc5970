#pragma once
// TextHash, the hash of text keys every table of ours uses, and TextMap, a node table of
// std::string keys found by a string_view. Apart from core/flat_hash.h so that headers
// included across the tree (store/store.h) have them without Boost's open tables.

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "core/hash.h"

namespace loopwarden {

// Text keys hashed eight bytes at a time (FieldHasher). Boost 1.81's hash of a string
// mixes it in far more steps: about 3 % of a steady cycle's instructions at 100k went on it,
// mostly for the policy engine's lookup of every listed resource's key. Not marked
// avalanching, so the tables mix the value once more before using its bits.
struct TextHash {
  using is_transparent = void;  // a std::string key is found by a string_view
  size_t operator()(std::string_view s) const noexcept {
    FieldHasher h;
    h.Add(s);
    return static_cast<size_t>(h.value());
  }
};

// A node table of text keys (entries stay where they are across inserts), found by a
// string_view: a lookup by a std::string key built a temporary std::string from an
// id held in a ShortString, and allocated for ids past 15 bytes (a Fireworks
// session's 35), several times per listed resource each poll.
template <class V>
using TextMap = std::unordered_map<std::string, V, TextHash, std::equal_to<>>;

}  // namespace loopwarden
