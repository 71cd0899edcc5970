// Resource <-> JSON for the resources.data column, and the change fingerprint.
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <charconv>
#include <cstdio>
#include <cstring>

#include "core/hash.h"
#include "core/json.h"
#include "core/strings.h"
#include "store/store.h"

namespace loopwarden::store {
namespace {

namespace bj = boost::json;

using Hasher = FieldHasher;

std::optional<Time> ReadTime(const bj::object& o, std::string_view k) {
  auto v = json::Int(o, k);
  if (!v) return std::nullopt;
  return FromUnixMicros(*v);
}

}  // namespace

uint64_t StoredCountersFingerprint(std::string_view text) {
  // "#" and 16 hex digits: the value itself. No counters text starts with "#".
  if (text.size() == 17 && text[0] == '#') {
    uint64_t v = 0;
    bool hex = true;
    for (char c : text.substr(1)) {
      const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
      if (d < 0) hex = false;
      v = v << 4 | static_cast<uint64_t>(d & 15);
    }
    if (hex) return v;
  }
  return CountersFingerprint(text);
}

std::string StoredCountersText(uint64_t fingerprint) {
  if (fingerprint == 0) return {};
  char buf[18];
  std::snprintf(buf, sizeof buf, "#%016llx", static_cast<unsigned long long>(fingerprint));
  return buf;
}

uint64_t Fingerprint(const Resource& r) {
  Hasher h;
  h.Add(r.name);
  h.Add(r.owner);
  h.Add(r.team);
  h.Add(r.base_model);
  h.Add(r.native_status);
  h.Add(static_cast<int64_t>(r.lifecycle));
  h.Add(r.transitional);
  h.Add(static_cast<int64_t>(r.mode));
  h.Add(r.availability);
  h.Add(static_cast<int64_t>(r.billing.meter));
  h.Add(r.billing.gpu_type);
  h.Add(static_cast<int64_t>(r.billing.gpus_per_replica));
  h.Add(static_cast<int64_t>(r.billing.replicas));
  h.Add(r.billing.billable);
  h.Add(r.billing.price_per_gpu_hour ? r.billing.price_per_gpu_hour->micros() : -1);
  h.Add(r.created_at);
  const Checkpoints& c = *r.checkpoints;
  h.Add(c.known);
  h.Add(c.reachable);
  h.Add(static_cast<int64_t>(c.count));
  h.Add(c.newest_at);
  h.Add(static_cast<int64_t>(c.unpromoted));
  h.Add(c.syncing);
  h.Add(c.newest_promotable);
  h.Add(c.newest_promotable_promoted);
  for (const auto& [k, v] : r.labels) {
    h.Add(k);
    h.Add(v);
  }
  // By name, in Flag order: a resource with one flag hashes as it did when flags were
  // a list of names.
  for (Flag f : AllFlags()) {  // no vector per resource: this runs for every listed one, every poll
    if (r.flags.contains(f)) h.Add(FlagName(f));
  }
  h.Add(r.parent_id);
  h.Add(r.native_timeout ? r.native_timeout->count() : -1);
  for (const auto& [k, v] : r.refs) {
    h.Add(k);
    h.Add(v);
  }
  return h.value();
}

// Only what differs from a default-constructed Resource is written: ResourceFromJson
// reads a missing key as its default, so rows written before (every key present) and
// after read alike. At 115k resources this took the table from 140 MB to about half.
namespace {

// Everything but the identity and the fields the resources table holds as columns.
bj::object Body(const Resource& r) {
  auto put_str = [](bj::object& o, std::string_view k, const std::string& v) {
    if (!v.empty()) o[k] = v;
  };
  auto put_int = [](bj::object& o, std::string_view k, int64_t v) {
    if (v != 0) o[k] = v;
  };
  auto put_true = [](bj::object& o, std::string_view k, bool v) {
    if (v) o[k] = true;
  };
  auto put_time = [](bj::object& o, std::string_view k, const std::optional<Time>& t) {
    if (t) o[k] = ToUnixMicros(*t);
  };
  bj::object billing;
  if (r.billing.meter != Meter::kNone) billing["meter"] = MeterName(r.billing.meter);
  put_str(billing, "gpu_type", r.billing.gpu_type);
  put_int(billing, "gpus_per_replica", r.billing.gpus_per_replica);
  put_int(billing, "replicas", r.billing.replicas);
  put_true(billing, "billable", r.billing.billable);
  if (r.billing.price_per_gpu_hour) billing["price_per_gpu_hour"] = r.billing.price_per_gpu_hour->micros();
  const Checkpoints& c = *r.checkpoints;
  bj::object ck;
  put_true(ck, "known", c.known);
  if (!c.reachable) ck["reachable"] = false;  // reachable by default
  put_int(ck, "count", c.count);
  put_time(ck, "newest_at", c.newest_at);
  put_int(ck, "promotable", c.promotable);
  put_int(ck, "unpromoted", c.unpromoted);
  put_true(ck, "syncing", c.syncing);
  put_str(ck, "newest_promotable", c.newest_promotable);
  put_str(ck, "newest_promotable_name", c.newest_promotable_name);
  put_time(ck, "newest_promotable_at", c.newest_promotable_at);
  put_true(ck, "newest_promotable_promoted", c.newest_promotable_promoted);
  bj::object o;
  put_str(o, "team", r.team);
  put_true(o, "transitional", r.transitional);
  if (r.mode != Mode::kNone) o["mode"] = ModeName(r.mode);
  put_str(o, "availability", r.availability);
  if (!billing.empty()) o["billing"] = std::move(billing);
  if (!ck.empty()) o["checkpoints"] = std::move(ck);
  if (!r.labels.empty()) {
    bj::object labels;
    for (const auto& [k, v] : r.labels) labels[k.view()] = v;
    o["labels"] = std::move(labels);
  }
  if (!r.flags.empty()) {
    bj::array flags;
    for (Flag f : r.flags.items()) flags.push_back(bj::value(FlagName(f)));
    o["flags"] = std::move(flags);
  }
  put_str(o, "parent_id", r.parent_id);
  if (r.native_timeout) o["native_timeout_us"] = r.native_timeout->count();
  if (!r.refs.empty()) {
    bj::object refs;
    for (const auto& [k, v] : r.refs) refs[k.view()] = v.view();
    o["refs"] = std::move(refs);
  }
  return o;
}

}  // namespace

std::string ResourceToJson(const Resource& r) {
  bj::object o = Body(r);
  auto put_str = [&o](std::string_view k, const std::string& v) {
    if (!v.empty()) o[k] = v;
  };
  // Identity and lifecycle always, so a row reads on its own.
  o["provider_type"] = ProviderTypeName(r.provider_type);
  o["provider"] = r.provider.view();
  o["account"] = r.account.view();
  o["kind"] = KindName(r.kind);
  o["id"] = r.id.view();
  o["lifecycle"] = LifecycleName(r.lifecycle);
  put_str("name", r.name);
  put_str("owner", r.owner);
  put_str("base_model", r.base_model);
  put_str("native_status", r.native_status);
  if (r.created_at) o["created_at"] = ToUnixMicros(*r.created_at);
  return bj::serialize(o);
}

namespace {

// One JSON object's members, written in order straight into a string. The `data`
// column of every resource a poll inserts or changes is written this way: built as a
// boost::json::object and serialized, it cost about 10,000 instructions a resource
// (a first poll of 100k: 1.2 G), most of them the object's own hashing and growing.
class MemberWriter {
 public:
  explicit MemberWriter(std::string& out) : out_(out) {}
  std::string& Key(std::string_view k) {
    if (count_++ > 0) out_ += ',';
    out_ += '"';
    out_ += k;  // a literal: nothing to escape (provider text goes through QuotedKey)
    out_ += "\":";
    return out_;
  }
  void Str(std::string_view k, std::string_view v) {
    if (!v.empty()) AppendJsonQuoted(Key(k), v);
  }
  void Int(std::string_view k, int64_t v) {
    if (v != 0) AppendInt(Key(k), v);
  }
  void True(std::string_view k, bool v) {
    if (v) Key(k) += "true";
  }
  void Time(std::string_view k, const std::optional<loopwarden::Time>& t) {
    if (t) AppendInt(Key(k), ToUnixMicros(*t));
  }
  // A member whose key is provider text (labels, refs).
  std::string& QuotedKey(std::string_view k) {
    if (count_++ > 0) out_ += ',';
    AppendJsonQuoted(out_, k);
    out_ += ':';
    return out_;
  }
  // An object member written only when it has members: Open, write them with a writer
  // over the same string, Close with that writer.
  size_t Open(std::string_view k) {
    const size_t mark = out_.size();
    Key(k) += '{';
    return mark;
  }
  void Close(size_t mark, const MemberWriter& inner) {
    if (inner.count_ == 0) {
      out_.resize(mark);
      --count_;
    } else {
      out_ += '}';
    }
  }
  static void AppendInt(std::string& out, int64_t v) {
    char buf[24];
    const auto res = std::to_chars(buf, buf + sizeof buf, v);
    out.append(buf, res.ptr);
  }

 private:
  std::string& out_;
  int count_ = 0;
};

}  // namespace

std::string ResourceDataJson(const Resource& r) {
  // The members and their order are Body's; ResourceFromRow reads either.
  std::string out;
  out.reserve(160);
  out += '{';
  MemberWriter o(out);
  o.Str("team", r.team.view());
  o.True("transitional", r.transitional);
  if (r.mode != Mode::kNone) AppendJsonQuoted(o.Key("mode"), ModeName(r.mode));
  o.Str("availability", r.availability.view());
  {
    const size_t mark = o.Open("billing");
    MemberWriter b(out);
    if (r.billing.meter != Meter::kNone) AppendJsonQuoted(b.Key("meter"), MeterName(r.billing.meter));
    b.Str("gpu_type", r.billing.gpu_type.view());
    b.Int("gpus_per_replica", r.billing.gpus_per_replica);
    b.Int("replicas", r.billing.replicas);
    b.True("billable", r.billing.billable);
    if (r.billing.price_per_gpu_hour) MemberWriter::AppendInt(b.Key("price_per_gpu_hour"), r.billing.price_per_gpu_hour->micros());
    o.Close(mark, b);
  }
  {
    const Checkpoints& c = *r.checkpoints;
    const size_t mark = o.Open("checkpoints");
    MemberWriter k(out);
    k.True("known", c.known);
    if (!c.reachable) k.Key("reachable") += "false";  // reachable by default
    k.Int("count", c.count);
    k.Time("newest_at", c.newest_at);
    k.Int("promotable", c.promotable);
    k.Int("unpromoted", c.unpromoted);
    k.True("syncing", c.syncing);
    k.Str("newest_promotable", c.newest_promotable);
    k.Str("newest_promotable_name", c.newest_promotable_name);
    k.Time("newest_promotable_at", c.newest_promotable_at);
    k.True("newest_promotable_promoted", c.newest_promotable_promoted);
    o.Close(mark, k);
  }
  if (!r.labels.empty()) {
    const size_t mark = o.Open("labels");
    MemberWriter l(out);
    for (const auto& [key, value] : r.labels) AppendJsonQuoted(l.QuotedKey(key), value);
    o.Close(mark, l);
  }
  if (!r.flags.empty()) {
    std::string& f = o.Key("flags");
    f += '[';
    bool first = true;
    for (Flag flag : AllFlags()) {
      if (!r.flags.contains(flag)) continue;
      if (!first) f += ',';
      first = false;
      AppendJsonQuoted(f, FlagName(flag));
    }
    f += ']';
  }
  o.Str("parent_id", r.parent_id);
  if (r.native_timeout) MemberWriter::AppendInt(o.Key("native_timeout_us"), r.native_timeout->count());
  {
    // A Fireworks object's own name is left out (the adapter does not keep it either;
    // rows from before it did read back without it).
    const size_t mark = o.Open("refs");
    MemberWriter refs(out);
    for (const auto& [key, value] : r.refs) {
      if (key == "name" && IsFireworksResourceName(value, r.kind, r.account.view(), r.id)) continue;
      AppendJsonQuoted(refs.QuotedKey(key), value);
    }
    o.Close(mark, refs);
  }
  out += '}';
  return out;
}

namespace {

void ReadBody(const bj::object& o, Resource& r) {
  r.team = json::Str(o, "team").value_or("");
  r.transitional = json::Bool(o, "transitional").value_or(false);
  const std::string mode = json::Str(o, "mode").value_or("");
  r.mode = mode == "serverless" ? Mode::kServerless : mode == "dedicated" ? Mode::kDedicated : Mode::kNone;
  r.availability = json::Str(o, "availability").value_or("");
  if (const bj::object* b = json::Obj(o, "billing")) {
    const std::string meter = json::Str(*b, "meter").value_or("none");
    r.billing.meter = meter == "gpu_time" ? Meter::kGpuTime : meter == "tokens" ? Meter::kTokens : Meter::kNone;
    r.billing.gpu_type = json::Str(*b, "gpu_type").value_or("");
    r.billing.gpus_per_replica = static_cast<int>(json::Int(*b, "gpus_per_replica").value_or(0));
    r.billing.replicas = static_cast<int>(json::Int(*b, "replicas").value_or(0));
    r.billing.billable = json::Bool(*b, "billable").value_or(false);
    if (auto p = json::Int(*b, "price_per_gpu_hour")) r.billing.price_per_gpu_hour = Money::FromMicros(*p);
  }
  if (const bj::object* c = json::Obj(o, "checkpoints")) {
    Checkpoints& k = r.checkpoints.Mutable();
    k.known = json::Bool(*c, "known").value_or(false);
    k.reachable = json::Bool(*c, "reachable").value_or(true);
    k.count = static_cast<int>(json::Int(*c, "count").value_or(0));
    k.newest_at = ReadTime(*c, "newest_at");
    k.promotable = static_cast<int>(json::Int(*c, "promotable").value_or(0));
    k.unpromoted = static_cast<int>(json::Int(*c, "unpromoted").value_or(0));
    k.syncing = json::Bool(*c, "syncing").value_or(false);
    k.newest_promotable = json::Str(*c, "newest_promotable").value_or("");
    k.newest_promotable_name = json::Str(*c, "newest_promotable_name").value_or("");
    k.newest_promotable_at = ReadTime(*c, "newest_promotable_at");
    k.newest_promotable_promoted = json::Bool(*c, "newest_promotable_promoted").value_or(false);
  }
  if (const bj::object* l = json::Obj(o, "labels")) {
    for (const auto& kv : *l) {
      if (kv.value().is_string()) r.labels[std::string(kv.key())] = std::string(kv.value().get_string());
    }
  }
  if (const bj::object* l = json::Obj(o, "refs")) {
    for (const auto& kv : *l) {
      if (kv.value().is_string()) r.refs[std::string(kv.key())] = std::string(kv.value().get_string());
    }
  }
  // "tokens", in rows before 2026-12-05, is not read: the counters table holds them.
  if (const bj::array* f = json::Arr(o, "flags")) {
    for (const auto& x : *f) {
      // A name that is no Flag (none was written) is left out: no policy can name it.
      if (!x.is_string()) continue;
      if (auto flag = ParseFlag(std::string_view(x.get_string()))) r.flags.insert(*flag);
    }
  }
  r.parent_id = json::Str(o, "parent_id").value_or("");
  if (auto t = json::Int(o, "native_timeout_us")) r.native_timeout = Duration(*t);
}

}  // namespace

Result<Resource> ResourceFromJson(std::string_view text) {
  LW_ASSIGN_OR_RETURN(bj::value v, json::Parse(text, "stored resource"));
  if (!v.is_object()) return DataLoss("stored resource is not an object");
  const bj::object& o = v.get_object();
  Resource r;
  auto kind = ParseKind(json::Str(o, "kind").value_or(""));
  auto pt = ParseProviderType(json::Str(o, "provider_type").value_or(""));
  auto lc = ParseLifecycle(json::Str(o, "lifecycle").value_or(""));
  if (!kind || !pt || !lc) return DataLoss("stored resource has an unknown kind, provider or lifecycle");
  r.kind = *kind;
  r.provider_type = *pt;
  r.lifecycle = *lc;
  r.provider = json::Str(o, "provider").value_or("");
  r.account = json::Str(o, "account").value_or("");
  r.id = json::Str(o, "id").value_or("");
  r.name = json::Str(o, "name").value_or("");
  r.owner = json::Str(o, "owner").value_or("");
  r.base_model = json::Str(o, "base_model").value_or("");
  r.native_status = json::Str(o, "native_status").value_or("");
  r.created_at = ReadTime(o, "created_at");
  ReadBody(o, r);
  return r;
}

Result<Resource> ResourceFromRow(const ResourceColumns& c, std::string_view data) {
  LW_ASSIGN_OR_RETURN(bj::value v, json::Parse(data, "stored resource"));
  if (!v.is_object()) return DataLoss("stored resource data is not an object");
  auto kind = ParseKind(c.kind);
  auto lc = ParseLifecycle(c.lifecycle);
  if (!kind) return DataLoss("stored resource has an unknown kind \"" + std::string(c.kind) + "\"");
  if (!lc) return DataLoss("stored resource has an unknown lifecycle \"" + std::string(c.lifecycle) + "\"");
  Resource r;
  // Rows written before schema 5 also carry these in `data`; the columns were always
  // written from the same Resource, so they win either way.
  ReadBody(v.get_object(), r);
  r.kind = *kind;
  r.provider_type = KindProvider(*kind);
  r.lifecycle = *lc;
  r.provider = c.provider;
  r.account = c.account;
  r.id = c.id;
  r.name = c.name;
  r.owner = c.owner;
  r.base_model = c.base_model;
  r.native_status = c.native_status;
  r.created_at = c.created_at;
  return r;
}

}  // namespace loopwarden::store
