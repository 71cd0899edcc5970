#include <doctest/doctest.h>

#include <boost/json/serialize.hpp>
#include <map>

#include "core/schema.h"
#include "core/secrets.h"

namespace lw = loopwarden;
namespace schema = loopwarden::schema;
using namespace std::chrono_literals;

namespace {

struct Inner {
  std::string host;
  int64_t port = 0;
};

struct Doc {
  std::string name;
  lw::Duration every{60s};
  bool enabled = false;
  std::vector<Inner> inners;
  std::map<std::string, lw::Money> prices;
  schema::Secret key;
  std::optional<lw::Time> until;
};

schema::Type<Doc> DocType() {
  schema::Object<Inner> inner("inner");
  inner.Field("host", &Inner::host, schema::String(), {.required = true});
  inner.Field("port", &Inner::port, schema::Integer(1, 65535));
  schema::Object<Doc> o("doc");
  o.Field("name", &Doc::name, schema::String(), {.required = true, .description = "the name"});
  o.Field("every", &Doc::every, schema::DurationType());
  o.Field("enabled", &Doc::enabled, schema::Bool());
  o.Field("inners", &Doc::inners, schema::ListOf(inner.Build()));
  o.Field("prices", &Doc::prices, schema::MapOf(schema::MoneyType()));
  o.SecretField("key", &Doc::key, {.description = "a key"});
  o.Optional("until", &Doc::until, schema::TimeType());
  return o.Build();
}

struct Loaded {
  std::optional<Doc> doc;
  std::vector<std::string> errors;
};

Loaded Load(const std::string& text, std::map<std::string, std::string> env = {}) {
  auto root = lw::ParseConfigText(text, "t.yaml");
  REQUIRE(root.ok());
  schema::Context ctx("t.yaml");
  ctx.set_env([env](const std::string& k) -> std::optional<std::string> {
    auto it = env.find(k);
    if (it == env.end()) return std::nullopt;
    return it->second;
  });
  ctx.set_file_reader([](const std::string& p) -> lw::Result<std::string> {
    if (p == "/run/creds/key") return std::string("file-secret-value\n");
    return lw::NotFound(p);
  });
  Doc d;
  Loaded out;
  if (DocType().read(ctx, *root, d)) out.doc = d;
  for (const auto& diag : ctx.diagnostics()) out.errors.push_back(diag.ToString());
  return out;
}

}  // namespace

TEST_CASE("a valid document reads into the struct") {
  auto r = Load("name: x\nevery: 1h30m\nenabled: true\ninners: [{host: a, port: 80}]\nprices: {H100: 6.50}\n"
                "key_env: KEY\nuntil: 2026-12-31T00:00:00Z\n",
                {{"KEY", "env-secret-value"}});
  REQUIRE(r.errors.empty());
  REQUIRE(r.doc);
  CHECK(r.doc->every == 90min);
  CHECK(r.doc->enabled);
  CHECK(r.doc->inners.at(0).port == 80);
  CHECK(r.doc->prices.at("H100").micros() == 6'500'000);
  CHECK(r.doc->key.value == "env-secret-value");
  CHECK(r.doc->key.source == "env KEY");
  CHECK(r.doc->until.has_value());
  CHECK(lw::ContainsSecret("prefix env-secret-value suffix"));
}

TEST_CASE("every error is reported with its place, path and a suggestion") {
  auto r = Load("nmae: x\nevery: soon\nenabled: yes\ninners:\n  - {hots: a, port: 99999}\nprices: {H100: six}\n");
  CHECK(r.errors == std::vector<std::string>{
                        "t.yaml:1:1: unknown key 'nmae' (did you mean 'name'?)",
                        "t.yaml:2:8: every: invalid duration 'soon': expected a number (examples: 90s, 20m, 1h30m, 2d)",
                        "t.yaml:3:10: enabled: expected true or false, got 'yes'",
                        "t.yaml:5:6: inners[0]: unknown key 'hots' (did you mean 'host'?)",
                        "t.yaml:5:21: inners[0].port: must be between 1 and 65535, got 99999",
                        "t.yaml:5:5: inners[0]: missing required key 'host'",
                        "t.yaml:6:16: prices.H100: invalid amount 'six': expected digits (examples: 6.50, 0.248, 500)",
                        "t.yaml:1:1: missing required key 'name'",
                    });
}

TEST_CASE("secrets only through indirection, and exactly one form") {
  auto inline_key = Load("name: x\nkey: sk-live-123456\n");
  REQUIRE(inline_key.errors.size() == 1);
  CHECK(inline_key.errors[0] == "t.yaml:2:6: key: inline secrets are not allowed; use key_env or key_file");
  auto both = Load("name: x\nkey_env: A\nkey_file: /run/creds/key\n", {{"A", "aaaaaa"}});
  CHECK(both.errors == std::vector<std::string>{"t.yaml:1:1: set only one of 'key_env' and 'key_file'"});
  auto unset = Load("name: x\nkey_env: NOPE\n");
  CHECK(unset.errors == std::vector<std::string>{"t.yaml:2:10: key_env: environment variable NOPE is not set"});
  auto file = Load("name: x\nkey_file: /run/creds/key\n");
  REQUIRE(file.doc);
  CHECK(file.doc->key.value == "file-secret-value");
  auto missing_file = Load("name: x\nkey_file: /run/creds/other\n");
  CHECK(missing_file.errors ==
        std::vector<std::string>{"t.yaml:2:11: key_file: cannot read secret file /run/creds/other"});
}

TEST_CASE("${ENV} expands in scalars, with defaults and $$ escapes") {
  auto r = Load("name: ${WHO}-$${x}-${MISSING:-dflt}\n", {{"WHO", "ana"}});
  REQUIRE(r.doc);
  CHECK(r.doc->name == "ana-${x}-dflt");
  auto bad = Load("name: ${WHO\n");
  CHECK(bad.errors == std::vector<std::string>{"t.yaml:1:7: name: unterminated ${ in '${WHO'"});
}

TEST_CASE("duplicate keys are errors naming the first") {
  auto r = Load("name: a\nname: b\n");
  CHECK(r.errors == std::vector<std::string>{"t.yaml:2:1: duplicate key 'name' (first at line 1)"});
}

TEST_CASE("the JSON Schema comes from the same definition") {
  std::string js = boost::json::serialize(DocType().json());
  CHECK(js.find("\"additionalProperties\":false") != std::string::npos);
  CHECK(js.find("\"key_env\"") != std::string::npos);
  CHECK(js.find("\"key_file\"") != std::string::npos);
  CHECK(js.find("\"required\":[\"name\"]") != std::string::npos);
  CHECK(js.find("\"description\":\"the name\"") != std::string::npos);
  // The inline form is not a property: additionalProperties rejects it.
  CHECK(js.find("\"key\":") == std::string::npos);
}
