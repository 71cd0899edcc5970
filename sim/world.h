#pragma once
// The simulated world: every account and resource of both providers, what the scenario
// says they do over time, and what API calls did to them.
//
// State is never stepped. Each resource keeps its definition (created at, activity
// intervals, checkpoint saves, …) and the events API calls added (deactivated at,
// deleted at, settings changed at, …); every observable — status, replica count, metric
// points, updateTime, tokens, accelerator-seconds, checkpoint listings — is a pure
// function of those and the time asked about. So any simulated time gives one
// consistent answer, whatever order requests arrive in.
//
// Used from the io_context thread only.

#include <map>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "core/money.h"
#include "core/time.h"

namespace loopwarden::sim {

// 9999-12-31T23:59:59Z: "never ends", safe to add durations to.
Time Forever();

// A span of activity. `level` is GPU utilization (0..1) for trainers; `rate` requests
// per minute for endpoints and trainer API calls; `tokens_per_min` per meter
// (prefill, cached_prefill, sample, train) for serverless sessions.
struct Interval {
  Time from;
  Time to;
  double level = 0.9;
  double rate = 0;
  std::map<std::string, double> tokens_per_min;
};

bool Covers(const std::vector<Interval>& v, Time t);
const Interval* At(const std::vector<Interval>& v, Time t);
// The latest instant <= t inside any interval (min(t, to) of intervals begun by t).
std::optional<Time> LastActive(const std::vector<Interval>& v, Time t);
// Overlap of [a, b) with the intervals, in seconds, weighted by `rate`-like accessor.
double OverlapSeconds(const Interval& i, Time a, Time b);

// The provider-side switches of shared/providers §7, named as in the scenario file.
struct Switches {
  // Baseten
  Duration loops_default_scale_down_delay = std::chrono::seconds(900);
  int repeat_deactivate_status = 200;           // or 404
  bool deployments_hide_stopped = false;
  bool conflict_body_run_id = true;
  bool kept_checkpoints_as_ids = false;
  int in_use_status = 409;
  Duration inference_scale_down_delay = std::chrono::seconds(900);
  bool gpu_util_percent = false;
  bool full_create_response = false;
  bool retry_after_header = false;
  std::string money_as = "mixed";               // mixed | number | string
  int baseten_org_cap = 4;
  Duration sync_delay = std::chrono::seconds(30);
  bool files_empty_last_page = false;
  // Fireworks
  int slot_cap = 8;
  std::map<std::string, int> slot_cap_per_model;
  std::string slot_unit = "runs";               // runs | sessions
  std::optional<Duration> heartbeat_release;    // older docs: EXPIRED 10 min after the last heartbeat
  Duration delete_latency = std::chrono::seconds(5);
  std::string delete_final_state = "gone";      // gone (404) | EXPIRED
  Duration rlor_inactivity_timeout = std::chrono::minutes(60);
  std::string inactivity_end_state = "JOB_STATE_CANCELLED";
  Duration accel_update_period = std::chrono::minutes(5);
  Duration tombstone_retention = std::chrono::hours(24 * 30);
  std::string promote_mode = "async";           // async | sync
  Duration promote_latency = std::chrono::seconds(10);
  std::string patch_without_mask = "replace";   // replace | merge
  Duration purge_delay = std::chrono::hours(24 * 7);
  Duration usage_lag = std::chrono::hours(1);
  // R17 serves provisional numbers (attributionCompleteness INCOMPLETE) this close to
  // now; they settle after usage_lag. (Unconfirmed: how fresh provisional costs are.)
  Duration usage_provisional_lag = std::chrono::minutes(2);
  int fireworks_rpm = 6000;
  bool page_token_integer = false;
  std::string checkpoint_list_key = "trainingSessionCheckpoints";
  bool session_update_time_tracks_activity = true;
};

// ---------------- Baseten ----------------

struct InstanceType {
  std::string id;
  std::string name;
  int gpu_count = 1;
  std::string gpu_type;  // "H100", "" for CPU
  int64_t memory_mib = 0;
  int64_t millicpu = 0;
  int64_t gpu_memory_mib = 0;
  double price_per_minute = 0;  // USD
};

struct BtCheckpoint {
  std::string id;
  std::string name;  // checkpoint_id, e.g. "step-100"
  std::string target = "sampler";
  Time at;
  int64_t size_bytes = 160 << 20;
  std::optional<Time> deleted_at;
  std::string deployed_to;  // an inference deployment made from it (A6): in use while that lives
};

struct BtSampler {
  std::string id;
  std::string model_id;
  std::string deployment_id;
  std::string base_model;
  std::string owner;
  Time created;
  std::string instance_type;
  int nodes = 1;
  std::string paired_run;  // empty: standalone
  std::vector<Interval> traffic;
  std::optional<Time> deactivated_at;
};

struct BtRun {
  std::string id;
  std::string session_id;
  std::string name;
  std::string owner;
  std::string base_model;
  Time created;
  bool dedicated = true;
  std::string deployment_id;  // Loops deployment (dedicated)
  std::string instance_type;
  int nodes = 1;
  std::string availability = "dedicated";
  std::optional<Duration> scale_down_delay;  // default: the switch
  std::vector<Interval> activity;   // training calls (GPU busy, requests)
  std::vector<Interval> keepalive;  // client keepalives: hold the run, do no work
  std::vector<BtCheckpoint> checkpoints;
  std::optional<std::string> sampler;  // paired sampler id
  std::optional<Time> deactivated_at;
  std::optional<Time> deployment_deactivated_at;
  std::optional<Time> deleted_at;
  std::optional<Time> preempted_at;
  std::optional<Time> ends_at;  // serverless: the scenario may end it
};

struct Autoscaling {
  int min_replica = 0;
  int max_replica = 1;
  int autoscaling_window = 60;
  std::optional<int> scale_down_delay;  // seconds; default the switch
  int concurrency_target = 1;
};

struct BtDeployment {
  std::string id;
  std::string model_id;
  std::string name;
  Time created;
  std::string instance_type;
  bool is_production = false;
  bool is_development = true;
  std::vector<std::pair<Time, Autoscaling>> settings;  // history, oldest first
  std::vector<std::pair<Time, bool>> activations;      // (at, active) history
  std::vector<Interval> traffic;
  std::optional<Time> deleted_at;
  std::map<std::string, std::string> labels;
};

struct BtModel {
  std::string id;
  std::string name;
  Time created;
  std::string team = "ml";
  std::vector<std::string> deployments;
  std::optional<Time> deleted_at;
};

struct BtKey {
  std::string key;
  std::string owner;
  bool org_visible = true;
};

struct BtOrg {
  std::string name;
  std::vector<BtKey> keys;
  std::vector<BtRun> runs;
  std::vector<BtSampler> samplers;  // paired and standalone
  std::vector<BtModel> models;
  std::vector<BtDeployment> deployments;
  std::map<std::string, size_t> run_index, sampler_index, model_index, deployment_index;
  std::map<std::string, std::string> loops_deployment_to_run;
  void Reindex();
};

// ---------------- Fireworks ----------------

struct FwCheckpoint {
  std::string logical;  // "final", "step-0100"
  std::string name;     // server-side id: run-<32hex>-<logical>[-<8hex>]
  bool promotable = true;
  Time at;
};

struct FwSession {
  std::string id;  // ts-<32hex>
  std::string display_name;
  std::string base_model;
  std::string owner;
  Time created;
  bool leaked = false;  // TRAINING_SESSION_STATE_UNSPECIFIED with empty baseModel
  std::string run_id;   // run-<32hex>: its one training run
  int lora_rank = 8;
  std::vector<Interval> activity;
  std::vector<FwCheckpoint> checkpoints;
  std::vector<Time> heartbeats;
  std::optional<Time> deleted_at;
  std::optional<Time> drained_at;
  std::optional<Time> failed_at;
};

struct FwRlorJob {
  std::string id;
  std::string display_name;
  std::string owner;
  std::string base_model;
  Time created;
  std::string accelerator = "NVIDIA_H100_80GB";
  int accelerator_count = 8;
  int nodes = 1;
  Duration placement_delay = std::chrono::minutes(2);
  std::optional<Duration> inactivity_timeout;  // default: the switch
  bool disable_inactivity_cleanup = false;
  std::vector<Interval> activity;
  std::vector<FwCheckpoint> checkpoints;
  std::vector<Time> cancels;
  std::vector<Time> resumed_at;
  std::optional<Time> deleted_at;
  std::optional<Time> crashed_at;  // trainer dies; state stays RUNNING, healthz fails
  std::string hot_load_deployment;
};

struct FwPatch {
  Time at;
  std::optional<int> min_replicas;
  std::optional<int> max_replicas;
  std::optional<int> scale_replicas;  // :scale
};

struct FwDeployment {
  std::string id;
  std::string display_name;
  std::string base_model;
  std::string owner;
  Time created;
  std::string accelerator = "NVIDIA_H100_80GB";
  int accelerator_count = 1;
  int min_replicas = 0;
  int max_replicas = 1;
  Duration scale_to_zero_window = std::chrono::hours(1);
  std::vector<Interval> traffic;
  std::vector<FwPatch> patches;
  std::string hot_load_trainer_job;  // rlor job id
  bool managed_rollout = false;
  // The `name` it is listed under, when not the usual accounts/A/deployments/ID (tests
  // of the names a client keeps).
  std::string listed_name;
  std::optional<Time> soft_deleted_at;
  std::optional<Time> hard_deleted_at;
  std::optional<Time> undeleted_at;
};

struct FwModel {
  std::string id;
  std::string base_model;
  std::string kind = "HF_PEFT_ADDON";
  Time created;
  std::string source;  // checkpoint it came from
};

struct FwKey {
  std::string key;
  std::string owner;
  bool training = true;  // inference-only keys get 401 on training routes
};

struct FwAccount {
  std::string id;
  std::vector<FwKey> keys;
  std::optional<int> slot_cap;
  std::vector<FwSession> sessions;
  std::vector<FwRlorJob> jobs;
  std::vector<FwDeployment> deployments;
  std::vector<FwModel> models;
  std::map<std::string, size_t> session_index, job_index, deployment_index, model_index;
  void Reindex();
};

struct JournalEntry {
  Time at;
  std::string method;
  std::string path;
  std::string body;
  int status = 0;
  std::string response;
  std::string lease;  // X-Loopwarden-Lease: which leader made the call
};

struct World {
  Switches switches;
  std::vector<InstanceType> instance_types;
  std::vector<BtOrg> orgs;
  std::vector<FwAccount> accounts;
  std::vector<JournalEntry> journal;
  uint64_t id_counter = 0;
  // Every id NewId gave out: a short id (4 hex digits) would otherwise repeat by the
  // birthday bound in a generated fleet of a few hundred.
  std::unordered_set<std::string> issued_ids;

  const InstanceType* FindInstanceType(const std::string& id) const;
  // Deterministic fresh ids, never one given out before.
  std::string NewId(std::string_view prefix, size_t hex_digits);
  size_t ResourceCount() const;
};

// The built-in instance-type price list (USD per minute; prices from the provider
// specs' dated list, per GPU-hour H100 6.50, H200 7.00, A100 4.00, B200 10.00).
std::vector<InstanceType> DefaultInstanceTypes();

// ---- Derived Baseten state ----

// When the run ends (INACTIVE), if it does: deactivation, deletion, preemption, the
// scenario's end, or (dedicated) the inactivity timeout after its last request or
// keepalive.
std::optional<Time> RunEnd(const BtRun& r, const Switches& s);
enum class RunEndCause { kNone, kTimeout, kDeactivated, kDeploymentDeactivated, kDeleted, kPreempted, kScenario };
RunEndCause RunEndReason(const BtRun& r, const Switches& s, Time t);
bool RunExists(const BtRun& r, Time t);  // created and not deleted
std::string RunStatus(const BtRun& r, const Switches& s, Time t);            // ACTIVE | INACTIVE
std::string LoopsDeploymentStatus(const BtRun& r, const Switches& s, Time t);  // CREATED … PREEMPTED
bool LoopsDeploymentBills(const std::string& status);
std::string SamplerStatus(const BtSampler& smp, const BtOrg& org, const Switches& s, Time t);
bool SamplerBills(const std::string& status);
// Inference deployments.
bool DeploymentExists(const BtDeployment& d, Time t);
Autoscaling SettingsAt(const BtDeployment& d, Time t);
int DeploymentReplicas(const BtDeployment& d, const Switches& s, Time t);
std::string DeploymentStatus(const BtDeployment& d, const Switches& s, Time t);
// Checkpoint sync state at t.
bool CheckpointSyncing(const BtCheckpoint& c, const Switches& s, Time t);

// ---- Derived Fireworks state ----

bool SessionVisible(const FwSession& x, const Switches& s, Time t);
std::string SessionState(const FwSession& x, const Switches& s, Time t);
bool SessionHoldsSlot(const FwSession& x, const Switches& s, Time t);
Time SessionUpdateTime(const FwSession& x, const Switches& s, Time t);
// Tokens used per meter in [a, b).
std::map<std::string, int64_t> SessionTokens(const FwSession& x, Time a, Time b);
bool SessionCheckpointsReachable(const FwSession& x, Time t);

std::string JobState(const FwRlorJob& j, const Switches& s, Time t);
bool JobBills(const std::string& state);
// Accelerator-seconds accrued up to t (exact), and as published (every period).
int64_t JobAcceleratorSeconds(const FwRlorJob& j, const Switches& s, Time t);
int64_t JobAcceleratorSecondsPublished(const FwRlorJob& j, const Switches& s, Time t);
int64_t JobProgressSteps(const FwRlorJob& j, Time t);
bool JobHealthy(const FwRlorJob& j, const Switches& s, Time t);

bool FwDeploymentVisible(const FwDeployment& d, Time t, bool show_deleted);
std::string FwDeploymentState(const FwDeployment& d, Time t);
std::pair<int, int> FwMinMax(const FwDeployment& d, Time t);
int FwReplicas(const FwDeployment& d, Time t);
// GPU-seconds of a deployment in [a, b), integrated per minute.
int64_t FwDeploymentAcceleratorSeconds(const FwDeployment& d, Time a, Time b);

}  // namespace loopwarden::sim
