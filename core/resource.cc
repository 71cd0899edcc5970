#include "core/resource.h"

#include <algorithm>
#include <array>

namespace loopwarden {
namespace {

constexpr std::array<Kind, 7> kKinds{Kind::kBasetenRun,          Kind::kBasetenSampler,
                                     Kind::kBasetenLoopsDeployment, Kind::kBasetenDeployment,
                                     Kind::kFireworksTrainingSession, Kind::kFireworksRlorJob,
                                     Kind::kFireworksDeployment};
constexpr std::array<Lifecycle, 7> kLifecycles{Lifecycle::kStarting, Lifecycle::kRunning, Lifecycle::kScaledToZero,
                                               Lifecycle::kStopped,  Lifecycle::kFailed,  Lifecycle::kDeleted,
                                               Lifecycle::kUnknown};
constexpr std::array<ActionType, 6> kActions{ActionType::kNotify, ActionType::kDeactivate,
                                             ActionType::kScaleToZero, ActionType::kCancel,
                                             ActionType::kDelete, ActionType::kPromoteThenDelete};

}  // namespace

std::string_view ProviderTypeName(ProviderType p) {
  return p == ProviderType::kBaseten ? "baseten" : "fireworks";
}

std::optional<ProviderType> ParseProviderType(std::string_view s) {
  if (s == "baseten") return ProviderType::kBaseten;
  if (s == "fireworks") return ProviderType::kFireworks;
  return std::nullopt;
}

std::string_view KindName(Kind k) {
  switch (k) {
    case Kind::kBasetenRun: return "baseten.run";
    case Kind::kBasetenSampler: return "baseten.sampler";
    case Kind::kBasetenLoopsDeployment: return "baseten.loops_deployment";
    case Kind::kBasetenDeployment: return "baseten.deployment";
    case Kind::kFireworksTrainingSession: return "fireworks.training_session";
    case Kind::kFireworksRlorJob: return "fireworks.rlor_job";
    case Kind::kFireworksDeployment: return "fireworks.deployment";
  }
  return "?";
}

std::optional<Kind> ParseKind(std::string_view s) {
  for (Kind k : kKinds) {
    if (KindName(k) == s) return k;
  }
  return std::nullopt;
}

std::span<const Kind> AllKinds() { return kKinds; }

ProviderType KindProvider(Kind k) {
  switch (k) {
    case Kind::kBasetenRun:
    case Kind::kBasetenSampler:
    case Kind::kBasetenLoopsDeployment:
    case Kind::kBasetenDeployment: return ProviderType::kBaseten;
    default: return ProviderType::kFireworks;
  }
}

std::string_view LifecycleName(Lifecycle l) {
  switch (l) {
    case Lifecycle::kStarting: return "starting";
    case Lifecycle::kRunning: return "running";
    case Lifecycle::kScaledToZero: return "scaled_to_zero";
    case Lifecycle::kStopped: return "stopped";
    case Lifecycle::kFailed: return "failed";
    case Lifecycle::kDeleted: return "deleted";
    case Lifecycle::kUnknown: return "unknown";
  }
  return "unknown";
}

std::optional<Lifecycle> ParseLifecycle(std::string_view s) {
  for (Lifecycle l : kLifecycles) {
    if (LifecycleName(l) == s) return l;
  }
  return std::nullopt;
}

std::span<const Lifecycle> AllLifecycles() { return kLifecycles; }

std::string_view ModeName(Mode m) {
  switch (m) {
    case Mode::kNone: return "";
    case Mode::kServerless: return "serverless";
    case Mode::kDedicated: return "dedicated";
  }
  return "";
}

std::string_view MeterName(Meter m) {
  switch (m) {
    case Meter::kNone: return "none";
    case Meter::kGpuTime: return "gpu_time";
    case Meter::kTokens: return "tokens";
  }
  return "none";
}

std::string_view ActionName(ActionType a) {
  switch (a) {
    case ActionType::kNotify: return "notify";
    case ActionType::kDeactivate: return "deactivate";
    case ActionType::kScaleToZero: return "scale_to_zero";
    case ActionType::kCancel: return "cancel";
    case ActionType::kDelete: return "delete";
    case ActionType::kPromoteThenDelete: return "promote_then_delete";
  }
  return "?";
}

std::optional<ActionType> ParseAction(std::string_view s) {
  for (ActionType a : kActions) {
    if (ActionName(a) == s) return a;
  }
  return std::nullopt;
}

bool KindSupports(Kind k, ActionType a) {
  if (a == ActionType::kNotify) return true;
  switch (k) {
    case Kind::kBasetenRun: return a == ActionType::kDeactivate || a == ActionType::kDelete;
    case Kind::kBasetenSampler: return a == ActionType::kDeactivate;
    case Kind::kBasetenLoopsDeployment: return a == ActionType::kDeactivate;
    case Kind::kBasetenDeployment:
      return a == ActionType::kDeactivate || a == ActionType::kScaleToZero || a == ActionType::kDelete;
    case Kind::kFireworksTrainingSession:
      return a == ActionType::kDelete || a == ActionType::kPromoteThenDelete;
    case Kind::kFireworksRlorJob: return a == ActionType::kCancel || a == ActionType::kDelete;
    case Kind::kFireworksDeployment:
      return a == ActionType::kDeactivate || a == ActionType::kScaleToZero || a == ActionType::kDelete;
  }
  return false;
}

std::vector<ActionType> SupportedActions(Kind k) {
  std::vector<ActionType> out;
  for (ActionType a : kActions) {
    if (KindSupports(k, a)) out.push_back(a);
  }
  return out;
}

bool IsIrreversible(ActionType a) { return a == ActionType::kDelete || a == ActionType::kPromoteThenDelete; }
bool IsMutating(ActionType a) { return a != ActionType::kNotify; }

std::string_view FireworksCollection(Kind k) {
  switch (k) {
    case Kind::kFireworksTrainingSession: return "trainingSessions";
    case Kind::kFireworksRlorJob: return "rlorTrainerJobs";
    case Kind::kFireworksDeployment: return "deployments";
    default: return "";
  }
}

std::string FireworksResourceName(Kind k, std::string_view account, std::string_view id) {
  const std::string_view collection = FireworksCollection(k);
  if (collection.empty()) return "";
  std::string out = "accounts/";
  out.append(account).append("/").append(collection).append("/").append(id);
  return out;
}

bool IsFireworksResourceName(std::string_view name, Kind k, std::string_view account, std::string_view id) {
  const std::string_view collection = FireworksCollection(k);
  if (collection.empty()) return false;
  for (std::string_view part : {std::string_view("accounts/"), account, std::string_view("/"), collection,
                                std::string_view("/"), id}) {
    if (!name.starts_with(part)) return false;
    name.remove_prefix(part.size());
  }
  return name.empty();
}

bool HoldsSlot(const Resource& r) {
  const bool live = r.lifecycle == Lifecycle::kRunning || r.lifecycle == Lifecycle::kStarting;
  switch (r.kind) {
    case Kind::kFireworksTrainingSession:
    case Kind::kBasetenRun:
    case Kind::kBasetenSampler: return live;
    default: return false;
  }
}

namespace {
constexpr std::array<std::pair<Flag, std::string_view>, 12> kFlagNames{{
    {Flag::kKeptAliveIdle, "kept_alive_idle"},
    {Flag::kOrphaned, "orphaned"},
    {Flag::kLeaked, "leaked"},
    {Flag::kNoNativeReaper, "no_native_reaper"},
    {Flag::kNativeStopDue, "native_stop_due"},
    {Flag::kUnhealthy, "unhealthy"},
    {Flag::kPaired, "paired"},
    {Flag::kStandalone, "standalone"},
    {Flag::kRollout, "rollout"},
    {Flag::kNeverScalesToZero, "never_scales_to_zero"},
    {Flag::kSpot, "spot"},
    {Flag::kServiceIdle, "service_idle"},
}};
constexpr std::array<Flag, kFlagNames.size()> kAllFlags = [] {
  std::array<Flag, kFlagNames.size()> out{};
  for (size_t i = 0; i < kFlagNames.size(); ++i) out[i] = kFlagNames[i].first;
  return out;
}();
static_assert(kFlagNames.size() <= 16, "FlagSet holds 16");
static_assert([] {
  for (size_t i = 0; i < kFlagNames.size(); ++i) {
    if (static_cast<size_t>(kFlagNames[i].first) != i) return false;
  }
  return true;
}(), "kFlagNames is in Flag order, so a Flag indexes it");
}  // namespace

std::span<const Flag> AllFlags() { return kAllFlags; }

std::string_view FlagName(Flag f) {
  const auto i = static_cast<size_t>(f);
  return i < kFlagNames.size() ? kFlagNames[i].second : "?";
}

std::optional<Flag> ParseFlag(std::string_view s) {
  for (const auto& [flag, name] : kFlagNames) {
    if (name == s) return flag;
  }
  return std::nullopt;
}

std::vector<Flag> FlagSet::items() const {
  std::vector<Flag> out;
  for (Flag f : kAllFlags) {
    if (contains(f)) out.push_back(f);
  }
  return out;
}

bool Resource::HasFlag(std::string_view name) const {
  const std::optional<Flag> f = ParseFlag(name);
  return f && flags.contains(*f);
}

std::string Resource::Key() const { return ResourceKey(provider, kind, id); }

std::string ResourceKey(std::string_view provider, Kind kind, std::string_view id) {
  std::string k;
  ResourceKeyInto(k, provider, kind, id);
  return k;
}

void ResourceKeyInto(std::string& out, std::string_view provider, Kind kind, std::string_view id) {
  out.clear();
  out.reserve(provider.size() + KindName(kind).size() + id.size() + 2);
  out += provider;
  out += '/';
  out += KindName(kind);
  out += '/';
  out += id;
}

}  // namespace loopwarden
