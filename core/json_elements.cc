#include "core/json_elements.h"

#include <boost/json/basic_parser_impl.hpp>
#include <boost/json/monotonic_resource.hpp>
#include <boost/json/value_stack.hpp>
#include <string>
#include <vector>

#include "core/json.h"

namespace loopwarden::json {
namespace {

// A basic_parser handler that hands Boost.JSON's value_stack the events of one element
// at a time (as Boost's own parser hands it a whole document), and tracks where in the
// document it is: depth counts open containers, so inside the top-level object it is
// 1, and inside a listed array 2.
class ElementHandler {
 public:
  static constexpr size_t max_object_size = bj::object::max_size();
  static constexpr size_t max_array_size = bj::array::max_size();
  static constexpr size_t max_key_size = bj::string::max_size();
  static constexpr size_t max_string_size = bj::string::max_size();

  ElementHandler(std::initializer_list<std::string_view> keys,
                 const std::function<void(std::string_view, const bj::value&)>& each)
      : keys_(keys), each_(each), arena_(buffer_, sizeof buffer_) {}

  // Set when the document was not an object, or named a listed key twice.
  std::string problem;

  bool on_document_begin(bj::error_code&) { return true; }
  bool on_document_end(bj::error_code&) { return true; }

  bool on_object_begin(bj::error_code& ec) { return Open(ec, true); }
  bool on_object_end(size_t n, bj::error_code&) {
    --depth_;
    if (building_) {
      stack_.push_object(n);
      if (depth_ == 2) Finish();
    } else if (depth_ == 1) {
      key_.clear();
    }
    return true;
  }
  bool on_array_begin(bj::error_code& ec) { return Open(ec, false); }
  bool on_array_end(size_t n, bj::error_code&) {
    --depth_;
    if (building_) {
      stack_.push_array(n);
      if (depth_ == 2) Finish();
    } else if (depth_ == 1) {
      listing_ = false;
      key_.clear();
    }
    return true;
  }

  bool on_key_part(bj::string_view s, size_t, bj::error_code&) {
    if (building_) {
      stack_.push_chars(s);
    } else if (depth_ == 1) {
      key_.append(s.data(), s.size());
    }
    return true;
  }
  bool on_key(bj::string_view s, size_t, bj::error_code& ec) {
    if (building_) {
      stack_.push_key(s);
      return true;
    }
    if (depth_ != 1) return true;
    key_.append(s.data(), s.size());
    if (!Listed(key_)) return true;
    for (const std::string& k : seen_) {
      if (k == key_) return Refuse(ec, "key '" + key_ + "' appears twice");
    }
    seen_.push_back(key_);
    return true;
  }

  bool on_string_part(bj::string_view s, size_t, bj::error_code&) {
    if (StartsElement()) Begin();
    if (building_) stack_.push_chars(s);
    return true;
  }
  bool on_string(bj::string_view s, size_t, bj::error_code& ec) {
    return Leaf(ec, [&] { stack_.push_string(s); });
  }
  bool on_number_part(bj::string_view, bj::error_code&) { return true; }
  bool on_int64(int64_t v, bj::string_view, bj::error_code& ec) {
    return Leaf(ec, [&] { stack_.push_int64(v); });
  }
  bool on_uint64(uint64_t v, bj::string_view, bj::error_code& ec) {
    return Leaf(ec, [&] { stack_.push_uint64(v); });
  }
  bool on_double(double v, bj::string_view, bj::error_code& ec) {
    return Leaf(ec, [&] { stack_.push_double(v); });
  }
  bool on_bool(bool v, bj::error_code& ec) {
    return Leaf(ec, [&] { stack_.push_bool(v); });
  }
  bool on_null(bj::error_code& ec) {
    return Leaf(ec, [&] { stack_.push_null(); });
  }
  bool on_comment_part(bj::string_view, bj::error_code&) { return true; }
  bool on_comment(bj::string_view, bj::error_code&) { return true; }

 private:
  // The next value is an element of a listed array (and not inside one already).
  bool StartsElement() const { return !building_ && listing_ && depth_ == 2; }

  bool Open(bj::error_code& ec, bool object) {
    if (depth_ == 0 && !object) return Refuse(ec, "expected a JSON object");
    if (StartsElement()) {
      Begin();
    } else if (!building_ && depth_ == 1 && !object && Listed(key_)) {
      listing_ = true;
    }
    // Inside an element, value_stack needs nothing until the container ends.
    ++depth_;
    return true;
  }

  template <class Push>
  bool Leaf(bj::error_code& ec, Push push) {
    if (depth_ == 0) return Refuse(ec, "expected a JSON object");
    if (StartsElement()) Begin();
    if (building_) {
      push();
      if (depth_ == 2) Finish();  // the element was this scalar
    } else if (depth_ == 1) {
      key_.clear();  // a top-level member's scalar value
    }
    return true;
  }

  void Begin() {
    building_ = true;
    stack_.reset(bj::storage_ptr(&arena_));
  }

  // The element is complete: hand it over, then drop it and everything it allocated.
  void Finish() {
    building_ = false;
    {
      bj::value v = stack_.release();
      each_(key_, v);
    }
    arena_.release();
  }

  bool Listed(std::string_view k) const {
    for (std::string_view l : keys_) {
      if (l == k) return true;
    }
    return false;
  }

  bool Refuse(bj::error_code& ec, std::string why) {
    problem = std::move(why);
    ec = bj::error::syntax;  // stops the parser; `problem` says why
    return false;
  }

  std::initializer_list<std::string_view> keys_;
  const std::function<void(std::string_view, const bj::value&)>& each_;
  unsigned char buffer_[4096];
  bj::monotonic_resource arena_;
  // Its own working memory is on the heap: it must outlive each arena_.release().
  bj::value_stack stack_;
  std::string key_;  // the top-level member being read
  std::vector<std::string> seen_;
  int depth_ = 0;  // containers open
  bool listing_ = false;  // inside a listed array
  bool building_ = false;
};

}  // namespace

Status ForEachElement(std::string_view body, std::string_view what, std::initializer_list<std::string_view> keys,
                      const std::function<void(std::string_view key, const bj::value& element)>& each,
                      size_t max_bytes) {
  if (body.size() > max_bytes) {
    return InvalidArgument(std::string(what) + ": body of " + std::to_string(body.size()) + " bytes is too large");
  }
  bj::parse_options opts;
  opts.max_depth = 64;
  bj::basic_parser<ElementHandler> parser(opts, keys, each);
  bj::error_code ec;
  const size_t n = parser.write_some(false, body.data(), body.size(), ec);
  if (!ec && n < body.size()) ec = bj::error::extra_data;
  if (!parser.handler().problem.empty()) return InvalidArgument(std::string(what) + ": " + parser.handler().problem);
  if (ec) return MalformedJson(what, ec, body);
  return Status::Ok();
}

}  // namespace loopwarden::json
