#include "sim/world.h"

#include <algorithm>
#include <cstdio>

namespace loopwarden::sim {

Time Forever() { return FromUnixSeconds(253402300799); }

bool Covers(const std::vector<Interval>& v, Time t) { return At(v, t) != nullptr; }

const Interval* At(const std::vector<Interval>& v, Time t) {
  for (const Interval& i : v) {
    if (i.from <= t && t < i.to) return &i;
  }
  return nullptr;
}

std::optional<Time> LastActive(const std::vector<Interval>& v, Time t) {
  std::optional<Time> best;
  for (const Interval& i : v) {
    if (i.from > t) continue;
    const Time end = std::min(t, i.to);
    if (!best || end > *best) best = end;
  }
  return best;
}

double OverlapSeconds(const Interval& i, Time a, Time b) {
  const Time lo = std::max(a, i.from);
  const Time hi = std::min(b, i.to);
  if (hi <= lo) return 0;
  return static_cast<double>((hi - lo).count()) / 1e6;
}

void BtOrg::Reindex() {
  run_index.clear();
  sampler_index.clear();
  model_index.clear();
  deployment_index.clear();
  loops_deployment_to_run.clear();
  for (size_t i = 0; i < runs.size(); ++i) {
    run_index[runs[i].id] = i;
    if (!runs[i].deployment_id.empty()) loops_deployment_to_run[runs[i].deployment_id] = runs[i].id;
  }
  for (size_t i = 0; i < samplers.size(); ++i) sampler_index[samplers[i].id] = i;
  for (size_t i = 0; i < models.size(); ++i) model_index[models[i].id] = i;
  for (size_t i = 0; i < deployments.size(); ++i) deployment_index[deployments[i].id] = i;
}

void FwAccount::Reindex() {
  session_index.clear();
  job_index.clear();
  deployment_index.clear();
  model_index.clear();
  for (size_t i = 0; i < sessions.size(); ++i) session_index[sessions[i].id] = i;
  for (size_t i = 0; i < jobs.size(); ++i) job_index[jobs[i].id] = i;
  for (size_t i = 0; i < deployments.size(); ++i) deployment_index[deployments[i].id] = i;
  for (size_t i = 0; i < models.size(); ++i) model_index[models[i].id] = i;
}

const InstanceType* World::FindInstanceType(const std::string& id) const {
  for (const InstanceType& it : instance_types) {
    if (it.id == id || it.name == id) return &it;
  }
  return nullptr;
}

std::string World::NewId(std::string_view prefix, size_t hex_digits) {
  // splitmix64 over a counter: deterministic and well spread; truncated to a few digits
  // it can repeat, so a repeat is drawn again.
  for (;;) {
    std::string hex;
    while (hex.size() < hex_digits) {
      uint64_t z = (++id_counter) * 0x9E3779B97F4A7C15ULL;
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
      z ^= z >> 31;
      char buf[17];
      std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(z));
      hex += buf;
    }
    std::string id = std::string(prefix) + hex.substr(0, hex_digits);
    if (issued_ids.insert(id).second) return id;
  }
}

size_t World::ResourceCount() const {
  size_t n = 0;
  for (const BtOrg& o : orgs) n += o.runs.size() + o.samplers.size() + o.deployments.size();
  for (const FwAccount& a : accounts) n += a.sessions.size() + a.jobs.size() + a.deployments.size();
  return n;
}

std::vector<InstanceType> DefaultInstanceTypes() {
  auto per_min = [](double per_gpu_hour, int gpus) { return per_gpu_hour * gpus / 60.0; };
  return {
      {"H100x26x234", "H100x26x234", 1, "H100", 239616, 26000, 81920, per_min(6.50, 1)},
      {"H100x8", "H100x8", 8, "H100", 1843200, 208000, 81920, per_min(6.50, 8)},
      {"H100x4", "H100x4", 4, "H100", 921600, 104000, 81920, per_min(6.50, 4)},
      {"H200x8", "H200x8", 8, "H200", 1843200, 208000, 144384, per_min(7.00, 8)},
      {"A100x12x144", "A100x12x144", 1, "A100", 147456, 12000, 81920, per_min(4.00, 1)},
      {"A100x8", "A100x8", 8, "A100", 1179648, 96000, 81920, per_min(4.00, 8)},
      {"B200x8", "B200x8", 8, "B200", 2359296, 224000, 184320, per_min(10.00, 8)},
      {"L4x4x16", "L4x4x16", 1, "L4", 16384, 4000, 24576, 0.8484 / 60},
      {"CPU4x16", "CPU4x16", 0, "", 16384, 4000, 0, 0.2 / 60},
  };
}

// ---------------- Baseten ----------------

namespace {

struct EndCandidate {
  Time at;
  RunEndCause cause;
};

std::optional<Time> NaturalEnd(const BtRun& r, const Switches& s) {
  if (!r.dedicated) return std::nullopt;
  const Duration delay = r.scale_down_delay.value_or(s.loops_default_scale_down_delay);
  std::vector<Interval> signals = r.activity;
  signals.insert(signals.end(), r.keepalive.begin(), r.keepalive.end());
  std::sort(signals.begin(), signals.end(), [](const Interval& a, const Interval& b) { return a.from < b.from; });
  // The run starts live; each request or keepalive restarts its inactivity timer.
  Time last = r.created;
  for (const Interval& i : signals) {
    if (i.to <= r.created) continue;
    if (i.from > last + delay) return last + delay;
    last = std::max(last, i.to);
  }
  if (last >= Forever()) return std::nullopt;
  return last + delay;
}

std::vector<EndCandidate> EndCandidates(const BtRun& r, const Switches& s) {
  std::vector<EndCandidate> c;
  if (auto n = NaturalEnd(r, s)) c.push_back({*n, RunEndCause::kTimeout});
  if (r.deactivated_at) c.push_back({*r.deactivated_at, RunEndCause::kDeactivated});
  if (r.deployment_deactivated_at) c.push_back({*r.deployment_deactivated_at, RunEndCause::kDeploymentDeactivated});
  if (r.deleted_at) c.push_back({*r.deleted_at, RunEndCause::kDeleted});
  if (r.preempted_at) c.push_back({*r.preempted_at, RunEndCause::kPreempted});
  if (r.ends_at) c.push_back({*r.ends_at, RunEndCause::kScenario});
  std::sort(c.begin(), c.end(), [](const EndCandidate& a, const EndCandidate& b) { return a.at < b.at; });
  return c;
}

}  // namespace

std::optional<Time> RunEnd(const BtRun& r, const Switches& s) {
  auto c = EndCandidates(r, s);
  if (c.empty()) return std::nullopt;
  return c.front().at;
}

RunEndCause RunEndReason(const BtRun& r, const Switches& s, Time t) {
  auto c = EndCandidates(r, s);
  if (c.empty() || c.front().at > t) return RunEndCause::kNone;
  return c.front().cause;
}

bool RunExists(const BtRun& r, Time t) { return r.created <= t && !(r.deleted_at && *r.deleted_at <= t); }

std::string RunStatus(const BtRun& r, const Switches& s, Time t) {
  auto end = RunEnd(r, s);
  return end && t >= *end ? "INACTIVE" : "ACTIVE";
}

std::string LoopsDeploymentStatus(const BtRun& r, const Switches& s, Time t) {
  switch (RunEndReason(r, s, t)) {
    case RunEndCause::kPreempted: return "PREEMPTED";
    case RunEndCause::kTimeout: return "SCALED_TO_ZERO";
    case RunEndCause::kNone: break;
    default: return "STOPPED";
  }
  if (t < r.created + std::chrono::seconds(30)) return "CREATED";
  if (t < r.created + std::chrono::minutes(3)) return "DEPLOYING";
  return "RUNNING";
}

bool LoopsDeploymentBills(const std::string& st) { return st == "CREATED" || st == "DEPLOYING" || st == "RUNNING"; }

std::string SamplerStatus(const BtSampler& smp, const BtOrg& org, const Switches& s, Time t) {
  if (!smp.paired_run.empty()) {
    auto it = org.run_index.find(smp.paired_run);
    if (it != org.run_index.end()) {
      const BtRun& run = org.runs[it->second];
      RunEndCause cause = RunEndReason(run, s, t);
      if (cause == RunEndCause::kTimeout) return "SCALED_TO_ZERO";
      if (cause != RunEndCause::kNone) return "INACTIVE";
    }
  }
  if (smp.deactivated_at && *smp.deactivated_at <= t) {
    return t < *smp.deactivated_at + std::chrono::seconds(20) ? "DEACTIVATING" : "INACTIVE";
  }
  if (t < smp.created + std::chrono::minutes(1)) return "DEPLOYING";
  if (t < smp.created + std::chrono::minutes(2)) return "LOADING_MODEL";
  return "ACTIVE";
}

bool SamplerBills(const std::string& st) {
  return st == "ACTIVE" || st == "BUILDING" || st == "DEPLOYING" || st == "LOADING_MODEL" || st == "UPDATING" ||
         st == "WAKING_UP" || st == "UNHEALTHY" || st == "DEACTIVATING";
}

bool DeploymentExists(const BtDeployment& d, Time t) {
  return d.created <= t && !(d.deleted_at && *d.deleted_at <= t);
}

Autoscaling SettingsAt(const BtDeployment& d, Time t) {
  Autoscaling a;
  for (const auto& [at, s] : d.settings) {
    if (at <= t) a = s;
  }
  return a;
}

namespace {

// The last activation state change at or before t: (time, active). Creation counts as
// an activation.
std::pair<Time, bool> LastActivation(const BtDeployment& d, Time t) {
  std::pair<Time, bool> last{d.created, true};
  for (const auto& [at, active] : d.activations) {
    if (at <= t) last = {at, active};
  }
  return last;
}

}  // namespace

int DeploymentReplicas(const BtDeployment& d, const Switches& s, Time t) {
  if (!DeploymentExists(d, t)) return 0;
  const auto [since, active] = LastActivation(d, t);
  if (!active) return 0;
  const Autoscaling a = SettingsAt(d, t);
  if (a.max_replica <= 0) return 0;
  if (t < since + std::chrono::minutes(1)) return std::max(1, std::min(a.min_replica, a.max_replica));
  if (Covers(d.traffic, t)) return std::min(a.max_replica, std::max(a.min_replica, 1));
  if (a.min_replica > 0) return std::min(a.min_replica, a.max_replica);
  // min 0: the autoscaler keeps a replica for scale_down_delay after the last reason to
  // have one (traffic, activation, or lowering min_replica from above zero).
  Time reference = since;
  if (auto lt = LastActive(d.traffic, t)) reference = std::max(reference, *lt);
  int prev_min = 0;
  for (const auto& [at, st] : d.settings) {
    if (at > t) break;
    if (prev_min > 0 && st.min_replica == 0) reference = std::max(reference, at);
    prev_min = st.min_replica;
  }
  const Duration delay = a.scale_down_delay ? std::chrono::seconds(*a.scale_down_delay) : s.inference_scale_down_delay;
  return t < reference + delay ? 1 : 0;
}

std::string DeploymentStatus(const BtDeployment& d, const Switches& s, Time t) {
  const auto [since, active] = LastActivation(d, t);
  if (!active) return "INACTIVE";
  if (since == d.created && t < d.created + std::chrono::minutes(1)) return "DEPLOYING";
  if (since != d.created && t < since + std::chrono::minutes(1)) return "WAKING_UP";
  return DeploymentReplicas(d, s, t) > 0 ? "ACTIVE" : "SCALED_TO_ZERO";
}

bool CheckpointSyncing(const BtCheckpoint& c, const Switches& s, Time t) { return t < c.at + s.sync_delay; }

// ---------------- Fireworks ----------------

bool SessionVisible(const FwSession& x, const Switches& s, Time t) {
  if (t < x.created) return false;
  if (x.deleted_at && s.delete_final_state == "gone" && t >= *x.deleted_at + s.delete_latency) return false;
  return true;
}

std::string SessionState(const FwSession& x, const Switches& s, Time t) {
  if (x.failed_at && *x.failed_at <= t) return "FAILED";
  if (x.deleted_at && *x.deleted_at <= t) return t < *x.deleted_at + s.delete_latency ? "DELETING" : "EXPIRED";
  if (s.heartbeat_release) {
    Time last = x.created;
    for (Time h : x.heartbeats) {
      if (h <= t) last = std::max(last, h);
    }
    if (auto a = LastActive(x.activity, t)) last = std::max(last, *a);
    if (t >= last + *s.heartbeat_release) return "EXPIRED";
  }
  return x.leaked ? "TRAINING_SESSION_STATE_UNSPECIFIED" : "READY";
}

bool SessionHoldsSlot(const FwSession& x, const Switches& s, Time t) {
  const std::string st = SessionState(x, s, t);
  return st == "READY" || st == "TRAINING_SESSION_STATE_UNSPECIFIED";
}

Time SessionUpdateTime(const FwSession& x, const Switches& s, Time t) {
  Time u = x.created;
  if (s.session_update_time_tracks_activity) {
    if (auto a = LastActive(x.activity, t)) u = std::max(u, *a);
    for (const FwCheckpoint& c : x.checkpoints) {
      if (c.at <= t) u = std::max(u, c.at);
    }
  }
  if (x.deleted_at && *x.deleted_at <= t) u = std::max(u, *x.deleted_at);
  // Whole seconds: the API reports updateTime at its own precision, not ours.
  return std::chrono::floor<std::chrono::seconds>(u);
}

std::map<std::string, int64_t> SessionTokens(const FwSession& x, Time a, Time b) {
  std::map<std::string, double> acc;
  for (const Interval& i : x.activity) {
    const double secs = OverlapSeconds(i, a, b);
    if (secs <= 0) continue;
    for (const auto& [meter, per_min] : i.tokens_per_min) acc[meter] += per_min * secs / 60.0;
  }
  std::map<std::string, int64_t> out;
  for (const auto& [m, v] : acc) out[m] = static_cast<int64_t>(v);
  return out;
}

bool SessionCheckpointsReachable(const FwSession& x, Time t) {
  if (x.deleted_at && *x.deleted_at <= t) return false;
  if (x.drained_at && *x.drained_at <= t) return false;
  return true;
}

namespace {

struct Segment {
  Time start;
  Time end;            // Forever() when still live
  bool cancelled = false;  // ended by :cancel (else by the inactivity reaper)
};

// The job's live segments: from placement (or a resume) to a cancel or the inactivity
// auto-stop, whichever comes first.
std::vector<Segment> JobSegments(const FwRlorJob& j, const Switches& s) {
  std::vector<Time> starts{j.created + j.placement_delay + std::chrono::minutes(1)};
  for (Time r : j.resumed_at) starts.push_back(r);
  std::sort(starts.begin(), starts.end());
  const Duration timeout = j.inactivity_timeout.value_or(s.rlor_inactivity_timeout);
  std::vector<Interval> acts = j.activity;
  std::sort(acts.begin(), acts.end(), [](const Interval& a, const Interval& b) { return a.from < b.from; });
  std::vector<Segment> out;
  for (size_t k = 0; k < starts.size(); ++k) {
    const Time start = starts[k];
    const Time next = k + 1 < starts.size() ? starts[k + 1] : Forever();
    if (!out.empty() && start < out.back().end) continue;  // resume while live: no new segment
    Segment seg{start, next, false};
    for (Time c : j.cancels) {
      if (c >= start && c < seg.end) {
        seg.end = c;
        seg.cancelled = true;
      }
    }
    if (!j.disable_inactivity_cleanup && timeout > Duration::zero()) {
      Time last = start;
      std::optional<Time> stop;
      for (const Interval& i : acts) {
        if (i.to <= start) continue;
        if (i.from > last + timeout) {
          stop = last + timeout;
          break;
        }
        last = std::max(last, i.to);
      }
      if (!stop && last < Forever()) stop = last + timeout;
      if (stop && *stop < seg.end) {
        seg.end = *stop;
        seg.cancelled = false;
      }
    }
    out.push_back(seg);
  }
  return out;
}

}  // namespace

std::string JobState(const FwRlorJob& j, const Switches& s, Time t) {
  if (j.deleted_at && *j.deleted_at <= t) return "JOB_STATE_DELETED";
  if (t < j.created + j.placement_delay) return "JOB_STATE_PENDING";
  if (t < j.created + j.placement_delay + std::chrono::minutes(1)) return "JOB_STATE_CREATING";
  const std::vector<Segment> segs = JobSegments(j, s);
  const Segment* last = nullptr;
  for (const Segment& seg : segs) {
    if (seg.start <= t) last = &seg;
  }
  if (last == nullptr) return "JOB_STATE_CREATING";
  if (t < last->end) return Covers(j.activity, t) ? "JOB_STATE_RUNNING" : "JOB_STATE_IDLE";
  if (last->cancelled) return t < last->end + std::chrono::seconds(10) ? "JOB_STATE_CANCELLING" : "JOB_STATE_CANCELLED";
  return s.inactivity_end_state;
}

bool JobBills(const std::string& st) {
  return st == "JOB_STATE_RUNNING" || st == "JOB_STATE_IDLE" || st == "JOB_STATE_WRITING_RESULTS" ||
         st == "JOB_STATE_CREATING" || st == "JOB_STATE_CANCELLING" || st == "JOB_STATE_DELETING_CLEANING_UP";
}

int64_t JobAcceleratorSeconds(const FwRlorJob& j, const Switches& s, Time t) {
  const Time billing_start = j.created + j.placement_delay;
  double secs = 0;
  const std::vector<Segment> segs = JobSegments(j, s);
  for (size_t k = 0; k < segs.size(); ++k) {
    const Time a = k == 0 ? billing_start : segs[k].start;
    Time b = std::min(segs[k].end, t);
    if (j.deleted_at) b = std::min(b, *j.deleted_at);
    if (b > a) secs += static_cast<double>((b - a).count()) / 1e6;
  }
  return static_cast<int64_t>(secs) * j.accelerator_count * j.nodes;
}

int64_t JobAcceleratorSecondsPublished(const FwRlorJob& j, const Switches& s, Time t) {
  if (t <= j.created) return 0;
  const int64_t period = std::max<int64_t>(1, s.accel_update_period.count());
  const int64_t since = (t - j.created).count();
  return JobAcceleratorSeconds(j, s, j.created + Duration(since / period * period));
}

int64_t JobProgressSteps(const FwRlorJob& j, Time t) {
  double secs = 0;
  for (const Interval& i : j.activity) secs += OverlapSeconds(i, j.created, t);
  return static_cast<int64_t>(secs / 10);  // a step every 10 s of training
}

bool JobHealthy(const FwRlorJob& j, const Switches& s, Time t) {
  const std::string st = JobState(j, s, t);
  if (st != "JOB_STATE_RUNNING" && st != "JOB_STATE_IDLE") return false;
  return !(j.crashed_at && *j.crashed_at <= t);
}

bool FwDeploymentVisible(const FwDeployment& d, Time t, bool show_deleted) {
  if (t < d.created) return false;
  if (d.hard_deleted_at && *d.hard_deleted_at <= t) return false;
  const bool soft = d.soft_deleted_at && *d.soft_deleted_at <= t &&
                    !(d.undeleted_at && *d.undeleted_at >= *d.soft_deleted_at && *d.undeleted_at <= t);
  if (soft) {
    // Purged for good after purgeTime.
    return show_deleted && t < *d.soft_deleted_at + std::chrono::hours(24 * 7);
  }
  return true;
}

std::string FwDeploymentState(const FwDeployment& d, Time t) {
  if (d.soft_deleted_at && *d.soft_deleted_at <= t &&
      !(d.undeleted_at && *d.undeleted_at >= *d.soft_deleted_at && *d.undeleted_at <= t)) {
    return "DELETED";
  }
  if (t < d.created + std::chrono::minutes(2)) return "CREATING";
  return "READY";
}

std::pair<int, int> FwMinMax(const FwDeployment& d, Time t) {
  int mn = d.min_replicas, mx = d.max_replicas;
  for (const FwPatch& p : d.patches) {
    if (p.at > t) break;
    if (p.min_replicas) mn = *p.min_replicas;
    if (p.max_replicas) mx = *p.max_replicas;
  }
  return {mn, mx};
}

int FwReplicas(const FwDeployment& d, Time t) {
  if (FwDeploymentState(d, t) == "DELETED" || !FwDeploymentVisible(d, t, true)) return 0;
  const auto [mn, mx] = FwMinMax(d, t);
  if (mx <= 0) return 0;
  if (t < d.created + std::chrono::minutes(2)) return std::max(1, std::min(mn, mx));
  // An explicit :scale holds until the next patch.
  const FwPatch* last = nullptr;
  for (const FwPatch& p : d.patches) {
    if (p.at <= t) last = &p;
  }
  if (last && last->scale_replicas) return std::clamp(*last->scale_replicas, 0, mx);
  if (Covers(d.traffic, t)) return std::min(mx, std::max(mn, 1));
  if (mn > 0) return std::min(mn, mx);
  Time reference = d.created + std::chrono::minutes(2);
  if (auto lt = LastActive(d.traffic, t)) reference = std::max(reference, *lt);
  int prev_min = d.min_replicas;
  for (const FwPatch& p : d.patches) {
    if (p.at > t) break;
    if (p.min_replicas) {
      if (prev_min > 0 && *p.min_replicas == 0) reference = std::max(reference, p.at);
      prev_min = *p.min_replicas;
    }
  }
  return t < reference + d.scale_to_zero_window ? 1 : 0;
}

int64_t FwDeploymentAcceleratorSeconds(const FwDeployment& d, Time a, Time b) {
  if (b <= a) return 0;
  int64_t total = 0;
  const Duration step = std::chrono::minutes(1);
  for (Time t = std::chrono::floor<std::chrono::minutes>(a); t < b; t += step) {
    if (t < a) continue;
    total += static_cast<int64_t>(FwReplicas(d, t)) * d.accelerator_count * 60;
  }
  return total;
}

}  // namespace loopwarden::sim
