#pragma once
// The Fireworks adapter: serverless training sessions (with their checkpoints, and
// whether each promotable one was promoted), RLOR trainer jobs and dedicated
// deployments, token usage from billingUsage, and promotion under the output-model and
// checkpoint-name rules.

#include <array>
#include <map>
#include <memory>
#include <unordered_set>
#include <utility>

#include "core/flat_hash.h"
#include "providers/fireworks/parse.h"
#include "providers/provider.h"
#include "providers/transport.h"

namespace loopwarden::providers::fireworks {

class FireworksProvider : public Provider {
 public:
  FireworksProvider(Clock& clock, ProviderOptions options, std::unique_ptr<Transport> transport);

  const std::string& name() const override { return options_.name; }
  ProviderType type() const override { return ProviderType::kFireworks; }
  std::string account() const override { return options_.account; }
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
  // "u:<session>": the spend window read so far, so the next process reads only what
  // is new (providers/fireworks/detail_cache.cc).
  void RestoreDetails(const std::vector<DetailRecord>& records) override;

 private:
  struct SessionCheckpoints {
    Time fetched;
    bool ok = false;
    bool reachable = true;  // false: NOT_FOUND, the session or its trainer is gone
    std::optional<Time> for_update;  // the session updateTime they were read at
    std::vector<Checkpoint> items;
    uint64_t listed_in = 0;  // the last poll (poll_) that listed its resource
  };
  struct JobCheckpoints {
    Time fetched;
    std::vector<Checkpoint> items;
    uint64_t listed_in = 0;
  };
  struct DeploymentMetrics {
    Time fetched;
    bool ok = false;
    double rps = 0;
    uint64_t listed_in = 0;
  };
  // R12b: one scrape of the account's metrics serves every deployment.
  struct AccountScrape {
    Time fetched;
    bool ok = false;
    std::map<std::string, double, std::less<>> rps;  // deployment id -> requests per second
  };
  // R17 for one session: token spend is the session's primary activity signal.
  struct SessionUsage {
    bool ok = false;
    Time evaluated;                     // the numbers cover up to here
    Time window_start;                  // the first read reached back to here
    std::optional<Time> last_spend;     // the newest evidence of token spend
    uint64_t listed_in = 0;
  };

  boost::asio::awaitable<Status> DiscoverAccount();
  // Every page of a listing; `ok` false when a page failed (the listing is then partial).
  template <class T, class Parse>
  boost::asio::awaitable<bool> ListAll(const std::string& path, Parse parse, std::vector<T>& out, Inventory& inv);
  boost::asio::awaitable<SessionCheckpoints> FetchSessionCheckpoints(const std::string& session_id,
                                                                     std::optional<Time> update);
  boost::asio::awaitable<std::vector<Checkpoint>> FetchJobCheckpoints(const std::string& job_id, bool& ok);
  boost::asio::awaitable<DeploymentMetrics> FetchDeploymentMetrics(const std::string& id);
  // At most one scrape per kMinScrapeSpacing (R12b allows 6 a minute per account).
  boost::asio::awaitable<void> ScrapeAccountMetrics();
  boost::asio::awaitable<SessionUsage> FetchSessionUsage(const Session& s);
  static std::string EncodeUsage(const SessionUsage& u);
  boost::asio::awaitable<void> RefreshUsage(bool force);

  // Each takes the listed object's text: it moves into the resource.
  ListedResource MakeSession(Session&& s, std::optional<Time> run_update, const SessionCheckpoints* cks,
                             const SessionUsage* usage, Time now) const;
  ListedResource MakeJob(Job&& j, const std::vector<Checkpoint>* cks, Time now) const;
  ListedResource MakeDeployment(Deployment&& d, const DeploymentMetrics* m, bool trainer_gone, Time now) const;
  ListedResource Base(Kind kind, ShortString&& id) const;
  std::string Path(const std::string& rest) const { return "/v1/accounts/" + options_.account + "/" + rest; }

  Clock& clock_;
  ProviderOptions options_;
  // What every resource carries as its provider and account, pooled once (the account
  // when it is known: configured, or discovered).
  Interned name_text_;
  Interned account_text_;
  std::unique_ptr<Transport> transport_;
  // Hashed, not ordered: each of these is looked up for every listed resource every poll.
  std::unordered_set<std::string> models_;  // model ids in the account (promotion verification)
  // The last bill's tokens per session, one count per meter in kSessionMeters' order (0:
  // none). Kept between bills for every session in the account: as a FlatMap of meter
  // names each was about 200 bytes more.
  static constexpr std::array<std::string_view, 4> kSessionMeters = {"cached_prefill", "prefill", "sample", "train"};
  TextMap<std::array<int64_t, kSessionMeters.size()>> tokens_;
  std::optional<Time> usage_fetched_;
  TextMap<SessionCheckpoints> session_checkpoints_;
  TextMap<JobCheckpoints> job_checkpoints_;
  TextMap<DeploymentMetrics> deployment_metrics_;
  AccountScrape scrape_;
  TextMap<SessionUsage> session_usage_;
  // Counts polls: the caches' entries carry the last poll that listed their resource,
  // and those of resources gone are forgotten (providers/stamped_cache.h).
  uint64_t poll_ = 0;
  std::vector<DetailRecord> changes_;
};

}  // namespace loopwarden::providers::fireworks
