#include "providers/simd_json.h"

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

#include "core/json.h"
#include "core/strings.h"

namespace loopwarden::providers::sj {

namespace {

constexpr size_t kMaxDepth = 64;  // json::Parse's

simdjson::dom::parser& ThreadParser() {
  // One per thread, kept: its buffers grow to the largest body read and are reused.
  thread_local simdjson::dom::parser parser = [] {
    simdjson::dom::parser p;
    // Growing later keeps this depth. A failure here (no memory for a few kB) leaves
    // the parser to allocate on first use, then with simdjson's own depth limit.
    const simdjson::error_code err = p.allocate(simdjson::dom::MINIMAL_DOCUMENT_CAPACITY, kMaxDepth);
    static_cast<void>(err);
    return p;
  }();
  return parser;
}

}  // namespace

Result<element> Parse(const std::string& body, std::string_view what, size_t max_bytes) {
  if (body.size() > max_bytes) {
    return InvalidArgument(std::string(what) + ": body of " + std::to_string(body.size()) + " bytes is too large");
  }
  element root;
  // Copied into padded room only when the string has too little past its end.
  const simdjson::error_code err = ThreadParser().parse(body).get(root);
  if (!err) return root;
  // The refusal in json::Parse's words. Where Boost.JSON reads what simdjson does not
  // (an integer past 64 bits), the body is still refused: the providers send none.
  auto boost_view = json::Parse(body, what, max_bytes);
  if (!boost_view.ok()) return boost_view.status();
  return InvalidArgument(std::string(what) + ": unreadable JSON (" + simdjson::error_message(err) + ")");
}

Members::Members(const object& o) {
  for (const auto& m : o) {
    if (size_ < kInline) {
      new (&inline_[size_++].m) Member{m.key, m.value};
    } else {
      more_.push_back({m.key, m.value});
    }
  }
  // A small object (a nested instance_type, a creator) is scanned: for its few keys the
  // table cost more to build than the lookups it saved.
  if (size_ <= kScanned) return;
  std::memset(slots_, 0, sizeof slots_);
  for (size_t i = 0; i < size_; ++i) {
    size_t h = SlotOf(inline_[i].m.key);
    while (slots_[h] != 0) h = (h + 1) % kSlots;
    slots_[h] = static_cast<uint8_t>(i + 1);
  }
}

size_t Members::SlotOf(std::string_view key) {
  // The length and three of its bytes: the documented keys of one object all differ
  // there (createTime and updateTime at the first).
  uint32_t x = static_cast<uint32_t>(key.size());
  if (!key.empty()) {
    x ^= static_cast<uint32_t>(static_cast<uint8_t>(key.front())) << 8 ^
         static_cast<uint32_t>(static_cast<uint8_t>(key[key.size() / 2])) << 16 ^
         static_cast<uint32_t>(static_cast<uint8_t>(key.back())) << 24;
  }
  return (x * 2654435761u) >> 26;  // the top 6 bits: kSlots
}

namespace {

[[gnu::always_inline]] inline bool SameKey(std::string_view a, std::string_view b) {
  return a.size() == b.size() && SameKeyOfLength(a, b);
}

}  // namespace

std::optional<element> Members::Get(std::string_view key) const {
  // The last copy of a repeated key is the one a Boost.JSON object keeps: the members
  // past the inline ones come later, and of the inline ones the highest index wins.
  for (auto it = more_.rbegin(); it != more_.rend(); ++it) {
    if (SameKey(it->key, key)) return it->value;
  }
  if (size_ <= kScanned) {
    for (size_t i = size_; i-- > 0;) {
      if (SameKey(inline_[i].m.key, key)) return inline_[i].m.value;
    }
    return std::nullopt;
  }
  size_t found = 0;
  for (size_t h = SlotOf(key); slots_[h] != 0; h = (h + 1) % kSlots) {
    const size_t i = slots_[h];
    if (i > found && SameKey(inline_[i - 1].m.key, key)) found = i;
  }
  if (found == 0) return std::nullopt;
  return inline_[found - 1].m.value;
}

std::optional<element> Get(const Members& o, std::string_view key) { return o.Get(key); }

std::optional<object> AsObj(const std::optional<element>& v) {
  object out;
  if (v && !v->get_object().get(out)) return out;
  return std::nullopt;
}

std::optional<object> Obj(const Members& o, std::string_view key) { return AsObj(Get(o, key)); }

std::optional<array> Arr(const Members& o, std::string_view key) {
  array out;
  if (auto v = Get(o, key); v && !v->get_array().get(out)) return out;
  return std::nullopt;
}

std::optional<std::string_view> AsView(const element& v) {
  std::string_view s;
  if (v.get_string().get(s)) return std::nullopt;
  return s;
}

std::optional<std::string_view> AsView(const std::optional<element>& v) {
  if (v) return AsView(*v);
  return std::nullopt;
}

std::optional<std::string_view> View(const Members& o, std::string_view key) { return AsView(Get(o, key)); }

std::optional<std::string> Str(const Members& o, std::string_view key) {
  if (auto v = View(o, key)) return std::string(*v);
  return std::nullopt;
}

std::optional<int64_t> AsInt(const element& v) {
  // As json::AsInt: an integer, a double in range (truncated), or a string of digits.
  switch (v.type()) {
    case simdjson::dom::element_type::INT64: return v.get_int64().value_unsafe();
    case simdjson::dom::element_type::UINT64: {
      const uint64_t u = v.get_uint64().value_unsafe();
      if (u > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
      return static_cast<int64_t>(u);
    }
    case simdjson::dom::element_type::DOUBLE: {
      const double d = v.get_double().value_unsafe();
      if (d != d || d > 9.2e18 || d < -9.2e18) return std::nullopt;
      return static_cast<int64_t>(d);
    }
    case simdjson::dom::element_type::STRING: {
      const std::string s(v.get_string().value_unsafe());
      if (s.empty()) return std::nullopt;
      char* end = nullptr;
      errno = 0;
      const long long n = std::strtoll(s.c_str(), &end, 10);
      if (end != s.c_str() + s.size() || errno == ERANGE) return std::nullopt;
      return n;
    }
    default: return std::nullopt;
  }
}

std::optional<int64_t> AsInt(const std::optional<element>& v) {
  if (v) return AsInt(*v);
  return std::nullopt;
}

std::optional<int64_t> Int(const Members& o, std::string_view key) { return AsInt(Get(o, key)); }

std::optional<double> AsNum(const element& v) {
  // As json::AsNum.
  switch (v.type()) {
    case simdjson::dom::element_type::DOUBLE: return v.get_double().value_unsafe();
    case simdjson::dom::element_type::INT64: return static_cast<double>(v.get_int64().value_unsafe());
    case simdjson::dom::element_type::UINT64: return static_cast<double>(v.get_uint64().value_unsafe());
    case simdjson::dom::element_type::STRING: {
      const std::string s(v.get_string().value_unsafe());
      if (s.empty()) return std::nullopt;
      char* end = nullptr;
      const double d = std::strtod(s.c_str(), &end);
      if (end != s.c_str() + s.size() || d != d) return std::nullopt;
      return d;
    }
    default: return std::nullopt;
  }
}

std::optional<double> Num(const Members& o, std::string_view key) {
  if (auto v = Get(o, key)) return AsNum(*v);
  return std::nullopt;
}

std::optional<bool> AsBool(const std::optional<element>& v) {
  bool b = false;
  if (v && !v->get_bool().get(b)) return b;
  return std::nullopt;
}

std::optional<Time> AsTime(const std::optional<element>& v) {
  auto s = AsView(v);
  if (!s) return std::nullopt;
  Result<Time> t = ParseTime(*s);
  if (!t.ok()) return std::nullopt;
  return *t;
}

std::optional<std::string_view> AsStatusName(const std::optional<element>& v) {
  if (!v) return std::nullopt;
  if (auto s = AsView(*v)) return s;
  object inner;
  if (!v->get_object().get(inner)) return View(inner, "name");
  return std::nullopt;
}

void AppendJson(std::string& out, const element& v) {
  // Written here, not by minify, which builds a buffer and a string of its own for each
  // value (a label map per deployment was most of a trim); only doubles go to it, for
  // its shortest exact form.
  switch (v.type()) {
    case simdjson::dom::element_type::OBJECT: {
      object o;
      if (v.get_object().get(o)) break;
      out += '{';
      bool first = true;
      for (const auto& m : o) {
        if (!first) out += ',';
        first = false;
        AppendJsonQuoted(out, m.key);
        out += ':';
        AppendJson(out, m.value);
      }
      out += '}';
      return;
    }
    case simdjson::dom::element_type::ARRAY: {
      array a;
      if (v.get_array().get(a)) break;
      out += '[';
      bool first = true;
      for (const element& e : a) {
        if (!first) out += ',';
        first = false;
        AppendJson(out, e);
      }
      out += ']';
      return;
    }
    case simdjson::dom::element_type::STRING: AppendJsonQuoted(out, v.get_string().value_unsafe()); return;
    case simdjson::dom::element_type::INT64: out += std::to_string(v.get_int64().value_unsafe()); return;
    case simdjson::dom::element_type::UINT64: out += std::to_string(v.get_uint64().value_unsafe()); return;
    case simdjson::dom::element_type::BOOL: out += v.get_bool().value_unsafe() ? "true" : "false"; return;
    case simdjson::dom::element_type::NULL_VALUE: out += "null"; return;
    default: break;
  }
  out += simdjson::minify(v);  // a double (or a kind its reader refused)
}

bool Same(const element& a, const element& b) {
  using T = simdjson::dom::element_type;
  const T ta = a.type(), tb = b.type();
  const auto number = [](T t) { return t == T::INT64 || t == T::UINT64 || t == T::DOUBLE; };
  if (number(ta) && number(tb)) {
    // Boost.JSON compares int64 and uint64 by value, and a double only with a double.
    if ((ta == T::DOUBLE) != (tb == T::DOUBLE)) return false;
    if (ta == T::DOUBLE) return a.get_double().value_unsafe() == b.get_double().value_unsafe();
    if (ta == tb) return ta == T::INT64 ? a.get_int64().value_unsafe() == b.get_int64().value_unsafe()
                                        : a.get_uint64().value_unsafe() == b.get_uint64().value_unsafe();
    const int64_t s = ta == T::INT64 ? a.get_int64().value_unsafe() : b.get_int64().value_unsafe();
    const uint64_t u = ta == T::UINT64 ? a.get_uint64().value_unsafe() : b.get_uint64().value_unsafe();
    return s >= 0 && static_cast<uint64_t>(s) == u;
  }
  if (ta != tb) return false;
  switch (ta) {
    case T::NULL_VALUE: return true;
    case T::BOOL: return a.get_bool().value_unsafe() == b.get_bool().value_unsafe();
    case T::STRING: return a.get_string().value_unsafe() == b.get_string().value_unsafe();
    case T::ARRAY: {
      const array x = a.get_array().value_unsafe(), y = b.get_array().value_unsafe();
      if (x.size() != y.size()) return false;
      for (auto i = x.begin(), j = y.begin(); i != x.end(); ++i, ++j) {
        if (!Same(*i, *j)) return false;
      }
      return true;
    }
    case T::OBJECT: {
      // As Boost.JSON objects: one member per key (its last copy), in any order.
      const object x = a.get_object().value_unsafe(), y = b.get_object().value_unsafe();
      const auto distinct = [](const object& o) {
        size_t n = 0, i = 0;
        for (const auto& m : o) {
          size_t j = 0;
          bool repeated_later = false;
          for (const auto& later : o) {
            if (j++ > i && later.key == m.key) repeated_later = true;
          }
          if (!repeated_later) ++n;
          ++i;
        }
        return n;
      };
      if (distinct(x) != distinct(y)) return false;
      const Members mx(x), my(y);
      for (const auto& m : x) {
        auto mine = mx.Get(m.key), theirs = my.Get(m.key);
        if (!theirs || !Same(*mine, *theirs)) return false;
      }
      return true;
    }
    default: return false;
  }
}

}  // namespace loopwarden::providers::sj
