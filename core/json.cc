#include "core/json.h"

#include <boost/json/parse.hpp>
#include <cerrno>
#include <cstdlib>

namespace loopwarden::json {

Result<bj::value> Parse(std::string_view body, std::string_view what, size_t max_bytes, bj::storage_ptr sp) {
  if (body.size() > max_bytes) {
    return InvalidArgument(std::string(what) + ": body of " + std::to_string(body.size()) + " bytes is too large");
  }
  boost::system::error_code ec;
  bj::parse_options opts;
  opts.max_depth = 64;
  bj::value v = bj::parse(body, ec, std::move(sp), opts);
  if (ec) return MalformedJson(what, ec, body);
  return v;
}

Status MalformedJson(std::string_view what, const boost::system::error_code& ec, std::string_view body) {
  std::string snippet(body.substr(0, 60));
  for (char& c : snippet) {
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
  }
  return InvalidArgument(std::string(what) + ": malformed JSON (" + ec.message() + ") in body starting '" + snippet +
                         "'");
}

const bj::value* Get(const bj::object& o, std::string_view key) {
  auto it = o.find(key);
  if (it == o.end()) return nullptr;
  return &it->value();
}

const bj::object* Obj(const bj::object& o, std::string_view key) {
  const bj::value* v = Get(o, key);
  return v && v->is_object() ? &v->get_object() : nullptr;
}

const bj::array* Arr(const bj::object& o, std::string_view key) {
  const bj::value* v = Get(o, key);
  return v && v->is_array() ? &v->get_array() : nullptr;
}

std::optional<std::string> Str(const bj::object& o, std::string_view key) {
  if (auto v = View(o, key)) return std::string(*v);
  return std::nullopt;
}

std::optional<std::string_view> View(const bj::object& o, std::string_view key) {
  const bj::value* v = Get(o, key);
  if (!v || !v->is_string()) return std::nullopt;
  return std::string_view(v->get_string());
}

std::optional<int64_t> AsInt(const bj::value& v) {
  if (v.is_int64()) return v.get_int64();
  if (v.is_uint64()) {
    if (v.get_uint64() > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
    return static_cast<int64_t>(v.get_uint64());
  }
  if (v.is_double()) {
    double d = v.get_double();
    if (d != d || d > 9.2e18 || d < -9.2e18) return std::nullopt;
    return static_cast<int64_t>(d);
  }
  if (v.is_string()) {
    std::string s(v.get_string());
    if (s.empty()) return std::nullopt;
    char* end = nullptr;
    errno = 0;
    long long n = std::strtoll(s.c_str(), &end, 10);
    if (end != s.c_str() + s.size() || errno == ERANGE) return std::nullopt;
    return n;
  }
  return std::nullopt;
}

std::optional<int64_t> Int(const bj::object& o, std::string_view key) {
  const bj::value* v = Get(o, key);
  return v ? AsInt(*v) : std::nullopt;
}

std::optional<double> AsNum(const bj::value& v) {
  if (v.is_double()) return v.get_double();
  if (v.is_int64()) return static_cast<double>(v.get_int64());
  if (v.is_uint64()) return static_cast<double>(v.get_uint64());
  if (v.is_string()) {
    std::string s(v.get_string());
    if (s.empty()) return std::nullopt;
    char* end = nullptr;
    double d = std::strtod(s.c_str(), &end);
    if (end != s.c_str() + s.size() || d != d) return std::nullopt;
    return d;
  }
  return std::nullopt;
}

std::optional<double> Num(const bj::object& o, std::string_view key) {
  const bj::value* v = Get(o, key);
  return v ? AsNum(*v) : std::nullopt;
}

std::optional<bool> Bool(const bj::object& o, std::string_view key) {
  const bj::value* v = Get(o, key);
  if (!v || !v->is_bool()) return std::nullopt;
  return v->get_bool();
}

std::optional<Time> TimeField(const bj::object& o, std::string_view key) {
  const bj::value* v = Get(o, key);
  if (!v || !v->is_string()) return std::nullopt;
  Result<Time> t = ParseTime(std::string_view(v->get_string()));
  if (!t.ok()) return std::nullopt;
  return *t;
}

std::optional<std::string> StatusName(const bj::object& o, std::string_view key) {
  if (auto v = StatusNameView(o, key)) return std::string(*v);
  return std::nullopt;
}

std::optional<std::string_view> StatusNameView(const bj::object& o, std::string_view key) {
  const bj::value* v = Get(o, key);
  if (!v) return std::nullopt;
  if (v->is_string()) return std::string_view(v->get_string());
  if (v->is_object()) return View(v->get_object(), "name");
  return std::nullopt;
}

}  // namespace loopwarden::json
