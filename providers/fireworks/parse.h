#pragma once
// Fireworks bodies -> plain structs. Pure functions of the bodies, tested on those
// of shared/providers/fireworks.md. int64 values arrive as strings or numbers; names
// are full resource names whose last segment is the id.

#include <boost/json/value.hpp>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/resource.h"
#include "core/status.h"

namespace loopwarden::providers::fireworks {

// "accounts/a/trainingSessions/ts-1" -> "ts-1"; a bare id stays as it is.
std::string IdFromName(std::string_view name);

// A listed object's full name. Nearly every one is "accounts/<account>/<collection>/<id>",
// and of those only the account is kept, pooled: held as text, the name was a heap
// block per listed object per poll (past ShortString's 15 bytes), only to be compared
// with the name the resource's account and id make. Any other name is kept whole.
struct ObjectName {
  Interned account;   // a name of the usual form: its account (never empty)
  ShortString whole;  // any other name (empty for the usual form)
  // `id` is the name's last segment.
  static ObjectName Of(std::string_view name, Kind kind, std::string_view id);
  // The name, for refs["name"] of a resource of `account`: empty when it is the one that
  // account, `kind` and `id` make (requests are built from those), else the name whole.
  std::string KeptFor(const Interned& account, Kind kind, std::string_view id) const;
};

// The listed objects are held whole for an account's poll, up to poll_concurrency
// accounts at a time (thousands of each): their text is ShortString (16 bytes, not 32)
// and their instants and maps the compact kinds.
struct Session {
  ShortString id;
  ObjectName name;
  ShortString display_name;
  Interned base_model;
  Interned owner;
  Interned state;
  OptionalTime created;
  OptionalTime updated;
};

struct TrainingRun {
  ShortString id;
  ShortString session_id;  // bare
  Interned state;
  OptionalTime updated;
};

struct Checkpoint {
  std::string id;         // last segment of the name
  std::string name;       // full name
  std::string server_name;  // checkpointName (sessions) or the id (RLOR)
  bool promotable = false;
  std::optional<Time> created;
};

struct Job {
  ShortString id;
  ObjectName name;
  ShortString display_name;
  Interned owner;
  Interned state;
  OptionalTime created;
  Interned base_model;
  Interned accelerator_type;
  int accelerator_count = 0;
  int node_count = 1;
  std::optional<Duration> inactivity_timeout;  // nothing: unset or "0s" (the 60 min default)
  bool disable_inactivity_cleanup = false;
  std::string progress;  // jobProgress, serialized: a fingerprint
  ShortString hot_load_deployment;
};

struct Deployment {
  ShortString id;
  ObjectName name;
  ShortString display_name;
  Interned base_model;
  Interned state;
  OptionalTime created;
  int min_replicas = 0;
  int max_replicas = 1;
  int replica_count = 0;
  // Replicas that bill: ready + initializing + downloading (the spec's upper bound).
  int billed_replicas = 0;
  Interned accelerator_type;
  int accelerator_count = 0;
  ShortString hot_load_trainer_job;  // bare job id
  bool managed_rollout = false;
  FlatMap<Interned, std::string> annotations;  // string values only; `report --by label:KEY`
};

struct Model {
  std::string id;
  std::string kind;
  std::optional<Time> created;
};

template <class T>
struct Page {
  std::vector<T> items;
  std::string next_page_token;
  int dropped = 0;
  int64_t total_size = -1;  // totalSize, when the page gives it: room for the whole list
};

// Listings and single objects, from the body's text (simdjson: providers/simd_json.h).
// Text that is not JSON is refused with json::Parse's error, naming `what`.
Result<Page<Session>> ParseSessions(const std::string& body, std::string_view what = "trainingSessions");
Result<Session> ParseSession(const std::string& body, std::string_view what = "TrainingSession");
Result<Page<TrainingRun>> ParseTrainingRuns(const std::string& body, std::string_view what = "trainingRuns");
// Accepts trainingSessionCheckpoints, training_session_checkpoints, checkpoints and
// rlorTrainerJobCheckpoints.
Result<Page<Checkpoint>> ParseCheckpoints(const std::string& body, std::string_view what = "checkpoints");
Result<Page<Job>> ParseJobs(const std::string& body, std::string_view what = "rlorTrainerJobs");
Result<Job> ParseJob(const std::string& body, std::string_view what = "RlorTrainerJob");
Result<Page<Deployment>> ParseDeployments(const std::string& body, std::string_view what = "deployments");
Result<Deployment> ParseDeployment(const std::string& body, std::string_view what = "Deployment");
Result<Page<Model>> ParseModels(const std::string& body, std::string_view what = "models");

struct Usage {
  // session -> meter -> tokens; the meters flat, as Resource::tokens holds them (the
  // adapter keeps the last bill's map for every session of the account).
  std::map<std::string, FlatMap<std::string, int64_t>, std::less<>> session_tokens;
  std::map<std::string, int64_t, std::less<>> job_accelerator_seconds;
  std::map<std::string, int64_t, std::less<>> deployment_accelerator_seconds;
};
// Read from the body's text row by row: over its 35-day window the DOM of one account's
// bill was 17 MB at 100k resources.
Result<Usage> ParseBillingUsage(std::string_view body);

// R17 usageCosts:query. Money is units + nanos/1e9; units may be a string or a number.
struct UsageCosts {
  struct Row {
    std::optional<Time> start;  // dimensions.startTime (grouped by HOUR or DAY)
    double usd = 0;
  };
  std::vector<Row> rows;
  double subtotal_usd = 0;
  std::optional<Time> evaluated;  // evaluationTime: what the numbers cover
  bool complete = false;          // attributionCompleteness COMPLETE (else provisional)
  std::string next_page_token;
};
Result<UsageCosts> ParseUsageCosts(const boost::json::value& body);

struct StatusMapping {
  Lifecycle lifecycle = Lifecycle::kUnknown;
  bool transitional = false;
  bool bills = false;
};
StatusMapping SessionLifecycle(std::string_view state);
StatusMapping JobLifecycle(std::string_view state);
StatusMapping DeploymentLifecycle(std::string_view state, int billed_replicas);

}  // namespace loopwarden::providers::fireworks
