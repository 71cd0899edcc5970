#include "core/schema.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <unordered_map>

#include "core/secrets.h"
#include "core/strings.h"

namespace loopwarden::schema {

std::string Diagnostic::ToString() const {
  return origin + ":" + std::to_string(mark.line) + ":" + std::to_string(mark.column) + ": " + message;
}

Context::Context(std::string origin)
    : origin_(std::move(origin)),
      env_([](const std::string& name) -> std::optional<std::string> {
        const char* v = std::getenv(name.c_str());
        if (v == nullptr) return std::nullopt;
        return std::string(v);
      }),
      read_file_([](const std::string& p) { return ReadFileToString(p, 1 << 20); }) {}

std::string Context::path() const {
  std::string p;
  for (const std::string& s : path_) p += s;
  if (!p.empty() && p[0] == '.') p.erase(0, 1);
  return p;
}

void Context::Error(SourceMark at, const std::string& message) {
  std::string p = path();
  // Messages never carry secret values, even when a user pasted one into the wrong key.
  diagnostics_.push_back({origin_, at, Redact(p.empty() ? message : p + ": " + message)});
}

void Context::KeyError(const ConfigNode& map, std::string_view key, const std::string& message) {
  const ConfigNode* v = map.Find(key);
  PushKey(std::string(key));
  Error(v ? v->mark : map.mark, message);
  Pop();
}

std::optional<std::string> Context::ScalarText(const ConfigNode& n, std::string_view expected) {
  if (!n.IsScalar()) {
    Error(n.mark, "expected " + std::string(expected) + ", got " + n.Describe());
    return std::nullopt;
  }
  const std::string& in = n.text;
  if (in.find('$') == std::string::npos) return in;
  std::string out;
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] != '$') {
      out += in[i];
      continue;
    }
    if (i + 1 < in.size() && in[i + 1] == '$') {
      out += '$';
      ++i;
      continue;
    }
    if (i + 1 < in.size() && in[i + 1] == '{') {
      size_t close = in.find('}', i + 2);
      if (close == std::string::npos) {
        Error(n.mark, "unterminated ${ in '" + in + "'");
        return std::nullopt;
      }
      std::string name = in.substr(i + 2, close - i - 2);
      std::optional<std::string> fallback;
      if (size_t d = name.find(":-"); d != std::string::npos) {
        fallback = name.substr(d + 2);
        name = name.substr(0, d);
      }
      std::optional<std::string> v = env_(name);
      if (!v || v->empty()) v = fallback;
      if (!v) {
        Error(n.mark, "environment variable " + name + " is not set");
        return std::nullopt;
      }
      out += *v;
      i = close;
      continue;
    }
    out += '$';
  }
  return out;
}

boost::json::object WithDescription(boost::json::object o, const std::string& description) {
  if (!description.empty()) o["description"] = description;
  return o;
}

bool CheckDuplicateKeys(Context& ctx, const ConfigNode& map) {
  // One pass with a hash of first occurrences: 215,000 keys once took 164 s pairwise.
  bool ok = true;
  std::unordered_map<std::string_view, size_t> first;
  first.reserve(map.entries.size());
  for (size_t i = 0; i < map.entries.size(); ++i) {
    auto [it, fresh] = first.emplace(map.entries[i].key, i);
    if (fresh) continue;
    ctx.Error(map.entries[i].key_mark, "duplicate key '" + map.entries[i].key + "' (first at line " +
                                           std::to_string(map.entries[it->second].key_mark.line) + ")");
    ok = false;
  }
  return ok;
}

void UnknownKey(Context& ctx, const ConfigNode::Entry& e, const std::vector<std::string>& known) {
  std::string msg = "unknown key '" + e.key + "'";
  if (auto s = Suggest(e.key, known)) msg += " (did you mean '" + *s + "'?)";
  ctx.Error(e.key_mark, msg);
}

void ReportEnumError(Context& ctx, const ConfigNode& n, const std::string& text,
                     const std::vector<std::string>& names) {
  std::string msg = "unknown value '" + text + "'";
  if (auto s = Suggest(text, names)) {
    msg += " (did you mean '" + *s + "'?)";
  } else {
    msg += " (one of " + Join(names, ", ") + ")";
  }
  ctx.Error(n.mark, msg);
}

namespace {

Secret SecretFromText(std::string value, std::string source) {
  RegisterSecret(value);
  return Secret{std::move(value), std::move(source)};
}

}  // namespace

bool ReadSecretEnv(Context& ctx, const ConfigNode& n, Secret& out) {
  auto name = ctx.ScalarText(n, "an environment variable name");
  if (!name) return false;
  if (name->empty()) {
    ctx.Error(n.mark, "empty environment variable name");
    return false;
  }
  // A key pasted here instead of a variable's name must not come back in the error.
  const bool plausible = !std::isdigit(static_cast<unsigned char>((*name)[0])) &&
                         std::all_of(name->begin(), name->end(), [](char ch) {
                           return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_';
                         });
  if (!plausible) {
    ctx.Error(n.mark, "not an environment variable name (letters, digits and '_'; the value is not shown in case "
                      "it is the secret itself: put the secret in the environment or a file and name that here)");
    return false;
  }
  if (!ctx.resolve_secrets()) {
    out = Secret{"", "env " + *name};
    return true;
  }
  std::optional<std::string> v = ctx.Env(*name);
  if (!v || v->empty()) {
    ctx.Error(n.mark, "environment variable " + *name + " is not set");
    return false;
  }
  out = SecretFromText(*v, "env " + *name);
  return true;
}

bool ReadSecretFile(Context& ctx, const ConfigNode& n, Secret& out) {
  auto path = ctx.ScalarText(n, "a file path");
  if (!path) return false;
  if (!ctx.resolve_secrets()) {
    out = Secret{"", "file " + *path};
    return true;
  }
  Result<std::string> data = ctx.ReadFile(*path);
  // A path names a directory; a bare word may be a secret pasted in the wrong key.
  const std::string shown = path->find('/') != std::string::npos ? *path : "(a name without '/', not shown in case it is the secret itself; give the file's path)";
  if (!data.ok()) {
    ctx.Error(n.mark, "cannot read secret file " + shown);
    return false;
  }
  std::string v(Trim(*data));
  if (v.empty()) {
    ctx.Error(n.mark, "secret file " + shown + " is empty");
    return false;
  }
  out = SecretFromText(std::move(v), "file " + *path);
  return true;
}

Type<std::string> String(std::string description) {
  Type<std::string> t;
  t.read = [](Context& c, const ConfigNode& n, std::string& out) {
    auto v = c.ScalarText(n, "a string");
    if (!v) return false;
    out = std::move(*v);
    return true;
  };
  t.json = [description] { return WithDescription(boost::json::object{{"type", "string"}}, description); };
  return t;
}

Type<std::string> Regex() {
  Type<std::string> t;
  t.read = [](Context& c, const ConfigNode& n, std::string& out) {
    auto v = c.ScalarText(n, "a regular expression");
    if (!v) return false;
    // The pattern is compiled (RE2 syntax) by whoever uses it; bound it here.
    if (v->size() > 1024) {
      c.Error(n.mark, "regular expression too long (at most 1024 characters)");
      return false;
    }
    out = std::move(*v);
    return true;
  };
  t.json = [] { return boost::json::object{{"type", "string"}, {"format", "regex"}}; };
  return t;
}

Type<bool> Bool() {
  Type<bool> t;
  t.read = [](Context& c, const ConfigNode& n, bool& out) {
    if (n.IsScalar() && !n.quoted) {
      if (n.text == "true") {
        out = true;
        return true;
      }
      if (n.text == "false") {
        out = false;
        return true;
      }
    }
    c.Error(n.mark, "expected true or false, got " + n.Describe());
    return false;
  };
  t.json = [] { return boost::json::object{{"type", "boolean"}}; };
  return t;
}

Type<int64_t> Integer(int64_t min, int64_t max) {
  Type<int64_t> t;
  t.read = [min, max](Context& c, const ConfigNode& n, int64_t& out) {
    auto text = c.ScalarText(n, "an integer");
    if (!text) return false;
    char* end = nullptr;
    errno = 0;
    long long v = std::strtoll(text->c_str(), &end, 10);
    if (text->empty() || end != text->c_str() + text->size() || errno == ERANGE) {
      c.Error(n.mark, "expected an integer, got '" + *text + "'");
      return false;
    }
    if (v < min || v > max) {
      c.Error(n.mark, "must be between " + std::to_string(min) + " and " + std::to_string(max) + ", got " +
                          std::to_string(v));
      return false;
    }
    out = v;
    return true;
  };
  t.json = [min, max] {
    return boost::json::object{{"type", "integer"}, {"minimum", min}, {"maximum", max}};
  };
  return t;
}

Type<double> Number(double min, double max) {
  Type<double> t;
  t.read = [min, max](Context& c, const ConfigNode& n, double& out) {
    auto text = c.ScalarText(n, "a number");
    if (!text) return false;
    char* end = nullptr;
    double v = std::strtod(text->c_str(), &end);
    if (text->empty() || end != text->c_str() + text->size() || v != v) {
      c.Error(n.mark, "expected a number, got '" + *text + "'");
      return false;
    }
    if (v < min || v > max) {
      c.Error(n.mark, "must be between " + FormatMoney(Money::FromDouble(min)) + " and " +
                          FormatMoney(Money::FromDouble(max)) + ", got " + *text);
      return false;
    }
    out = v;
    return true;
  };
  t.json = [min, max] {
    return boost::json::object{{"type", "number"}, {"minimum", min}, {"maximum", max}};
  };
  return t;
}

Type<Duration> DurationType() {
  Type<Duration> t;
  t.read = [](Context& c, const ConfigNode& n, Duration& out) {
    auto text = c.ScalarText(n, "a duration like 90s, 20m, 1h30m or 2d");
    if (!text) return false;
    Result<Duration> d = ParseDuration(*text);
    if (!d.ok()) {
      c.Error(n.mark, d.status().message());
      return false;
    }
    out = *d;
    return true;
  };
  t.json = [] {
    return boost::json::object{{"type", "string"},
                               {"pattern", "^([0-9]+w)?([0-9]+d)?([0-9]+h)?([0-9]+m)?([0-9]+s)?([0-9]+ms)?$"},
                               {"examples", boost::json::array{"90s", "20m", "1h30m", "2d"}}};
  };
  return t;
}

Type<Duration> DurationAtLeast(Duration min) {
  return Validated<Duration>(DurationType(), [min](const Duration& d) {
    return d < min ? "must be at least " + FormatDuration(min) + ", got " + FormatDuration(d) : std::string();
  });
}

Type<Money> MoneyType() {
  Type<Money> t;
  t.read = [](Context& c, const ConfigNode& n, Money& out) {
    auto text = c.ScalarText(n, "an amount in USD like 6.50");
    if (!text) return false;
    Result<Money> m = ParseMoney(*text);
    if (!m.ok()) {
      c.Error(n.mark, m.status().message());
      return false;
    }
    if (m->micros() < 0) {
      c.Error(n.mark, "amount must not be negative");
      return false;
    }
    out = *m;
    return true;
  };
  t.json = [] {
    return boost::json::object{{"type", {"number", "string"}}, {"pattern", "^\\$?[0-9]+(\\.[0-9]{1,6})?$"},
                               {"minimum", 0}};
  };
  return t;
}

Type<Time> TimeType() {
  Type<Time> t;
  t.read = [](Context& c, const ConfigNode& n, Time& out) {
    auto text = c.ScalarText(n, "an RFC 3339 time like 2026-12-31T00:00:00Z");
    if (!text) return false;
    Result<Time> v = ParseTime(*text);
    if (!v.ok()) {
      c.Error(n.mark, v.status().message());
      return false;
    }
    out = *v;
    return true;
  };
  t.json = [] { return boost::json::object{{"type", "string"}, {"format", "date-time"}}; };
  return t;
}

Type<std::vector<std::string>> StringList() {
  Type<std::vector<std::string>> t;
  t.read = [](Context& c, const ConfigNode& n, std::vector<std::string>& out) {
    out.clear();
    if (n.IsScalar()) {
      auto v = c.ScalarText(n, "a string");
      if (!v) return false;
      out.push_back(*v);
      return true;
    }
    if (!n.IsSequence()) {
      c.Error(n.mark, "expected a list of strings, got " + n.Describe());
      return false;
    }
    bool ok = true;
    for (size_t i = 0; i < n.items.size(); ++i) {
      PathScope scope(c, i);
      auto v = c.ScalarText(n.items[i], "a string");
      if (v) {
        out.push_back(*v);
      } else {
        ok = false;
      }
    }
    return ok;
  };
  t.json = [] {
    return boost::json::object{
        {"oneOf", boost::json::array{boost::json::object{{"type", "string"}},
                                     boost::json::object{{"type", "array"}, {"items", {{"type", "string"}}}}}}};
  };
  return t;
}

}  // namespace loopwarden::schema
