// Random fleets for scale tests and benchmarks: deterministic in the seed.
#include <random>

#include "sim/scenario.h"

namespace loopwarden::sim {
namespace {

using Rng = std::mt19937_64;

Duration Minutes(Rng& rng, int lo, int hi) {
  return std::chrono::minutes(std::uniform_int_distribution<int>(lo, hi)(rng));
}

bool Chance(Rng& rng, double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; }

const char* Pick(Rng& rng, std::initializer_list<const char*> v) {
  auto it = v.begin();
  std::advance(it, std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng));
  return *it;
}

std::string Owner(Rng& rng) {
  return std::string(Pick(rng, {"ana", "bo", "chen", "dara", "eli", "fatima", "gus", "hana"})) + "@example.com";
}

// A live trainer: busy recently, or idle since a while (forgotten), some held by a keepalive.
void LiveActivity(Rng& rng, Time epoch, Time created, std::vector<Interval>& activity,
                  std::vector<Interval>* keepalive) {
  const int pattern = std::uniform_int_distribution<int>(0, 3)(rng);
  if (pattern == 0) {
    activity.push_back({created, Forever(), 0.85, 30, {}});  // still training
  } else {
    const Time stop = epoch - Minutes(rng, 5, 300);
    if (stop > created) activity.push_back({created, stop, 0.8, 25, {}});
    if (keepalive && pattern == 3) keepalive->push_back({created, Forever(), 0, 0, {}});
  }
}

}  // namespace

void GenerateFleet(World& w, Time epoch, const GenerateOptions& o) {
  Rng rng(o.seed);
  if (w.instance_types.empty()) w.instance_types = DefaultInstanceTypes();
  const int bt_accounts = (o.accounts + 1) / 2;
  const int fw_accounts = o.accounts - bt_accounts;
  const int per_account = o.accounts > 0 ? o.resources / o.accounts : 0;
  int remainder = o.resources - per_account * o.accounts;

  for (int a = 0; a < bt_accounts; ++a) {
    BtOrg org;
    org.name = "gen-org-" + std::to_string(a);
    org.keys.push_back({"bt-gen-" + std::to_string(a), "admin@example.com", true});
    int n = per_account + (remainder-- > 0 ? 1 : 0);
    for (int i = 0; i < n; ++i) {
      const bool live = Chance(rng, o.live_fraction);
      const Time created = epoch - (live ? Minutes(rng, 30, 600) : Minutes(rng, 600, 7 * 24 * 60));
      const int kind = std::uniform_int_distribution<int>(0, 9)(rng);
      if (kind < 5) {
        BtRun r;
        r.id = w.NewId("r", 7);
        r.session_id = w.NewId("s", 6);
        r.name = std::string(Pick(rng, {"grpo", "sft", "dpo", "eval"})) + "-" + r.id.substr(1, 4);
        r.owner = Owner(rng);
        r.created = created;
        r.dedicated = Chance(rng, 0.6);
        r.base_model = r.dedicated ? "Qwen/Qwen3-8B" : "Qwen/Qwen3.6-35B-A3B";
        if (r.dedicated) {
          r.deployment_id = w.NewId("ld", 5);
          r.instance_type = Pick(rng, {"H100x8", "H100x4", "H200x8", "A100x8"});
          r.nodes = Chance(rng, 0.2) ? 2 : 1;
        }
        if (live) {
          LiveActivity(rng, epoch, created, r.activity, &r.keepalive);
        } else {
          r.activity.push_back({created, created + Minutes(rng, 10, 300), 0.8, 20, {}});
          r.deactivated_at = r.activity.back().to + Minutes(rng, 1, 60);
          if (!r.dedicated) r.ends_at = r.deactivated_at;
        }
        if (Chance(rng, 0.5)) {
          r.checkpoints.push_back({w.NewId("ck", 5), "step-100", "sampler", created + Minutes(rng, 5, 25), 160 << 20, {}});
        }
        org.runs.push_back(std::move(r));
      } else if (kind < 6) {
        BtSampler s;
        s.id = w.NewId("smp", 4);
        s.model_id = w.NewId("m", 7);
        s.deployment_id = w.NewId("d", 6);
        s.base_model = "Qwen/Qwen3-8B";
        s.owner = Owner(rng);
        s.created = created;
        s.instance_type = "H100x26x234";
        if (live) {
          if (Chance(rng, 0.5)) s.traffic.push_back({created, Forever(), 0, 12, {}});
        } else {
          s.deactivated_at = created + Minutes(rng, 30, 600);
        }
        org.samplers.push_back(std::move(s));
      } else {
        BtModel m;
        m.id = w.NewId("m", 7);
        m.name = "ckpt-" + m.id.substr(1, 5);
        m.created = created;
        BtDeployment d;
        d.id = w.NewId("d", 6);
        d.model_id = m.id;
        d.name = "deployment-1";
        d.created = created;
        d.instance_type = "H100x26x234";
        Autoscaling as;
        as.min_replica = live && Chance(rng, 0.7) ? 1 : 0;
        d.settings.push_back({created, as});
        if (live) {
          if (Chance(rng, 0.4)) {
            d.traffic.push_back({created, Forever(), 0, 10, {}});
          } else {
            d.traffic.push_back({created, epoch - Minutes(rng, 60, 600), 0, 10, {}});
          }
        } else {
          d.activations.push_back({created + Minutes(rng, 30, 600), false});
        }
        m.deployments.push_back(d.id);
        org.deployments.push_back(std::move(d));
        org.models.push_back(std::move(m));
      }
    }
    org.Reindex();
    w.orgs.push_back(std::move(org));
  }

  for (int a = 0; a < fw_accounts; ++a) {
    FwAccount acct;
    acct.id = "gen-acct-" + std::to_string(a);
    acct.keys.push_back({"fw-gen-" + std::to_string(a), "admin@example.com", true});
    acct.slot_cap = 1'000'000;  // generated fleets are not about the slot cap
    int n = per_account + (remainder-- > 0 ? 1 : 0);
    for (int i = 0; i < n; ++i) {
      const bool live = Chance(rng, o.live_fraction);
      const Time created = epoch - (live ? Minutes(rng, 30, 600) : Minutes(rng, 600, 7 * 24 * 60));
      const int kind = std::uniform_int_distribution<int>(0, 9)(rng);
      if (kind < 4) {
        FwSession s;
        s.id = w.NewId("ts-", 32);
        s.run_id = w.NewId("run-", 32);
        s.base_model = "accounts/fireworks/models/qwen3p8-27b";
        s.owner = Owner(rng);
        s.created = created;
        const Time stop = live && Chance(rng, 0.3) ? Forever() : created + Minutes(rng, 10, 120);
        s.activity.push_back({created, std::min(stop, live ? Forever() : epoch), 0, 0,
                              {{"prefill", 20000}, {"cached_prefill", 5000}, {"sample", 8000}, {"train", 30000}}});
        if (!live) s.failed_at = created + Minutes(rng, 130, 300);
        if (Chance(rng, 0.6)) {
          s.checkpoints.push_back({"final", s.run_id + "-final-" + w.NewId("", 8), true, created + Minutes(rng, 5, 9)});
        }
        acct.sessions.push_back(std::move(s));
      } else if (kind < 6) {
        FwRlorJob j;
        j.id = "training-api-service-" + w.NewId("", 8);
        j.display_name = "grpo-" + j.id.substr(21, 4);
        j.owner = Owner(rng);
        j.base_model = "accounts/fireworks/models/qwen3-8b";
        j.created = created;
        j.accelerator = Pick(rng, {"NVIDIA_H100_80GB", "NVIDIA_H200_141GB"});
        j.accelerator_count = 8;
        if (live) {
          LiveActivity(rng, epoch, created + std::chrono::minutes(3), j.activity, nullptr);
          j.disable_inactivity_cleanup = Chance(rng, 0.3);
        } else {
          j.activity.push_back({created + std::chrono::minutes(3), created + Minutes(rng, 20, 200), 0.8, 0, {}});
          j.cancels.push_back(j.activity.back().to + Minutes(rng, 1, 30));
        }
        acct.jobs.push_back(std::move(j));
      } else {
        FwDeployment d;
        d.id = "dep-" + w.NewId("", 10);
        d.base_model = "accounts/fireworks/models/qwen3-8b";
        d.owner = Owner(rng);
        d.created = created;
        d.accelerator = "NVIDIA_H100_80GB";
        d.min_replicas = live && Chance(rng, 0.6) ? 1 : 0;
        d.max_replicas = std::max(1, d.min_replicas);
        if (live && Chance(rng, 0.4)) d.traffic.push_back({created, Forever(), 0, 60, {}});
        acct.deployments.push_back(std::move(d));
      }
    }
    acct.Reindex();
    w.accounts.push_back(std::move(acct));
  }
}

}  // namespace loopwarden::sim
