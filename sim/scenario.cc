#include "sim/scenario.h"

#include "core/schema.h"

namespace loopwarden::sim {
namespace {

using schema::Context;
using schema::Object;
using schema::Type;

// "-2h", "+30m", "0s" from the epoch; RFC 3339; or "forever".
Type<Time> SimTime(Time epoch) {
  Type<Time> t;
  t.read = [epoch](Context& c, const ConfigNode& n, Time& out) {
    auto text = c.ScalarText(n, "a time: -2h, +30m, an RFC 3339 instant or forever");
    if (!text) return false;
    if (*text == "forever") {
      out = Forever();
      return true;
    }
    const bool absolute = text->size() >= 19 && (*text)[4] == '-' && text->find('T') != std::string::npos;
    if (!absolute) {
      const bool neg = text->front() == '-';
      std::string d = (text->front() == '-' || text->front() == '+') ? text->substr(1) : *text;
      auto dur = ParseDuration(d);
      if (!dur.ok()) {
        c.Error(n.mark, "invalid time '" + *text + "' (use -2h, +30m, an RFC 3339 instant, or forever)");
        return false;
      }
      out = neg ? epoch - *dur : epoch + *dur;
      return true;
    }
    auto abs = ParseTime(*text);
    if (!abs.ok()) {
      c.Error(n.mark, abs.status().message());
      return false;
    }
    out = *abs;
    return true;
  };
  t.json = [] { return boost::json::object{{"type", "string"}}; };
  return t;
}

Type<std::vector<Interval>> Intervals(Time epoch) {
  Object<Interval> o("a span of activity");
  o.Field("from", &Interval::from, SimTime(epoch), {.required = true});
  o.Field("to", &Interval::to, SimTime(epoch), {.required = true});
  o.Field("gpu_util", &Interval::level, schema::Number(0, 100));
  o.Field("requests_per_min", &Interval::rate, schema::Number(0, 1e9));
  o.Field("tokens_per_min", &Interval::tokens_per_min, schema::MapOf(schema::Number(0, 1e12)));
  o.Check([](Context& c, const ConfigNode& n, Interval& i) {
    if (i.to <= i.from) c.Error(n.mark, "'to' must be after 'from'");
  });
  return schema::ListOf(o.Build());
}

Type<Switches> SwitchesType() {
  Object<Switches> o("provider-side switches (shared/providers §7)");
  o.Field("loops_default_scale_down_delay", &Switches::loops_default_scale_down_delay, schema::DurationType());
  o.Field("repeat_deactivate_status", &Switches::repeat_deactivate_status, [] {
    Type<int> t;
    auto base = schema::Integer(200, 404);
    t.read = [base](Context& c, const ConfigNode& n, int& out) {
      int64_t v = 0;
      if (!base.read(c, n, v)) return false;
      out = static_cast<int>(v);
      return true;
    };
    t.json = base.json;
    return t;
  }());
  o.Field("deployments_hide_stopped", &Switches::deployments_hide_stopped, schema::Bool());
  o.Field("conflict_body_run_id", &Switches::conflict_body_run_id, schema::Bool());
  o.Field("kept_checkpoints_as_ids", &Switches::kept_checkpoints_as_ids, schema::Bool());
  o.Field("inference_scale_down_delay", &Switches::inference_scale_down_delay, schema::DurationType());
  o.Field("gpu_util_percent", &Switches::gpu_util_percent, schema::Bool());
  o.Field("full_create_response", &Switches::full_create_response, schema::Bool());
  o.Field("retry_after_header", &Switches::retry_after_header, schema::Bool());
  o.Field("sync_delay", &Switches::sync_delay, schema::DurationType());
  o.Field("files_empty_last_page", &Switches::files_empty_last_page, schema::Bool());
  o.Field("delete_latency", &Switches::delete_latency, schema::DurationType());
  o.Field("rlor_inactivity_timeout", &Switches::rlor_inactivity_timeout, schema::DurationType());
  o.Field("accel_update_period", &Switches::accel_update_period, schema::DurationType());
  o.Field("tombstone_retention", &Switches::tombstone_retention, schema::DurationType());
  o.Field("promote_latency", &Switches::promote_latency, schema::DurationType());
  o.Field("purge_delay", &Switches::purge_delay, schema::DurationType());
  o.Field("usage_lag", &Switches::usage_lag, schema::DurationType());
  o.Field("usage_provisional_lag", &Switches::usage_provisional_lag, schema::DurationType());
  o.Field("money_as", &Switches::money_as,
          schema::Enum<std::string>({{"mixed", "mixed"}, {"number", "number"}, {"string", "string"}}));
  o.Field("slot_unit", &Switches::slot_unit, schema::Enum<std::string>({{"runs", "runs"}, {"sessions", "sessions"}}));
  o.Field("delete_final_state", &Switches::delete_final_state,
          schema::Enum<std::string>({{"gone", "gone"}, {"EXPIRED", "EXPIRED"}}));
  o.Field("inactivity_end_state", &Switches::inactivity_end_state,
          schema::Enum<std::string>({{"JOB_STATE_CANCELLED", "JOB_STATE_CANCELLED"},
                                     {"JOB_STATE_EXPIRED", "JOB_STATE_EXPIRED"}}));
  o.Field("promote_mode", &Switches::promote_mode,
          schema::Enum<std::string>({{"async", "async"}, {"sync", "sync"}}));
  o.Field("patch_without_mask", &Switches::patch_without_mask,
          schema::Enum<std::string>({{"replace", "replace"}, {"merge", "merge"}}));
  o.Field("checkpoint_list_key", &Switches::checkpoint_list_key,
          schema::Enum<std::string>({{"trainingSessionCheckpoints", "trainingSessionCheckpoints"},
                                     {"training_session_checkpoints", "training_session_checkpoints"},
                                     {"checkpoints", "checkpoints"}}));
  o.Field("page_token_integer", &Switches::page_token_integer, schema::Bool());
  o.Field("session_update_time_tracks_activity", &Switches::session_update_time_tracks_activity, schema::Bool());
  o.Optional("heartbeat_release", &Switches::heartbeat_release, schema::DurationType());
  auto int_field = [](int64_t lo, int64_t hi) {
    Type<int> t;
    auto base = schema::Integer(lo, hi);
    t.read = [base](Context& c, const ConfigNode& n, int& out) {
      int64_t v = 0;
      if (!base.read(c, n, v)) return false;
      out = static_cast<int>(v);
      return true;
    };
    t.json = base.json;
    return t;
  };
  o.Field("in_use_status", &Switches::in_use_status, int_field(400, 409));
  o.Field("baseten_org_cap", &Switches::baseten_org_cap, int_field(0, 100000));
  o.Field("slot_cap", &Switches::slot_cap, int_field(0, 100000));
  o.Field("fireworks_rpm", &Switches::fireworks_rpm, int_field(1, 10'000'000));
  o.Field("slot_cap_per_model", &Switches::slot_cap_per_model, schema::MapOf(int_field(0, 100000)));
  return o.Build();
}

Type<int> IntType(int64_t lo, int64_t hi) {
  Type<int> t;
  auto base = schema::Integer(lo, hi);
  t.read = [base](Context& c, const ConfigNode& n, int& out) {
    int64_t v = 0;
    if (!base.read(c, n, v)) return false;
    out = static_cast<int>(v);
    return true;
  };
  t.json = base.json;
  return t;
}

Type<FaultConfig> FaultsType() {
  Object<FaultRule> r("a fault rule");
  r.Field("match", &FaultRule::match, schema::String());
  r.Field("methods", &FaultRule::methods, schema::StringList());
  r.Field("error_rate", &FaultRule::error_rate, schema::Number(0, 1));
  r.Field("rate_limit_rate", &FaultRule::rate_limit_rate, schema::Number(0, 1));
  r.Field("retry_after", &FaultRule::retry_after, schema::DurationType());
  r.Optional("burst_every", &FaultRule::burst_every, schema::DurationType());
  r.Field("burst_length", &FaultRule::burst_length, schema::DurationType());
  r.Field("reset_rate", &FaultRule::reset_rate, schema::Number(0, 1));
  r.Field("truncate_rate", &FaultRule::truncate_rate, schema::Number(0, 1));
  r.Field("malformed_rate", &FaultRule::malformed_rate, schema::Number(0, 1));
  r.Field("latency_rate", &FaultRule::latency_rate, schema::Number(0, 1));
  r.Field("latency", &FaultRule::latency, schema::DurationType());
  r.Optional("fail_page", &FaultRule::fail_page, IntType(1, 100000));
  Object<FaultConfig> o("fault injection");
  o.Field("seed", &FaultConfig::seed, [] {
    Type<uint64_t> t;
    auto base = schema::Integer(0, INT64_MAX);
    t.read = [base](Context& c, const ConfigNode& n, uint64_t& out) {
      int64_t v = 0;
      if (!base.read(c, n, v)) return false;
      out = static_cast<uint64_t>(v);
      return true;
    };
    t.json = base.json;
    return t;
  }());
  o.Field("rules", &FaultConfig::rules, schema::ListOf(r.Build()));
  o.Field("stale_reads", &FaultConfig::stale_reads, schema::DurationType());
  return o.Build();
}

// ---- Baseten ----

struct RunSamplerSpec {
  std::string id;
  Time at;
  std::string instance_type = "H100x26x234";
  int nodes = 1;
  std::vector<Interval> traffic;
};

struct RunSpec {
  BtRun run;
  std::optional<RunSamplerSpec> sampler;
};

struct DeploymentSpec {
  BtDeployment d;
  Autoscaling autoscaling;
  bool production = false;
};

struct ModelSpec {
  BtModel model;
  std::vector<DeploymentSpec> deployments;
};

struct OrgSpec {
  std::string name;
  std::vector<BtKey> keys;
  std::vector<RunSpec> runs;
  std::vector<BtSampler> samplers;
  std::vector<ModelSpec> models;
};

Type<std::vector<BtCheckpoint>> BtCheckpoints(Time epoch) {
  Object<BtCheckpoint> o("a Loops checkpoint save");
  o.Field("id", &BtCheckpoint::id, schema::String());
  o.Field("name", &BtCheckpoint::name, schema::String(), {.required = true});
  o.Field("target", &BtCheckpoint::target, schema::Enum<std::string>({{"sampler", "sampler"}, {"trainer", "trainer"}}));
  o.Field("at", &BtCheckpoint::at, SimTime(epoch), {.required = true});
  o.Field("size_bytes", &BtCheckpoint::size_bytes, schema::Integer(0, int64_t{1} << 50));
  return schema::ListOf(o.Build());
}

Type<OrgSpec> OrgType(Time epoch) {
  Object<BtKey> key("an API key");
  key.Field("key", &BtKey::key, schema::String(), {.required = true});
  key.Field("owner", &BtKey::owner, schema::String());
  key.Field("org_visible", &BtKey::org_visible, schema::Bool());

  Object<RunSamplerSpec> smp("the run's paired sampler");
  smp.Field("id", &RunSamplerSpec::id, schema::String());
  smp.Field("at", &RunSamplerSpec::at, SimTime(epoch), {.required = true});
  smp.Field("instance_type", &RunSamplerSpec::instance_type, schema::String());
  smp.Field("nodes", &RunSamplerSpec::nodes, IntType(1, 64));
  smp.Field("traffic", &RunSamplerSpec::traffic, Intervals(epoch));

  // Run fields live in RunSpec::run; read them through a nested Object on BtRun.
  Object<BtRun> run("a Loops run");
  run.Field("id", &BtRun::id, schema::String(), {.required = true});
  run.Field("session_id", &BtRun::session_id, schema::String());
  run.Field("name", &BtRun::name, schema::String());
  run.Field("owner", &BtRun::owner, schema::String());
  run.Field("base_model", &BtRun::base_model, schema::String());
  run.Field("created", &BtRun::created, SimTime(epoch), {.required = true});
  run.Field("mode", &BtRun::dedicated, schema::Enum<bool>({{"dedicated", true}, {"serverless", false}}));
  run.Field("deployment_id", &BtRun::deployment_id, schema::String());
  run.Field("instance_type", &BtRun::instance_type, schema::String());
  run.Field("nodes", &BtRun::nodes, IntType(1, 64));
  run.Field("availability", &BtRun::availability,
            schema::Enum<std::string>({{"dedicated", "dedicated"}, {"spot", "spot"}}));
  run.Optional("scale_down_delay", &BtRun::scale_down_delay, schema::DurationType());
  run.Field("activity", &BtRun::activity, Intervals(epoch));
  run.Field("keepalive", &BtRun::keepalive, Intervals(epoch));
  run.Field("checkpoints", &BtRun::checkpoints, BtCheckpoints(epoch));
  run.Optional("preempt_at", &BtRun::preempted_at, SimTime(epoch));
  run.Optional("ends_at", &BtRun::ends_at, SimTime(epoch));
  auto run_type = run.Build();
  auto smp_type = smp.Build();
  Type<RunSpec> run_spec;
  run_spec.read = [run_type, smp_type](Context& c, const ConfigNode& n, RunSpec& out) {
    // `sampler:` belongs to the spec, everything else to the run.
    ConfigNode without = n;
    const ConfigNode* s = nullptr;
    std::erase_if(without.entries, [&](const ConfigNode::Entry& e) {
      if (e.key == "sampler") {
        s = n.Find("sampler");
        return true;
      }
      return false;
    });
    bool ok = run_type.read(c, without, out.run);
    if (s) {
      schema::PathScope scope(c, "sampler");
      RunSamplerSpec sp;
      if (smp_type.read(c, *s, sp)) {
        out.sampler = sp;
      } else {
        ok = false;
      }
    }
    return ok;
  };
  run_spec.json = run_type.json;

  Object<BtSampler> sampler("a standalone sampler");
  sampler.Field("id", &BtSampler::id, schema::String(), {.required = true});
  sampler.Field("base_model", &BtSampler::base_model, schema::String());
  sampler.Field("owner", &BtSampler::owner, schema::String());
  sampler.Field("created", &BtSampler::created, SimTime(epoch), {.required = true});
  sampler.Field("instance_type", &BtSampler::instance_type, schema::String());
  sampler.Field("nodes", &BtSampler::nodes, IntType(1, 64));
  sampler.Field("traffic", &BtSampler::traffic, Intervals(epoch));

  Object<BtDeployment> dep("an inference deployment");
  dep.Field("id", &BtDeployment::id, schema::String(), {.required = true});
  dep.Field("name", &BtDeployment::name, schema::String());
  dep.Field("created", &BtDeployment::created, SimTime(epoch), {.required = true});
  dep.Field("instance_type", &BtDeployment::instance_type, schema::String());
  dep.Field("traffic", &BtDeployment::traffic, Intervals(epoch));
  dep.Field("labels", &BtDeployment::labels, schema::MapOf(schema::String()));
  auto dep_type = dep.Build();
  Object<Autoscaling> as("autoscaling settings");
  as.Field("min_replica", &Autoscaling::min_replica, IntType(0, 1000));
  as.Field("max_replica", &Autoscaling::max_replica, IntType(0, 1000));
  as.Optional("scale_down_delay", &Autoscaling::scale_down_delay, IntType(0, 86400 * 30));
  auto as_type = as.Build();
  Type<DeploymentSpec> dep_spec;
  dep_spec.read = [dep_type, as_type](Context& c, const ConfigNode& n, DeploymentSpec& out) {
    ConfigNode rest = n;
    ConfigNode scaling;
    scaling.kind = ConfigNode::Kind::kMap;
    scaling.mark = n.mark;
    bool ok = true;
    std::erase_if(rest.entries, [&](const ConfigNode::Entry& e) {
      if (e.key == "min_replica" || e.key == "max_replica" || e.key == "scale_down_delay") {
        scaling.entries.push_back(e);
        return true;
      }
      if (e.key == "production") {
        ok = schema::Bool().read(c, e.value, out.production) && ok;
        return true;
      }
      return false;
    });
    ok = dep_type.read(c, rest, out.d) && ok;
    ok = as_type.read(c, scaling, out.autoscaling) && ok;
    return ok;
  };
  dep_spec.json = dep_type.json;

  Object<BtModel> model_fields("model fields");
  model_fields.Field("id", &BtModel::id, schema::String(), {.required = true});
  model_fields.Field("name", &BtModel::name, schema::String());
  model_fields.Field("created", &BtModel::created, SimTime(epoch), {.required = true});
  model_fields.Field("team", &BtModel::team, schema::String());
  auto model_fields_type = model_fields.Build();
  auto deps_type = schema::ListOf(dep_spec);
  Type<ModelSpec> model_spec;
  model_spec.read = [model_fields_type, deps_type](Context& c, const ConfigNode& n, ModelSpec& out) {
    ConfigNode rest = n;
    const ConfigNode* deps = n.Find("deployments");
    std::erase_if(rest.entries, [](const ConfigNode::Entry& e) { return e.key == "deployments"; });
    bool ok = model_fields_type.read(c, rest, out.model);
    if (deps) {
      schema::PathScope scope(c, "deployments");
      ok = deps_type.read(c, *deps, out.deployments) && ok;
    }
    return ok;
  };
  model_spec.json = model_fields_type.json;

  Object<OrgSpec> org("a Baseten organization");
  org.Field("org", &OrgSpec::name, schema::String(), {.required = true});
  org.Field("keys", &OrgSpec::keys, schema::ListOf(key.Build()), {.required = true});
  org.Field("runs", &OrgSpec::runs, schema::ListOf(run_spec));
  org.Field("samplers", &OrgSpec::samplers, schema::ListOf(sampler.Build()));
  org.Field("models", &OrgSpec::models, schema::ListOf(model_spec));
  return org.Build();
}

// ---- Fireworks ----

struct FwCheckpointSpec {
  std::string name;
  Time at;
  bool promotable = true;
};

Type<std::vector<FwCheckpointSpec>> FwCheckpoints(Time epoch) {
  Object<FwCheckpointSpec> o("a checkpoint save");
  o.Field("name", &FwCheckpointSpec::name, schema::String(), {.required = true});
  o.Field("at", &FwCheckpointSpec::at, SimTime(epoch), {.required = true});
  o.Field("promotable", &FwCheckpointSpec::promotable, schema::Bool());
  return schema::ListOf(o.Build());
}

struct SessionSpec {
  FwSession s;
  std::vector<FwCheckpointSpec> checkpoints;
};
struct JobSpec {
  FwRlorJob j;
  std::vector<FwCheckpointSpec> checkpoints;
};

struct AccountSpec {
  std::string id;
  std::vector<FwKey> keys;
  std::optional<int> slot_cap;
  std::vector<SessionSpec> sessions;
  std::vector<JobSpec> jobs;
  std::vector<FwDeployment> deployments;
};

template <class Spec, class Inner>
Type<Spec> WithCheckpoints(Type<Inner> inner, Inner Spec::*member, Type<std::vector<FwCheckpointSpec>> cks) {
  Type<Spec> t;
  t.read = [inner, member, cks](Context& c, const ConfigNode& n, Spec& out) {
    ConfigNode rest = n;
    const ConfigNode* ck = n.Find("checkpoints");
    std::erase_if(rest.entries, [](const ConfigNode::Entry& e) { return e.key == "checkpoints"; });
    bool ok = inner.read(c, rest, out.*member);
    if (ck) {
      schema::PathScope scope(c, "checkpoints");
      ok = cks.read(c, *ck, out.checkpoints) && ok;
    }
    return ok;
  };
  t.json = inner.json;
  return t;
}

Type<AccountSpec> AccountType(Time epoch) {
  Object<FwKey> key("an API key");
  key.Field("key", &FwKey::key, schema::String(), {.required = true});
  key.Field("owner", &FwKey::owner, schema::String());
  key.Field("training", &FwKey::training, schema::Bool());

  Object<FwSession> session("a serverless training session");
  session.Field("id", &FwSession::id, schema::String());
  session.Field("name", &FwSession::display_name, schema::String());
  session.Field("base_model", &FwSession::base_model, schema::String());
  session.Field("owner", &FwSession::owner, schema::String());
  session.Field("created", &FwSession::created, SimTime(epoch), {.required = true});
  session.Field("leaked", &FwSession::leaked, schema::Bool());
  session.Field("lora_rank", &FwSession::lora_rank, IntType(1, 1024));
  session.Field("activity", &FwSession::activity, Intervals(epoch));
  session.Optional("drain_at", &FwSession::drained_at, SimTime(epoch));

  Object<FwRlorJob> job("an RLOR trainer job");
  job.Field("id", &FwRlorJob::id, schema::String(), {.required = true});
  job.Field("name", &FwRlorJob::display_name, schema::String());
  job.Field("owner", &FwRlorJob::owner, schema::String());
  job.Field("base_model", &FwRlorJob::base_model, schema::String());
  job.Field("created", &FwRlorJob::created, SimTime(epoch), {.required = true});
  job.Field("accelerator", &FwRlorJob::accelerator, schema::String());
  job.Field("accelerator_count", &FwRlorJob::accelerator_count, IntType(1, 64));
  job.Field("nodes", &FwRlorJob::nodes, IntType(1, 64));
  job.Field("placement_delay", &FwRlorJob::placement_delay, schema::DurationType());
  job.Optional("inactivity_timeout", &FwRlorJob::inactivity_timeout, schema::DurationType());
  job.Field("disable_inactivity_cleanup", &FwRlorJob::disable_inactivity_cleanup, schema::Bool());
  job.Field("activity", &FwRlorJob::activity, Intervals(epoch));
  job.Optional("crash_at", &FwRlorJob::crashed_at, SimTime(epoch));
  job.Field("hot_load_deployment", &FwRlorJob::hot_load_deployment, schema::String());

  Object<FwDeployment> dep("a dedicated deployment");
  dep.Field("id", &FwDeployment::id, schema::String(), {.required = true});
  dep.Field("name", &FwDeployment::display_name, schema::String());
  dep.Field("base_model", &FwDeployment::base_model, schema::String());
  dep.Field("owner", &FwDeployment::owner, schema::String());
  dep.Field("created", &FwDeployment::created, SimTime(epoch), {.required = true});
  dep.Field("accelerator", &FwDeployment::accelerator, schema::String());
  dep.Field("accelerator_count", &FwDeployment::accelerator_count, IntType(1, 64));
  dep.Field("min_replicas", &FwDeployment::min_replicas, IntType(0, 1000));
  dep.Field("max_replicas", &FwDeployment::max_replicas, IntType(0, 1000));
  dep.Field("scale_to_zero_window", &FwDeployment::scale_to_zero_window, schema::DurationAtLeast(std::chrono::minutes(5)));
  dep.Field("traffic", &FwDeployment::traffic, Intervals(epoch));
  dep.Field("hot_load_trainer_job", &FwDeployment::hot_load_trainer_job, schema::String());
  dep.Field("managed_rollout", &FwDeployment::managed_rollout, schema::Bool());
  dep.Field("listed_name", &FwDeployment::listed_name, schema::String());

  Object<AccountSpec> acct("a Fireworks account");
  acct.Field("account", &AccountSpec::id, schema::String(), {.required = true});
  acct.Field("keys", &AccountSpec::keys, schema::ListOf(key.Build()), {.required = true});
  acct.Optional("slot_cap", &AccountSpec::slot_cap, IntType(0, 100000));
  acct.Field("sessions", &AccountSpec::sessions,
             schema::ListOf(WithCheckpoints<SessionSpec, FwSession>(session.Build(), &SessionSpec::s, FwCheckpoints(epoch))));
  acct.Field("rlor_jobs", &AccountSpec::jobs,
             schema::ListOf(WithCheckpoints<JobSpec, FwRlorJob>(job.Build(), &JobSpec::j, FwCheckpoints(epoch))));
  acct.Field("deployments", &AccountSpec::deployments, schema::ListOf(dep.Build()));
  return acct.Build();
}

struct ScenarioDoc {
  std::optional<Time> epoch;
  Switches switches;
  FaultConfig faults;
  std::vector<OrgSpec> baseten;
  std::vector<AccountSpec> fireworks;
  std::optional<GenerateOptions> generate;
};

Type<GenerateOptions> GenerateType() {
  Object<GenerateOptions> o("a random fleet");
  o.Field("resources", &GenerateOptions::resources, IntType(0, 2'000'000));
  o.Field("accounts", &GenerateOptions::accounts, IntType(1, 1000));
  o.Field("seed", &GenerateOptions::seed, [] {
    Type<uint64_t> t;
    auto base = schema::Integer(0, INT64_MAX);
    t.read = [base](Context& c, const ConfigNode& n, uint64_t& out) {
      int64_t v = 0;
      if (!base.read(c, n, v)) return false;
      out = static_cast<uint64_t>(v);
      return true;
    };
    t.json = base.json;
    return t;
  }());
  o.Field("live_fraction", &GenerateOptions::live_fraction, schema::Number(0, 1));
  return o.Build();
}

std::string CheckpointServerName(World& w, const std::string& run_hex, const FwCheckpointSpec& c) {
  std::string name = run_hex + "-" + c.name;
  if (c.promotable) name += "-" + w.NewId("", 8);
  return name;
}

Result<Scenario> Build(ScenarioDoc doc, Time epoch) {
  Scenario sc;
  sc.epoch = epoch;
  World& w = sc.world;
  w.switches = doc.switches;
  w.instance_types = DefaultInstanceTypes();
  sc.faults = doc.faults;
  for (OrgSpec& os : doc.baseten) {
    BtOrg org;
    org.name = os.name;
    org.keys = os.keys;
    for (RunSpec& rs : os.runs) {
      BtRun r = std::move(rs.run);
      if (r.session_id.empty()) r.session_id = w.NewId("s", 6);
      if (r.dedicated) {
        if (r.deployment_id.empty()) r.deployment_id = w.NewId("ld", 5);
        if (r.instance_type.empty()) r.instance_type = "H100x8";
        if (!w.FindInstanceType(r.instance_type)) {
          return InvalidArgument("run " + r.id + ": unknown instance_type '" + r.instance_type + "'");
        }
      } else {
        r.deployment_id.clear();
      }
      if (r.owner.empty() && !org.keys.empty()) r.owner = org.keys[0].owner;
      if (r.base_model.empty()) r.base_model = r.dedicated ? "Qwen/Qwen3-8B" : "Qwen/Qwen3.6-35B-A3B";
      if (r.name.empty()) r.name = r.id;
      for (BtCheckpoint& c : r.checkpoints) {
        if (c.id.empty()) c.id = w.NewId("ck", 5);
      }
      if (rs.sampler) {
        BtSampler s;
        s.id = rs.sampler->id.empty() ? w.NewId("smp", 4) : rs.sampler->id;
        s.model_id = w.NewId("m", 7);
        s.deployment_id = w.NewId("d", 6);
        s.base_model = r.base_model;
        s.owner = r.owner;
        s.created = rs.sampler->at;
        s.instance_type = rs.sampler->instance_type;
        s.nodes = rs.sampler->nodes;
        s.paired_run = r.id;
        s.traffic = rs.sampler->traffic;
        r.sampler = s.id;
        org.samplers.push_back(std::move(s));
      }
      org.runs.push_back(std::move(r));
    }
    for (BtSampler& s : os.samplers) {
      if (s.model_id.empty()) s.model_id = w.NewId("m", 7);
      if (s.deployment_id.empty()) s.deployment_id = w.NewId("d", 6);
      if (s.instance_type.empty()) s.instance_type = "H100x26x234";
      if (s.owner.empty() && !org.keys.empty()) s.owner = org.keys[0].owner;
      if (s.base_model.empty()) s.base_model = "Qwen/Qwen3-8B";
      org.samplers.push_back(std::move(s));
    }
    for (ModelSpec& ms : os.models) {
      BtModel m = std::move(ms.model);
      if (m.name.empty()) m.name = m.id;
      for (DeploymentSpec& ds : ms.deployments) {
        BtDeployment d = std::move(ds.d);
        d.model_id = m.id;
        if (d.name.empty()) d.name = "deployment-" + std::to_string(m.deployments.size() + 1);
        if (d.instance_type.empty()) d.instance_type = "H100x26x234";
        d.is_production = ds.production;
        d.is_development = !ds.production;
        d.settings.push_back({d.created, ds.autoscaling});
        m.deployments.push_back(d.id);
        org.deployments.push_back(std::move(d));
      }
      org.models.push_back(std::move(m));
    }
    org.Reindex();
    w.orgs.push_back(std::move(org));
  }
  for (AccountSpec& as : doc.fireworks) {
    FwAccount a;
    a.id = as.id;
    a.keys = as.keys;
    a.slot_cap = as.slot_cap;
    for (SessionSpec& ss : as.sessions) {
      FwSession s = std::move(ss.s);
      if (s.id.empty()) s.id = w.NewId("ts-", 32);
      s.run_id = w.NewId("run-", 32);
      if (s.leaked) s.base_model.clear();
      else if (s.base_model.empty()) s.base_model = "accounts/fireworks/models/qwen3p8-27b";
      if (s.owner.empty() && !a.keys.empty()) s.owner = a.keys[0].owner;
      for (const FwCheckpointSpec& c : ss.checkpoints) {
        s.checkpoints.push_back({c.name, CheckpointServerName(w, s.run_id, c), c.promotable, c.at});
      }
      std::sort(s.checkpoints.begin(), s.checkpoints.end(),
                [](const FwCheckpoint& x, const FwCheckpoint& y) { return x.at < y.at; });
      a.sessions.push_back(std::move(s));
    }
    for (JobSpec& js : as.jobs) {
      FwRlorJob j = std::move(js.j);
      if (j.owner.empty() && !a.keys.empty()) j.owner = a.keys[0].owner;
      if (j.base_model.empty()) j.base_model = "accounts/fireworks/models/qwen3-8b";
      for (const FwCheckpointSpec& c : js.checkpoints) j.checkpoints.push_back({c.name, c.name, c.promotable, c.at});
      a.jobs.push_back(std::move(j));
    }
    for (FwDeployment& d : as.deployments) {
      if (d.owner.empty() && !a.keys.empty()) d.owner = a.keys[0].owner;
      if (d.base_model.empty()) d.base_model = "accounts/fireworks/models/qwen3-8b";
      if (d.managed_rollout) d.min_replicas = d.max_replicas = std::max(1, d.max_replicas);
      if (d.max_replicas < d.min_replicas) d.max_replicas = d.min_replicas;
      a.deployments.push_back(std::move(d));
    }
    a.Reindex();
    w.accounts.push_back(std::move(a));
  }
  if (doc.generate) GenerateFleet(w, epoch, *doc.generate);
  return sc;
}

}  // namespace

Result<Scenario> LoadScenarioText(std::string_view text, std::string_view origin, Time default_epoch) {
  LW_ASSIGN_OR_RETURN(ConfigNode root, ParseConfigText(text, origin));
  // The epoch decides how every relative time reads, so it is read first.
  Time epoch = default_epoch;
  Context ctx{std::string(origin)};
  if (const ConfigNode* e = root.Find("epoch")) {
    schema::PathScope scope(ctx, "epoch");
    schema::TimeType().read(ctx, *e, epoch);
  }
  Object<ScenarioDoc> o("a loopwarden-sim scenario");
  o.Optional("epoch", &ScenarioDoc::epoch, schema::TimeType());
  o.Field("switches", &ScenarioDoc::switches, SwitchesType());
  o.Field("faults", &ScenarioDoc::faults, FaultsType());
  o.Field("baseten", &ScenarioDoc::baseten, schema::ListOf(OrgType(epoch)));
  o.Field("fireworks", &ScenarioDoc::fireworks, schema::ListOf(AccountType(epoch)));
  o.Optional("generate", &ScenarioDoc::generate, GenerateType());
  if (root.IsNull()) {
    root.kind = ConfigNode::Kind::kMap;
  }
  LW_ASSIGN_OR_RETURN(ScenarioDoc doc, schema::ReadDocument(ctx, root, o.Build()));
  return Build(std::move(doc), epoch);
}

Result<Scenario> LoadScenarioFile(const std::string& path, Time default_epoch) {
  LW_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path, 4 << 20));
  return LoadScenarioText(text, path, default_epoch);
}

}  // namespace loopwarden::sim
