#pragma once
// Lenient accessors over Boost.JSON values, for parsing provider bodies.
//
// Providers mark fields "may be null or absent", send int64 as strings, and mix
// number and string money, so every accessor returns std::optional and accepts the
// documented variants. A caller decides whether a missing field makes the resource
// `unknown`.

#include <boost/json/value.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"
#include "core/time.h"

namespace loopwarden::json {

namespace bj = boost::json;

// Parses a body; a malformed one is InvalidArgument naming `what` and the offset.
// Bodies over `max_bytes` are refused before parsing. The value's memory comes from
// `sp` (the default heap unless given).
Result<bj::value> Parse(std::string_view body, std::string_view what, size_t max_bytes = 256 << 20,
                        bj::storage_ptr sp = {});
// The error Parse returns for a body Boost.JSON refused with `ec`: what, why, and the
// body's first 60 bytes.
Status MalformedJson(std::string_view what, const boost::system::error_code& ec, std::string_view body);

const bj::value* Get(const bj::object& o, std::string_view key);
const bj::object* Obj(const bj::object& o, std::string_view key);
const bj::array* Arr(const bj::object& o, std::string_view key);
// A JSON string (null and other types: nothing).
std::optional<std::string> Str(const bj::object& o, std::string_view key);
// The same, as the DOM's own text: valid while the DOM lives. For text that is pooled
// (Interned), compared or cut, so no std::string is built only to be dropped.
std::optional<std::string_view> View(const bj::object& o, std::string_view key);
// A number, or a string holding an integer ("86400").
std::optional<int64_t> Int(const bj::object& o, std::string_view key);
std::optional<int64_t> AsInt(const bj::value& v);
// A number, or a string holding a decimal ("12.40").
std::optional<double> Num(const bj::object& o, std::string_view key);
std::optional<double> AsNum(const bj::value& v);
std::optional<bool> Bool(const bj::object& o, std::string_view key);
// An RFC 3339 string parsed to an instant; unparseable text is nothing.
std::optional<Time> TimeField(const bj::object& o, std::string_view key);
// `{"name": "ACTIVE"}` or a bare "ACTIVE" string.
std::optional<std::string> StatusName(const bj::object& o, std::string_view key);
std::optional<std::string_view> StatusNameView(const bj::object& o, std::string_view key);

}  // namespace loopwarden::json
