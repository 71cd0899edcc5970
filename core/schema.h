#pragma once
// Declarative, strict readers from ConfigNode trees into structs.
//
// One definition per struct says which keys exist, their types, which are required and
// what they mean. From it come both the reader (every error with file:line:col, the key
// path and, for a misspelt key, the nearest valid one) and the JSON Schema that
// `loopwarden check --schema` prints, so the two cannot drift apart.
//
//   schema::Object<Limits> o("Blast-radius caps");
//   o.Field("max_actions_per_cycle", &Limits::max_actions_per_cycle, schema::Integer(0, 10000),
//           {.description = "…"});
//   schema::Type<Limits> t = o.Build();
//
// Readers collect every error rather than stopping at the first. Scalars expand
// ${VAR} from the environment ($$ is a literal $). Secrets are read only through
// `<key>_env` / `<key>_file`; an inline `<key>` is an error.

#include <boost/json/object.hpp>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/config_tree.h"
#include "core/money.h"
#include "core/time.h"

namespace loopwarden::schema {

struct Diagnostic {
  std::string origin;
  SourceMark mark;
  std::string message;
  // "config.yaml:12:5: providers[0]: unknown key 'bse_url' (did you mean 'base_url'?)"
  std::string ToString() const;
};

// A secret read through indirection. `value` is registered with the redactor when read.
struct Secret {
  std::string value;
  std::string source;  // "env BASETEN_API_KEY" or "file /run/credentials/…": safe to print
  bool set() const { return !source.empty(); }
};

class Context {
 public:
  using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;
  using FileReader = std::function<Result<std::string>(const std::string&)>;

  // `origin` names the document in messages (usually its path).
  explicit Context(std::string origin);

  void set_env(EnvLookup env) { env_ = std::move(env); }
  void set_file_reader(FileReader r) { read_file_ = std::move(r); }
  // When false, secrets are checked for shape but not read (no env or file access).
  void set_resolve_secrets(bool on) { resolve_secrets_ = on; }
  bool resolve_secrets() const { return resolve_secrets_; }

  // Records an error at `at`, prefixed with the current key path.
  void Error(SourceMark at, const std::string& message);
  // Records an error about `key` of `map` (at the key's value, else at the map), with
  // the key appended to the path: "providers[0].base_url: …".
  void KeyError(const ConfigNode& map, std::string_view key, const std::string& message);
  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }
  size_t error_count() const { return diagnostics_.size(); }
  const std::string& origin() const { return origin_; }

  // Key path for messages: "providers[1].base_url".
  std::string path() const;
  void PushKey(std::string key) { path_.push_back("." + std::move(key)); }
  void PushIndex(size_t i) { path_.push_back("[" + std::to_string(i) + "]"); }
  void Pop() { path_.pop_back(); }

  // The scalar's text with ${VAR} expanded. Reports an error (naming `expected`) and
  // returns nothing when the node is not a scalar or a variable is unset.
  std::optional<std::string> ScalarText(const ConfigNode& n, std::string_view expected);
  std::optional<std::string> Env(const std::string& name) const { return env_(name); }
  Result<std::string> ReadFile(const std::string& path) const { return read_file_(path); }

 private:
  std::string origin_;
  EnvLookup env_;
  FileReader read_file_;
  bool resolve_secrets_ = true;
  std::vector<std::string> path_;
  std::vector<Diagnostic> diagnostics_;
};

// Scoped key path element.
class PathScope {
 public:
  PathScope(Context& ctx, std::string key) : ctx_(ctx) { ctx_.PushKey(std::move(key)); }
  PathScope(Context& ctx, size_t index) : ctx_(ctx) { ctx_.PushIndex(index); }
  ~PathScope() { ctx_.Pop(); }
  PathScope(const PathScope&) = delete;
  PathScope& operator=(const PathScope&) = delete;

 private:
  Context& ctx_;
};

// How to read one T and how to describe it in JSON Schema.
template <class T>
struct Type {
  // Returns false after reporting at least one error.
  std::function<bool(Context&, const ConfigNode&, T&)> read;
  std::function<boost::json::object()> json;
};

Type<std::string> String(std::string description = {});
// A string that must compile as an ECMAScript regular expression.
Type<std::string> Regex();
Type<bool> Bool();
Type<int64_t> Integer(int64_t min, int64_t max);
Type<double> Number(double min, double max);
Type<Duration> DurationType();
Type<Money> MoneyType();
Type<Time> TimeType();
// A list of strings; a single scalar is accepted as a one-item list.
Type<std::vector<std::string>> StringList();

// `base` plus a check of the value read; `check` returns an error message, or an
// empty string when the value is acceptable.
template <class T>
Type<T> Validated(Type<T> base, std::function<std::string(const T&)> check) {
  Type<T> t;
  auto read = base.read;
  t.read = [read, check](Context& c, const ConfigNode& n, T& out) {
    if (!read(c, n, out)) return false;
    std::string err = check(out);
    if (err.empty()) return true;
    c.Error(n.mark, err);
    return false;
  };
  t.json = base.json;
  return t;
}
// A duration of at least `min`.
Type<Duration> DurationAtLeast(Duration min);

// Reads a scalar that must be one of `values`; a typo gets the nearest as a suggestion.
template <class E>
Type<E> Enum(std::vector<std::pair<std::string, E>> values);

template <class T>
Type<std::vector<T>> ListOf(Type<T> item);

template <class T>
Type<std::map<std::string, T>> MapOf(Type<T> value);

struct FieldOptions {
  bool required = false;
  std::string description;
};

// JSON Schema helpers used by the templates and by hand-written types.
boost::json::object WithDescription(boost::json::object o, const std::string& description);
// Reports duplicate keys in a map node; returns false when there were any.
bool CheckDuplicateKeys(Context& ctx, const ConfigNode& map);
// Reports an unknown key with a suggestion from `known`.
void UnknownKey(Context& ctx, const ConfigNode::Entry& e, const std::vector<std::string>& known);
// Reads a secret through `<base>_env` / `<base>_file` entries of `map` (see Object::SecretField).
bool ReadSecretEnv(Context& ctx, const ConfigNode& n, Secret& out);
bool ReadSecretFile(Context& ctx, const ConfigNode& n, Secret& out);

template <class S>
class Object {
 public:
  explicit Object(std::string description = {}) : description_(std::move(description)) {}

  template <class F>
  Object& Field(std::string key, F S::*member, Type<F> type, FieldOptions opts = {}) {
    auto read = type.read;
    fields_.push_back({key, opts.required, opts.description, true,
                       [read, member](Context& c, const ConfigNode& n, S& s) { return read(c, n, s.*member); },
                       type.json});
    return *this;
  }

  // Optional value without a default: absent stays std::nullopt.
  template <class F>
  Object& Optional(std::string key, std::optional<F> S::*member, Type<F> type, FieldOptions opts = {}) {
    auto read = type.read;
    fields_.push_back({key, false, opts.description, true,
                       [read, member](Context& c, const ConfigNode& n, S& s) {
                         F v{};
                         if (!read(c, n, v)) return false;
                         s.*member = std::move(v);
                         return true;
                       },
                       type.json});
    return *this;
  }

  // A secret: accepts `<key>_env: VAR` or `<key>_file: PATH` (exactly one), rejects an
  // inline `<key>:` value.
  Object& SecretField(std::string key, Secret S::*member, FieldOptions opts = {}) {
    const std::string env_key = key + "_env";
    const std::string file_key = key + "_file";
    fields_.push_back({key, false, "", false,
                       [env_key, file_key](Context& c, const ConfigNode& n, S&) {
                         c.Error(n.mark, "inline secrets are not allowed; use " + env_key + " or " + file_key);
                         return false;
                       },
                       nullptr});
    fields_.push_back({env_key, false, "Name of the environment variable holding " + opts.description, true,
                       [member](Context& c, const ConfigNode& n, S& s) { return ReadSecretEnv(c, n, s.*member); },
                       [] { return boost::json::object{{"type", "string"}}; }});
    fields_.push_back({file_key, false, "Path of a file holding " + opts.description, true,
                       [member](Context& c, const ConfigNode& n, S& s) { return ReadSecretFile(c, n, s.*member); },
                       [] { return boost::json::object{{"type", "string"}}; }});
    secrets_.push_back({key, opts.required, member});
    return *this;
  }

  // Cross-field validation, run when the object itself read without errors.
  Object& Check(std::function<void(Context&, const ConfigNode&, S&)> check) {
    checks_.push_back(std::move(check));
    return *this;
  }

  // Extra JSON Schema keywords for the object (e.g. conditional requirements).
  Object& JsonExtra(std::function<void(boost::json::object&)> extra) {
    json_extra_.push_back(std::move(extra));
    return *this;
  }

  std::vector<std::string> keys() const {
    std::vector<std::string> out;
    for (const auto& f : fields_) {
      if (f.in_schema) out.push_back(f.key);
    }
    return out;
  }

  Type<S> Build() const {
    auto self = std::make_shared<const Object>(*this);
    Type<S> t;
    t.read = [self](Context& c, const ConfigNode& n, S& s) { return self->Read(c, n, s); };
    t.json = [self] { return self->Json(); };
    return t;
  }

 private:
  struct FieldDesc {
    std::string key;
    bool required;
    std::string description;
    bool in_schema;
    std::function<bool(Context&, const ConfigNode&, S&)> read;
    std::function<boost::json::object()> json;
  };
  struct SecretDesc {
    std::string key;
    bool required;
    Secret S::*member;
  };

  bool Read(Context& c, const ConfigNode& n, S& s) const {
    if (!n.IsMap()) {
      c.Error(n.mark, "expected a map, got " + n.Describe());
      return false;
    }
    const size_t errors_before = c.error_count();
    CheckDuplicateKeys(c, n);
    const std::vector<std::string> known = keys();
    for (const ConfigNode::Entry& e : n.entries) {
      const FieldDesc* f = nullptr;
      for (const FieldDesc& d : fields_) {
        if (d.key == e.key) {
          f = &d;
          break;
        }
      }
      if (f == nullptr) {
        UnknownKey(c, e, known);
        continue;
      }
      PathScope scope(c, e.key);
      if (e.value.IsNull() && f->in_schema) {
        c.Error(e.value.mark.line ? e.value.mark : e.key_mark, "has no value");
        continue;
      }
      f->read(c, e.value, s);
    }
    for (const FieldDesc& d : fields_) {
      if (d.required && n.Find(d.key) == nullptr) c.Error(n.mark, "missing required key '" + d.key + "'");
    }
    for (const SecretDesc& sd : secrets_) {
      const bool has_env = n.Find(sd.key + "_env") != nullptr;
      const bool has_file = n.Find(sd.key + "_file") != nullptr;
      if (has_env && has_file) {
        c.Error(n.mark, "set only one of '" + sd.key + "_env' and '" + sd.key + "_file'");
      } else if (sd.required && !has_env && !has_file && n.Find(sd.key) == nullptr) {
        c.Error(n.mark, "missing required key '" + sd.key + "_env' or '" + sd.key + "_file'");
      }
    }
    if (c.error_count() != errors_before) return false;
    for (const auto& check : checks_) check(c, n, s);
    return c.error_count() == errors_before;
  }

  boost::json::object Json() const {
    boost::json::object props;
    boost::json::array required;
    for (const FieldDesc& f : fields_) {
      if (!f.in_schema) continue;
      props[f.key] = WithDescription(f.json(), f.description);
      if (f.required) required.push_back(boost::json::value(f.key));
    }
    boost::json::object o{{"type", "object"}, {"additionalProperties", false}};
    o["properties"] = std::move(props);
    if (!required.empty()) o["required"] = std::move(required);
    for (const auto& x : json_extra_) x(o);
    return WithDescription(std::move(o), description_);
  }

  std::string description_;
  std::vector<FieldDesc> fields_;
  std::vector<SecretDesc> secrets_;
  std::vector<std::function<void(Context&, const ConfigNode&, S&)>> checks_;
  std::vector<std::function<void(boost::json::object&)>> json_extra_;
};

// ---- template definitions ----

void ReportEnumError(Context& ctx, const ConfigNode& n, const std::string& text,
                     const std::vector<std::string>& names);

template <class E>
Type<E> Enum(std::vector<std::pair<std::string, E>> values) {
  auto vals = std::make_shared<const std::vector<std::pair<std::string, E>>>(std::move(values));
  Type<E> t;
  t.read = [vals](Context& c, const ConfigNode& n, E& out) {
    std::vector<std::string> names;
    for (const auto& [name, v] : *vals) names.push_back(name);
    auto text = c.ScalarText(n, "one of the listed values");
    if (!text) return false;
    for (const auto& [name, v] : *vals) {
      if (name == *text) {
        out = v;
        return true;
      }
    }
    ReportEnumError(c, n, *text, names);
    return false;
  };
  t.json = [vals] {
    boost::json::array a;
    for (const auto& [name, v] : *vals) a.push_back(boost::json::value(name));
    return boost::json::object{{"type", "string"}, {"enum", std::move(a)}};
  };
  return t;
}

template <class T>
Type<std::vector<T>> ListOf(Type<T> item) {
  Type<std::vector<T>> t;
  auto read = item.read;
  t.read = [read](Context& c, const ConfigNode& n, std::vector<T>& out) {
    if (!n.IsSequence()) {
      c.Error(n.mark, "expected a list, got " + n.Describe());
      return false;
    }
    bool ok = true;
    out.clear();
    for (size_t i = 0; i < n.items.size(); ++i) {
      PathScope scope(c, i);
      T v{};
      if (read(c, n.items[i], v)) {
        out.push_back(std::move(v));
      } else {
        ok = false;
      }
    }
    return ok;
  };
  auto json = item.json;
  t.json = [json] { return boost::json::object{{"type", "array"}, {"items", json()}}; };
  return t;
}

template <class T>
Type<std::map<std::string, T>> MapOf(Type<T> value) {
  Type<std::map<std::string, T>> t;
  auto read = value.read;
  t.read = [read](Context& c, const ConfigNode& n, std::map<std::string, T>& out) {
    if (!n.IsMap()) {
      c.Error(n.mark, "expected a map, got " + n.Describe());
      return false;
    }
    bool ok = CheckDuplicateKeys(c, n);
    for (const ConfigNode::Entry& e : n.entries) {
      PathScope scope(c, e.key);
      T v{};
      if (read(c, e.value, v)) {
        out[e.key] = std::move(v);
      } else {
        ok = false;
      }
    }
    return ok;
  };
  auto json = value.json;
  t.json = [json] { return boost::json::object{{"type", "object"}, {"additionalProperties", json()}}; };
  return t;
}

// Reads a whole document with `type`; returns the value or every diagnostic.
template <class T>
Result<T> ReadDocument(Context& ctx, const ConfigNode& root, const Type<T>& type) {
  T out{};
  type.read(ctx, root, out);
  if (ctx.error_count() > 0) {
    std::string all;
    for (const Diagnostic& d : ctx.diagnostics()) all += (all.empty() ? "" : "\n") + d.ToString();
    return InvalidArgument(all);
  }
  return out;
}

}  // namespace loopwarden::schema
