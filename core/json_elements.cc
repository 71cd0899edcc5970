#include "core/json_elements.h"

#include <boost/json/basic_parser_impl.hpp>
#include <boost/json/monotonic_resource.hpp>
#include <boost/json/value_stack.hpp>
#include <string>
#include <utility>

#include "core/json.h"

namespace loopwarden::json {
namespace {

// A basic_parser handler that hands Boost.JSON's value_stack the events of one element
// at a time (as Boost's own parser hands it a whole document), and follows where in
// the document it is: the keys of the objects open from the top (`path_`), until an
// array opens, and the depth of the listed array it is in, if any.
class ElementHandler {
 public:
  static constexpr size_t max_object_size = bj::object::max_size();
  static constexpr size_t max_array_size = bj::array::max_size();
  static constexpr size_t max_key_size = bj::string::max_size();
  static constexpr size_t max_string_size = bj::string::max_size();

  ElementHandler(std::initializer_list<std::string_view> paths,
                 const std::function<void(std::string_view, const bj::value&)>& each,
                 std::initializer_list<std::string_view> keep)
      : found(paths.size(), Found::kAbsent),
        paths_(paths),
        each_(each),
        keep_(keep),
        arena_(buffer_, sizeof buffer_) {}

  std::vector<Found> found;
  // Set when the document was not an object, or held a listed path twice.
  std::string problem;

  bool on_document_begin(bj::error_code&) { return true; }
  bool on_document_end(bj::error_code&) { return true; }

  bool on_object_begin(bj::error_code& ec) {
    if (depth_ > 0 && !Value(ec, Found::kOther)) return false;
    if (Plain()) {
      // Inside objects only: the path grows by this object's key (none at the top).
      path_lengths_.push_back(path_.size());
      if (depth_ > 0) {
        if (!path_.empty()) path_ += '/';
        path_ += key_;
      }
    }
    key_.clear();
    ++depth_;
    return true;
  }
  bool on_object_end(size_t n, bj::error_code&) {
    --depth_;
    if (building_ && EndSkipped()) return true;
    if (building_) {
      if (depth_ == listing_depth_) n -= std::exchange(skipped_, 0);  // the element's own members
      stack_.push_object(n);
      if (depth_ == listing_depth_) Finish();
    } else if (Plain()) {
      path_.resize(path_lengths_.back());
      path_lengths_.pop_back();
    }
    return true;
  }
  bool on_array_begin(bj::error_code& ec) {
    if (depth_ == 0) return Refuse(ec, "expected a JSON object");
    if (!Value(ec, Found::kArray)) return false;
    key_.clear();
    ++depth_;
    if (!building_) ++arrays_open_;
    return true;
  }
  bool on_array_end(size_t n, bj::error_code&) {
    --depth_;
    if (building_ && EndSkipped()) return true;
    if (building_) {
      stack_.push_array(n);
      if (depth_ == listing_depth_) Finish();
      return true;
    }
    --arrays_open_;
    if (depth_ + 1 == listing_depth_) listing_depth_ = 0;  // the listed array itself closed
    return true;
  }

  bool on_key_part(bj::string_view s, size_t, bj::error_code&) {
    if (skipping_) return true;
    if (Filtering()) {
      key_part_.append(s.data(), s.size());
    } else if (building_) {
      stack_.push_chars(s);
    } else if (Plain()) {
      key_.append(s.data(), s.size());
    }
    return true;
  }
  bool on_key(bj::string_view s, size_t, bj::error_code&) {
    if (skipping_) return true;
    if (Filtering()) {
      std::string_view key(s.data(), s.size());
      if (!key_part_.empty()) key = key_part_.append(key);
      if (Kept(key)) {
        stack_.push_key(key);
      } else {
        skipping_ = true;
        ++skipped_;
      }
      key_part_.clear();
    } else if (building_) {
      stack_.push_key(s);
    } else if (Plain()) {
      key_.append(s.data(), s.size());
    }
    return true;
  }

  bool on_string_part(bj::string_view s, size_t, bj::error_code& ec) {
    if (!string_started_) {  // the string's first part: where a value starts
      if (depth_ == 0) return Refuse(ec, "expected a JSON object");
      if (!Value(ec, Found::kOther)) return false;
      string_started_ = true;
    }
    if (building_ && !skipping_) stack_.push_chars(s);
    return true;
  }
  bool on_string(bj::string_view s, size_t, bj::error_code& ec) {
    const bool started = std::exchange(string_started_, false);
    return Leaf(ec, Found::kOther, started, [&] { stack_.push_string(s); });
  }
  bool on_number_part(bj::string_view, bj::error_code&) { return true; }
  bool on_int64(int64_t v, bj::string_view, bj::error_code& ec) {
    return Leaf(ec, Found::kOther, false, [&] { stack_.push_int64(v); });
  }
  bool on_uint64(uint64_t v, bj::string_view, bj::error_code& ec) {
    return Leaf(ec, Found::kOther, false, [&] { stack_.push_uint64(v); });
  }
  bool on_double(double v, bj::string_view, bj::error_code& ec) {
    return Leaf(ec, Found::kOther, false, [&] { stack_.push_double(v); });
  }
  bool on_bool(bool v, bj::error_code& ec) {
    return Leaf(ec, Found::kOther, false, [&] { stack_.push_bool(v); });
  }
  bool on_null(bj::error_code& ec) {
    return Leaf(ec, Found::kNull, false, [&] { stack_.push_null(); });
  }
  bool on_comment_part(bj::string_view, bj::error_code&) { return true; }
  bool on_comment(bj::string_view, bj::error_code&) { return true; }

 private:
  // Inside objects only, from the top, and not in an element.
  bool Plain() const { return !building_ && arrays_open_ == 0; }

  // Reading the keys of an element's own members, which `keep_` filters. (A key at that
  // depth is the element's: only an object has keys.)
  bool Filtering() const { return building_ && keep_.size() > 0 && depth_ == listing_depth_ + 1; }
  bool Kept(std::string_view key) const {
    for (std::string_view k : keep_) {
      if (k == key) return true;
    }
    return false;
  }
  // While a dropped member's value is read: true, and the skip ends with the value
  // (a scalar, or the container that closed back to the element's depth).
  bool EndSkipped() {
    if (!skipping_) return false;
    if (depth_ == listing_depth_ + 1) skipping_ = false;
    return true;
  }

  // A value (container, scalar, or a string's first part) starts below the top: an
  // element of a listed array, a member at some path, or something inside either.
  bool Value(bj::error_code& ec, Found kind) {
    if (building_) return true;
    if (listing_depth_ != 0 && depth_ == listing_depth_) {
      Begin();
      return true;
    }
    // Inside an array that is not listed, keys are not followed (key_ stays empty), so
    // nothing there matches a path.
    std::string_view at = key_;
    std::string joined;
    if (!path_.empty()) {
      joined = path_ + '/' + key_;
      at = joined;
    }
    for (size_t i = 0; i < paths_.size(); ++i) {
      if (paths_.begin()[i] != at) continue;
      if (found[i] != Found::kAbsent) return Refuse(ec, "key '" + std::string(at) + "' appears twice");
      found[i] = kind;
      if (kind == Found::kArray) {
        listing_depth_ = depth_ + 1;
        listed_ = i;
      }
    }
    return true;
  }

  template <class Push>
  bool Leaf(bj::error_code& ec, Found kind, bool started, Push push) {
    if (depth_ == 0) return Refuse(ec, "expected a JSON object");
    if (!started && !building_ && !Value(ec, kind)) return false;
    if (building_) {
      if (!EndSkipped()) push();
      if (depth_ == listing_depth_) Finish();  // the element was this scalar
    } else if (Plain()) {
      key_.clear();  // a member's scalar value
    }
    return true;
  }

  void Begin() {
    building_ = true;
    skipped_ = 0;
    stack_.reset(bj::storage_ptr(&arena_));
  }

  // The element is complete: hand it over, then drop it and everything it allocated.
  void Finish() {
    building_ = false;
    {
      bj::value v = stack_.release();
      each_(paths_.begin()[listed_], v);
    }
    arena_.release();
  }

  bool Refuse(bj::error_code& ec, std::string why) {
    problem = std::move(why);
    ec = bj::error::syntax;  // stops the parser; `problem` says why
    return false;
  }

  std::initializer_list<std::string_view> paths_;
  const std::function<void(std::string_view, const bj::value&)>& each_;
  std::initializer_list<std::string_view> keep_;  // an element object's members to build (empty: all)
  unsigned char buffer_[4096];
  bj::monotonic_resource arena_;
  // Its own working memory is on the heap: it must outlive each arena_.release().
  bj::value_stack stack_;
  std::string path_;  // keys of the open objects, '/'-joined
  std::vector<size_t> path_lengths_;
  std::string key_;  // the member being read
  int depth_ = 0;    // containers open
  int arrays_open_ = 0;  // outside elements
  int listing_depth_ = 0;  // inside a listed array: its depth + 1 (0: none)
  size_t listed_ = 0;      // which path that array is at
  bool building_ = false;
  bool string_started_ = false;
  bool skipping_ = false;  // reading a member of the element that keep_ drops
  size_t skipped_ = 0;     // the element's members dropped so far
  std::string key_part_;   // an element member's key arriving in parts
};

}  // namespace

Result<std::vector<Found>> ForEachElement(std::string_view body, std::string_view what,
                                          std::initializer_list<std::string_view> paths,
                                          const std::function<void(std::string_view, const bj::value&)>& each,
                                          std::initializer_list<std::string_view> keep, size_t max_bytes) {
  if (body.size() > max_bytes) {
    return InvalidArgument(std::string(what) + ": body of " + std::to_string(body.size()) + " bytes is too large");
  }
  bj::parse_options opts;
  opts.max_depth = 64;
  bj::basic_parser<ElementHandler> parser(opts, paths, each, keep);
  bj::error_code ec;
  const size_t n = parser.write_some(false, body.data(), body.size(), ec);
  if (!ec && n < body.size()) ec = bj::error::extra_data;
  if (!parser.handler().problem.empty()) return InvalidArgument(std::string(what) + ": " + parser.handler().problem);
  if (ec) return MalformedJson(what, ec, body);
  return std::move(parser.handler().found);
}

}  // namespace loopwarden::json
