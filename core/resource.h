#pragma once
// The normalized Resource model every module shares.
//
// Provider adapters map native objects (Baseten runs, samplers, Loops deployments,
// inference deployments; Fireworks training sessions, RLOR trainer jobs, deployments)
// onto one Resource. The store diffs snapshots of them, the policy engine decides on
// them, the executor acts on them. Field meanings follow shared/DESIGN.md "Inventory".

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/boxed.h"
#include "core/compact_optional.h"
#include "core/compact_string.h"
#include "core/flat_map.h"
#include "core/interned.h"
#include "core/money.h"
#include "core/short_string.h"
#include "core/time.h"

namespace loopwarden {

// The enums a stored resource holds are a byte each: four ints and their padding were
// 16 bytes of every one of 100k+ stored resources.
enum class ProviderType : uint8_t { kBaseten, kFireworks };

// Bounds on provider-controlled text. An id longer than kMaxIdBytes makes an object
// malformed (Baseten issues 6-8 characters, Fireworks at most 63); names, owners and the
// like are cut at kMaxTextBytes.
inline constexpr size_t kMaxIdBytes = 128;
inline constexpr size_t kMaxTextBytes = 512;

enum class Kind : uint8_t {
  kBasetenRun,
  kBasetenSampler,
  kBasetenLoopsDeployment,
  kBasetenDeployment,
  kFireworksTrainingSession,
  kFireworksRlorJob,
  kFireworksDeployment,
};

enum class Lifecycle : uint8_t { kStarting, kRunning, kScaledToZero, kStopped, kFailed, kDeleted, kUnknown };

// How a run bills: by tokens (serverless) or GPU time (dedicated). kNone for kinds
// without a mode.
enum class Mode : uint8_t { kNone, kServerless, kDedicated };

enum class Meter : uint8_t { kNone, kGpuTime, kTokens };

enum class ActionType { kNotify, kDeactivate, kScaleToZero, kCancel, kDelete, kPromoteThenDelete };

std::string_view ProviderTypeName(ProviderType p);
std::optional<ProviderType> ParseProviderType(std::string_view s);
std::string_view KindName(Kind k);  // "baseten.run"
std::optional<Kind> ParseKind(std::string_view s);
std::span<const Kind> AllKinds();
ProviderType KindProvider(Kind k);
std::string_view LifecycleName(Lifecycle l);  // "scaled_to_zero"
std::optional<Lifecycle> ParseLifecycle(std::string_view s);
std::span<const Lifecycle> AllLifecycles();
std::string_view ModeName(Mode m);  // "", "serverless", "dedicated"
std::string_view MeterName(Meter m);
std::string_view ActionName(ActionType a);  // "scale_to_zero"
std::optional<ActionType> ParseAction(std::string_view s);

// Which actions a kind has at its provider. notify is supported everywhere.
bool KindSupports(Kind k, ActionType a);
std::vector<ActionType> SupportedActions(Kind k);
// Actions that destroy state for good (need allow_irreversible): deletes. Deactivating
// a Baseten run cannot be undone either, but it keeps every checkpoint, so it is the
// reversible-first choice the design asks for.
bool IsIrreversible(ActionType a);
// Mutating actions (everything but notify).
bool IsMutating(ActionType a);

// Facts an adapter derived about a resource, which policies name in a `flags` filter.
enum class Flag : uint8_t {
  kKeptAliveIdle,      // a Baseten trainer kept alive past its idle scale-down
  kOrphaned,           // its owner (run, trainer job) is gone
  kLeaked,             // a Fireworks session in an unspecified state with no model
  kNoNativeReaper,     // the provider's own inactivity timeout is off
  kNativeStopDue,      // the provider's own timeout is about to stop it
  kUnhealthy,
  kPaired,             // a sampler paired to a run
  kStandalone,         // a sampler without a run
  kRollout,            // a deployment a trainer job manages
  kNeverScalesToZero,  // min replicas above 0
  kSpot,
  kServiceIdle,        // a Fireworks trainer job the service reports idle
};
std::span<const Flag> AllFlags();
std::string_view FlagName(Flag f);  // "kept_alive_idle"
std::optional<Flag> ParseFlag(std::string_view s);

// A set of Flags in two bytes (a vector of their names was 24 bytes in every stored
// resource, and a heap block in the ones that had any). Iterates in Flag order.
class FlagSet {
 public:
  FlagSet() = default;
  FlagSet(std::initializer_list<Flag> flags) {
    for (Flag f : flags) insert(f);
  }
  void insert(Flag f) { bits_ = static_cast<uint16_t>(bits_ | Bit(f)); }
  bool contains(Flag f) const { return (bits_ & Bit(f)) != 0; }
  bool empty() const { return bits_ == 0; }
  std::vector<Flag> items() const;
  friend bool operator==(const FlagSet&, const FlagSet&) = default;

 private:
  static uint16_t Bit(Flag f) { return static_cast<uint16_t>(1u << static_cast<unsigned>(f)); }
  uint16_t bits_ = 0;
};

// The fields of Billing, Activity, Checkpoints and Resource are ordered to pack: flags
// and enums together, so 100k+ resources do not carry padding after each bool.
struct Billing {
  Meter meter = Meter::kNone;
  int gpus_per_replica = 0;
  int replicas = 0;        // replicas billed now (upper bound where the spec says so)
  bool billable = false;   // GPU time accrues in the current native state
  Interned gpu_type;       // normalized: "H100", "H200", "A100", "B200", …
  CompactOptional<Money> price_per_gpu_hour;  // from the provider's price list, when it has one
  int gpus() const { return gpus_per_replica * replicas; }
};

struct Activity {
  // Every signal this kind needs was present and fresh. When false, the resource's
  // idleness is unknown, never idle.
  bool known = false;
  bool traffic_known = false;  // the request series was present and fresh
  // The newest level sample is above its idle threshold.
  bool busy_now = false;
  // Newest provider-reported evidence of work (busy metric points, checkpoint saves,
  // updateTime). Absent when the provider showed none inside its window.
  OptionalTime last_active_at;
  // Newest non-zero request point (endpoints and samplers).
  OptionalTime last_traffic_at;
  // CountersFingerprint() of the cumulative counters (tokens, progress, checkpoint
  // count) as text; 0 when the listing had none. Any change between polls is activity
  // at the time it was seen. Only the hash is kept: the text was 24 bytes and often a
  // heap block in every stored resource, and nothing read it back.
  uint64_t counters_fingerprint = 0;
  // The earliest instant the signals cover; evidence of "no activity" never reaches
  // back before it.
  OptionalTime window_start;
  std::string detail;  // human summary: "gpu util max 2% over 60m"
};

struct Checkpoints {
  bool known = false;  // the listing succeeded
  bool reachable = true;  // false: the provider says they can no longer be listed or promoted
  bool syncing = false;  // a save is still being written (transitional)
  // Whether the newest promotable checkpoint (below) was promoted. Beside the other
  // flags, where it packs.
  bool newest_promotable_promoted = false;
  int count = 0;
  int promotable = 0;
  int unpromoted = 0;  // promotable checkpoints nobody promoted
  OptionalTime newest_at;
  // The newest promotable checkpoint: provider name, logical name and time. Most
  // resources have none: 8 bytes each while empty (compact_string.h).
  CompactString newest_promotable;
  CompactString newest_promotable_name;
  OptionalTime newest_promotable_at;
};

struct Resource {
  ProviderType provider_type = ProviderType::kBaseten;
  Kind kind = Kind::kBasetenRun;
  Lifecycle lifecycle = Lifecycle::kUnknown;
  Mode mode = Mode::kNone;
  bool transitional = false;
  FlagSet flags;  // facts the adapter derived (Flag)
  Interned provider;  // the configured provider name ("baseten-prod")
  Interned account;   // provider account (Fireworks account id; Baseten: the provider name)
  // id, name and parent_id are 16 bytes each, inline up to 15 characters
  // (short_string.h): as std::string they were 96 bytes of every stored resource.
  ShortString id;        // provider-native id (Fireworks: the last path segment)
  ShortString name;      // display name
  Interned owner;     // email / createdBy
  Interned team;
  Interned base_model;
  Interned native_status;
  Interned availability;  // "dedicated" | "spot" for Baseten Loops
  Billing billing;
  OptionalTime created_at;
  // Known for few resources (trainers whose checkpoints were listed): out of line, 8
  // bytes where the others carried 48 (boxed.h). Read as r.checkpoints->count; written
  // through r.checkpoints.Mutable().
  Boxed<Checkpoints> checkpoints;
  // Keys of labels and refs are pooled: a fleet uses a few dozen names
  // ("min_replica_count", "model_id", a team's label keys), and as std::string each
  // entry carried its own 32 bytes of key, and a heap block past 15 characters.
  FlatMap<Interned, std::string> labels;
  ShortString parent_id;  // sampler → run, run → Loops deployment, rollout → trainer job
  // The provider's own inactivity reaper for this resource, if it has one.
  OptionalDuration native_timeout;
  // Provider-side handles the executor needs (Baseten model_id for an inference
  // deployment; Fireworks full resource name).
  // Values are ids and replica counts, short enough to sit inline (short_string.h).
  FlatMap<Interned, ShortString> refs;

  bool HasFlag(Flag f) const { return flags.contains(f); }
  bool HasFlag(std::string_view name) const;  // false for a name that is no Flag
  // "baseten-prod/baseten.run/k4q95w5": unique across providers and kinds.
  std::string Key() const;
};

// A Resource as a provider lists it, with the poll's signals. The store folds them into
// its own record of the resource (idle since, last traffic, counters, spend) and keeps
// the Resource alone: held in every stored resource until the next poll, they were about
// 100 bytes and a heap block or two that nothing read.
struct ListedResource : Resource {
  Activity activity;
  // Cumulative tokens per meter (prefill, cached_prefill, sample, train) as the
  // provider reports them; the store accrues deltas.
  FlatMap<std::string, int64_t> tokens;
};

// The key of Resource::Key() from its parts.
std::string ResourceKey(std::string_view provider, Kind kind, std::string_view id);
// The same key written over `out`, reusing its buffer (for loops over a whole fleet).
void ResourceKeyInto(std::string& out, std::string_view provider, Kind kind, std::string_view id);

// The full resource name Fireworks gives an object of kind `k`
// ("accounts/A/deployments/ID"; empty for other kinds), and whether `name` is exactly
// it. A resource keeps refs["name"] only when its name is not this one: the Fireworks
// adapter's requests are made from the account and id, and at 100k resources the
// name was about 5 MB held for nothing.
std::string FireworksResourceName(Kind k, std::string_view account, std::string_view id);
// The collection in it: "trainingSessions", "rlorTrainerJobs", "deployments" (empty for
// other kinds).
std::string_view FireworksCollection(Kind k);
bool IsFireworksResourceName(std::string_view name, Kind k, std::string_view account, std::string_view id);

// True for resources that hold one of an account's training slots (Fireworks sessions,
// Baseten live runs and samplers).
bool HoldsSlot(const Resource& r);

}  // namespace loopwarden
