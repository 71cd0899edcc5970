#pragma once
// The Baseten adapter: Loops runs, samplers and Loops deployments, and inference
// deployments (including those made from checkpoints), with activity from deployment
// metrics and checkpoints and prices from the instance-type price list.
//
// Billing attribution: a dedicated run bills its Loops deployment's GPUs
// (instance_type.gpu_count x node_count); the Loops deployment bills them itself only
// when no active run owns it (a leftover, flagged orphaned). Paired samplers bill as
// their own resources, flagged paired, and are stopped through their run.

#include <map>
#include <memory>
#include <string_view>
#include <utility>

#include "core/flat_hash.h"
#include "providers/baseten/parse.h"
#include "providers/provider.h"
#include "providers/transport.h"

namespace loopwarden::providers::baseten {

class BasetenProvider : public Provider {
 public:
  BasetenProvider(Clock& clock, ProviderOptions options, std::unique_ptr<Transport> transport);

  const std::string& name() const override { return options_.name; }
  ProviderType type() const override { return ProviderType::kBaseten; }
  std::string account() const override { return options_.name; }
  int64_t slot_cap() const override { return options_.slot_cap; }
  using Provider::List;
  boost::asio::awaitable<Inventory> List(ResourceSink sink) override;
  boost::asio::awaitable<Result<RefreshResult>> Refresh(const Resource& r) override;
  boost::asio::awaitable<Result<UsageReport>> Usage(Time start, Time end) override;
  boost::asio::awaitable<ActionOutcome> Act(const Resource& r, ActionType action) override;
  boost::asio::awaitable<ActionOutcome> PromoteCheckpoint(const Resource& session, const std::string& checkpoint,
                                                          const std::string& output_model_id) override;
  const TransportStats& stats() const override { return transport_->stats(); }
  std::vector<DetailRecord> TakeDetailChanges() override { return std::exchange(changes_, {}); }
  void RestoreDetails(const std::vector<DetailRecord>& records) override;

 private:
  struct Metrics {
    Time fetched;
    bool ok = false;
    ActivitySummary summary;
    Duration window{0};  // how far back this read reached
    uint64_t listed_in = 0;  // the last poll (poll_) that listed its resource
  };
  struct Checkpoints {
    Time fetched;
    bool ok = false;
    std::vector<Checkpoint> items;
    uint64_t listed_in = 0;
  };
  struct ModelDeployments {
    Time fetched;
    bool ok = false;
    std::vector<Deployment> items;
    uint64_t listed_in = 0;
  };

  boost::asio::awaitable<void> RefreshPrices(bool force);
  // A metrics summary as a detail record body, and back (providers/baseten/detail_cache.cc).
  static std::string EncodeMetrics(const Metrics& m);
  static std::optional<Metrics> DecodeMetrics(const std::string& body, Time fetched);
  // Where the next read of `key`'s metrics starts: just before the last good read ended,
  // or, on first sight, as far back as the policies need (FirstSightWindow).
  Time WindowStart(const std::string& key, Duration first_sight, Time now) const;
  // R8 for a Loops deployment (a dedicated run's trainer, or a leftover).
  boost::asio::awaitable<Metrics> FetchTrainerMetrics(const std::string& deployment_id);
  // R18 for an inference deployment or a sampler; cached under `key`.
  boost::asio::awaitable<Metrics> FetchTrafficMetrics(const std::string& key, Kind kind, const std::string& model_id,
                                                      const std::string& deployment_id);
  boost::asio::awaitable<Checkpoints> FetchCheckpoints(const std::string& run_id);

  // `deployments_known`: the Loops deployment listing (or read) succeeded, so a run
  // whose deployment is not in it is serverless rather than unknown.
  ListedResource MakeRun(const Run& r, const LoopsDeployment* dep, bool deployments_known, const Metrics* metrics,
                   const Checkpoints* cks, Time now) const;
  ListedResource MakeSampler(const Sampler& s, std::string_view paired_run, const Metrics* metrics, Time now) const;
  ListedResource MakeLoopsDeployment(const LoopsDeployment& d, bool owned_by_active_run, const Metrics* metrics,
                               Time now) const;
  ListedResource MakeDeployment(const Deployment& d, const Model* model, const Metrics* metrics, Time now) const;
  ListedResource Base(Kind kind, std::string_view id) const;
  void ApplyGpuBilling(Resource& r, const std::optional<InstanceType>& it, int nodes, bool bills) const;
  void ApplyMetrics(ListedResource& r, const Metrics* m, bool traffic, Time now) const;
  std::optional<Money> GpuHourPrice(const std::string& instance_type_id, int gpu_count) const;

  Clock& clock_;
  ProviderOptions options_;
  // The name every resource carries as its provider and account, pooled once.
  Interned name_text_;
  std::unique_ptr<Transport> transport_;
  std::map<std::string, std::pair<InstanceType, double>> prices_;
  std::optional<Time> prices_fetched_;
  // Hashed, not ordered: each is looked up for every listed resource every poll, and the
  // string compares of trees of 100k keys were about 4 % of a steady cycle at that size.
  TextMap<Metrics> metrics_cache_;
  TextMap<Checkpoints> checkpoint_cache_;
  TextMap<ModelDeployments> model_cache_;
  // Counts polls: the caches' entries carry the last poll that listed their resource
  // (providers/stamped_cache.h).
  uint64_t poll_ = 0;
  // Detail reads since TakeDetailChanges: "m:" metrics summaries, "c:" checkpoint and
  // "d:" model deployment listings (raw bodies, parsed again on restore).
  std::vector<DetailRecord> changes_;
};

}  // namespace loopwarden::providers::baseten
