#pragma once
// Baseten bodies -> plain structs -> core Resources. Pure functions of parsed JSON,
// tested on the bodies of shared/providers/baseten.md.
//
// Every field is optional on the wire: an object without an id is dropped (and the
// listing reported incomplete); one without a status becomes lifecycle `unknown`.

#include <boost/json/value.hpp>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/resource.h"
#include "core/status.h"

namespace loopwarden::providers::baseten {

// The listed objects are held whole while an organization's poll lasts: their text is
// ShortString (16 bytes, not 32) and their instants the compact kind.
struct InstanceType {
  ShortString id;
  ShortString name;
  int gpu_count = 0;
  Interned gpu_type;  // normalized
};

struct Sampler {
  ShortString id;
  ShortString model_id;
  ShortString deployment_id;
  Interned base_model;
  Interned status;  // "" when absent
  Interned owner;
  OptionalTime created_at;
  std::optional<InstanceType> instance_type;
  int node_count = 1;
};

struct Run {
  ShortString id;
  ShortString session_id;
  ShortString deployment_id;  // "" when null: serverless
  ShortString name;
  Interned base_model;
  Interned status;
  Interned owner;
  OptionalTime created_at;
  std::optional<Sampler> sampler;
};

struct LoopsDeployment {
  ShortString id;
  ShortString active_run_id;
  ShortString latest_run_id;
  Interned base_model;
  Interned status;
  Interned owner;
  OptionalTime created_at;
  Interned availability = "dedicated";
  std::optional<InstanceType> instance_type;
  int node_count = 1;
  std::optional<Sampler> sampler;
};

struct Model {
  ShortString id;
  Interned name;
  Interned team;
  OptionalTime created_at;
  int deployments_count = 0;
};

// The adapter keeps every model's deployments between polls (20,000 at 100k
// resources), so the repeated text is pooled, the rest is ShortString, and the map and
// time are the compact kinds: 224 bytes each, with a tree node per label, became 104.
struct Deployment {
  ShortString id;
  ShortString name;
  ShortString model_id;
  Interned status;
  Interned instance_type_name;
  OptionalTime created_at;
  int active_replica_count = 0;
  bool is_production = false;
  std::optional<int> min_replica;
  std::optional<int> max_replica;
  FlatMap<Interned, std::string> labels;
};

// Kept for every run between polls (the adapter's checkpoint cache).
struct Checkpoint {
  ShortString id;
  ShortString name;  // checkpoint_id
  ShortString run_id;
  ShortString target;
  OptionalTime created_at;
  int64_t size_bytes = 0;
  bool syncing = false;
};

// A list body: items parsed, plus how many were unusable (no id).
template <class T>
struct Parsed {
  std::vector<T> items;
  int dropped = 0;
};

// The org-wide Loops listings, their single objects and the models list, from the
// body's text (simdjson: providers/simd_json.h; 17 MB a steady cycle at 100k). Text
// that is not JSON is refused with json::Parse's error, naming `what`.
Result<Parsed<Run>> ParseRuns(const std::string& body, std::string_view what = "runs");
Result<Run> ParseRunBody(const std::string& body, std::string_view what = "run");  // {"run": {…}}
Result<Parsed<Sampler>> ParseSamplers(const std::string& body, std::string_view what = "samplers");
Result<Sampler> ParseSamplerBody(const std::string& body, std::string_view what = "sampler");
Result<Parsed<LoopsDeployment>> ParseLoopsDeployments(const std::string& body, std::string_view what = "deployments");
Result<LoopsDeployment> ParseLoopsDeploymentBody(const std::string& body, std::string_view what = "deployment");
Result<Parsed<Model>> ParseModels(const std::string& body, std::string_view what = "models");
// A model's deployments, one deployment (a bare DeploymentV1) and a run's checkpoints,
// from the text, as the listings above; their trimmed copies in the detail cache are
// read the same way.
Result<Parsed<Deployment>> ParseDeployments(const std::string& body, std::string_view what = "deployments");
Result<Deployment> ParseDeploymentBody(const std::string& body, std::string_view what = "deployment");
Result<Parsed<Checkpoint>> ParseCheckpoints(const std::string& body, std::string_view what = "checkpoints");

// A deployment or checkpoint listing cut down to what ParseDeployments and
// ParseCheckpoints read, for the detail cache: the stored copy parses to the same items
// at less than half the bytes (a model's deployment listing went from 560 bytes to
// about 230, and they were a sixth of the database at 100k resources). "" for a body
// that is not such a listing.
std::string TrimDeploymentsBody(const std::string& body);
std::string TrimCheckpointsBody(const std::string& body);
// Instance type id -> (type, USD per minute).
Result<std::map<std::string, std::pair<InstanceType, double>>> ParsePrices(const std::string& body,
                                                                          std::string_view what = "prices");

// R21 usage_summary: one row per billable resource and UTC day, from `daily[]` of the
// dedicated and training sections (`model_apis_usage` is not governed). Money is a
// number or a string of dollars. A row without an id, a date or a subtotal is an error
// naming it: reconciling with part of a bill would book the rest as drift.
struct UsageDay {
  std::string resource_id;  // billable_resource.id
  std::string kind;         // billable_resource.kind: MODEL_DEPLOYMENT, TRAINING_JOB
  Time day;
  int64_t minutes = 0;
  Money cost;  // subtotal
};
// Read from the body's text row by row (json_elements.h).
Result<std::vector<UsageDay>> ParseUsageSummary(std::string_view body);

// What a metric series says about activity over its window.
struct ActivitySummary {
  bool present = false;  // points exist and are fresh (a gap at the end is missing data)
  std::optional<Time> first_point;
  std::optional<Time> last_busy;
  bool busy_latest = false;
  double max_gpu = 0;      // 0..1
  double total_volume = 0;
};
// R8: every GPU rank at or below `threshold` (values above 1 read as percent) and zero
// inference volume is idle. Points must reach within `fresh` of `now` to count.
ActivitySummary SummarizeTrainerMetrics(const boost::json::value& body, double threshold, Time now, Duration fresh);
// R18 (SUMMARY or SERIES): baseten_inference_requests_total per value set, summed over
// its label sets. A value set whose every label set is null has no data: missing, never
// zero.
struct RequestCounts {
  Time start;
  Time end;
  std::optional<int64_t> step_seconds;  // SERIES only
  struct Set {
    Time start;
    std::optional<double> requests;  // nothing: no data for this set
  };
  std::vector<Set> sets;  // in time order
};
Result<RequestCounts> ParseRequestCounts(const boost::json::value& body);
// What the counts say: present when any set has data; the newest set with requests
// makes last_busy (its end, so a busy bucket is never read as earlier than it was).
ActivitySummary SummarizeRequestCounts(const RequestCounts& c);

// Normalized lifecycle (baseten.md §1 table).
struct StatusMapping {
  Lifecycle lifecycle = Lifecycle::kUnknown;
  bool transitional = false;
  bool bills = false;
};
StatusMapping RunLifecycle(std::string_view status);
StatusMapping LoopsDeploymentLifecycle(std::string_view status);
StatusMapping DeploymentStatusLifecycle(std::string_view status);  // samplers and inference

}  // namespace loopwarden::providers::baseten
