#include "providers/provider.h"

#include <cctype>

#include "core/secrets.h"
#include "providers/baseten/adapter.h"
#include "providers/fireworks/adapter.h"
#include "providers/transport.h"

namespace loopwarden::providers {

std::string_view OutcomeName(Outcome o) {
  switch (o) {
    case Outcome::kDone: return "done";
    case Outcome::kAlreadyDone: return "already_done";
    case Outcome::kRefused: return "refused";
    case Outcome::kFailed: return "failed";
    case Outcome::kUnknown: return "unknown";
  }
  return "unknown";
}

namespace {
void Bound(std::string& s) {
  if (s.size() <= kMaxTextBytes) return;
  size_t cut = kMaxTextBytes;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  s.resize(cut);
  s += "\xE2\x80\xA6";  // …
}

// Interned and ShortString text: cut as a copy and put back.
template <class Text>
void Bound(Text& s) {
  if (s.size() <= kMaxTextBytes) return;
  std::string cut = s;
  Bound(cut);
  s = cut;
}
}  // namespace

void BoundProviderText(Resource& r) {
  Bound(r.name);
  for (Interned* s : {&r.owner, &r.team, &r.base_model, &r.native_status}) Bound(*s);
  for (auto& [k, v] : r.labels) Bound(v);
}

void Inventory::Add(ListedResource&& r) {
  BoundProviderText(r);
  ++listed;
  if (sink) {
    sink(std::move(r));
  } else {
    resources.push_back(std::move(r));
  }
}

Duration FirstSightWindow(const ProviderOptions& o, Kind k) {
  Duration w = o.activity_window;
  if (auto it = o.quiet_thresholds.find(k); it != o.quiet_thresholds.end()) {
    w = std::max(w, it->second + std::chrono::minutes(10));
  }
  return std::min(w, kMaxHistory);
}

std::string LogicalCheckpointName(const std::string& server, bool promotable) {
  std::string s = server;
  // "run-<32hex>-" prefix.
  if (s.rfind("run-", 0) == 0 && s.size() > 37 && s[36] == '-') s = s.substr(37);
  // "-<8hex>" suffix on sampler checkpoints.
  if (promotable && s.size() > 9 && s[s.size() - 9] == '-') {
    bool hex = true;
    for (size_t i = s.size() - 8; i < s.size(); ++i) hex = hex && std::isxdigit(static_cast<unsigned char>(s[i]));
    if (hex) s = s.substr(0, s.size() - 9);
  }
  return s;
}

std::string PromotedModelId(const std::string& session_id, const std::string& logical) {
  std::string session = session_id.rfind("ts-", 0) == 0 ? session_id.substr(3) : session_id;
  session = session.substr(0, 8);
  std::string id = "lw-" + session + "-" + logical;
  for (char& c : id) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) c = '-';
  }
  if (id.size() > 63) id.resize(63);
  while (!id.empty() && id.back() == '-') id.pop_back();
  while (!id.empty() && id.front() == '-') id.erase(0, 1);
  return id;
}

Result<std::unique_ptr<Provider>> MakeProvider(boost::asio::io_context& ioc, Clock& clock, const ProviderOptions& o) {
  RegisterSecret(o.api_key);
  TransportOptions t;
  t.base_url = o.base_url;
  while (!t.base_url.empty() && t.base_url.back() == '/') t.base_url.pop_back();
  const bool fw = o.type == ProviderType::kFireworks;
  if (fw) {
    if (o.auth == "x_api_key") {
      t.auth_headers.emplace_back("X-Api-Key", o.api_key);
    } else {
      t.auth_headers.emplace_back("Authorization", "Bearer " + o.api_key);
    }
    t.classify = ClassifyFireworks;
  } else {
    t.auth_headers.emplace_back("Authorization", (o.auth == "api_key" ? "Api-Key " : "Bearer ") + o.api_key);
    t.classify = ClassifyBaseten;
    // Model deployment (de)activation: 20/min at Baseten; loopwarden stays under 18.
    t.class_per_minute["activation"] = 18;
  }
  t.requests_per_minute = o.requests_per_minute > 0 ? o.requests_per_minute : (fw ? 600 : 3000);
  // Bursts of up to a second's worth of the budget (at least 20).
  t.burst = std::max(20, static_cast<int>(std::min(1e6, t.requests_per_minute / 60)));
  t.send_gate = o.send_gate;
  t.client.ca_file = o.ca_file;
  t.client.ca_pem = o.ca_pem;
  t.client.use_system_cas = o.use_system_cas;
  t.client.io_timeout = o.request_timeout;
  t.client.max_response_bytes = o.max_response_bytes;
  t.client.connect_timeout = std::min<Duration>(o.request_timeout, std::chrono::seconds(10));
  t.client.max_connections = static_cast<size_t>(std::max(1, o.max_concurrency));
  t.retry.max_attempts = o.max_attempts;
  t.retry.budget = o.retry_budget;
  t.seed = std::hash<std::string>{}(o.name);
  LW_ASSIGN_OR_RETURN(std::unique_ptr<Transport> transport, Transport::Create(ioc, clock, std::move(t)));
  ProviderOptions opts = o;
  if (opts.slot_cap == 0) opts.slot_cap = fw ? 8 : 4;
  if (fw) {
    return std::unique_ptr<Provider>(new fireworks::FireworksProvider(clock, std::move(opts), std::move(transport)));
  }
  return std::unique_ptr<Provider>(new baseten::BasetenProvider(clock, std::move(opts), std::move(transport)));
}

}  // namespace loopwarden::providers
