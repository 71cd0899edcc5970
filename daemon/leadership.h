#pragma once
// Replicas sharing a PostgreSQL state elect one leader through the lease in it
// (store/leader_lease.h). A follower waits, answering /healthz, /readyz and /metrics
// (loopwarden_leader 0), and loads the state only once it leads: what it would have
// loaded earlier is stale by then. The leader renews its lease every third of it.
//
// A leader that loses its lease exits at once with kExitLeadershipLost, as Kubernetes'
// own controllers do: its supervisor (systemd, the kubelet) starts it again as a
// follower. Whatever it had in flight is what a kill -9 leaves, and the exactly-once
// records settle it: the new leader re-reads every open intent before acting.

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <memory>
#include <optional>
#include <string>

#include "core/status.h"
#include "providers/provider.h"
#include "store/leader_lease.h"
#include "store/store.h"

namespace loopwarden::daemon {

inline constexpr int kExitLeadershipLost = 75;  // EX_TEMPFAIL: start again, as a follower

// "host:pid": who holds the lease, in logs and in the lease row.
std::string HolderName();

// Blocks as a follower until this process holds the lease (its token) or a SIGTERM
// or SIGINT arrives (nothing), serving the admin probes on `listen` meanwhile.
Result<std::optional<int64_t>> AwaitLeadership(store::LeaderLease& lease, const std::string& listen);

// Renews the lease on the daemon's io_context; exits the process when it is lost.
class LeaseKeeper {
 public:
  LeaseKeeper(boost::asio::io_context& ioc, store::LeaderLease& lease);
  void Start();
  // On a clean shutdown: the lease expires now, so a follower takes over at once.
  void Release();
  // The permit for each provider call that changes something: the call must be
  // written while a quarter of the lease is still left.
  providers::SendGate Gate(store::Store& store) const;

 private:
  void Arm();
  [[noreturn]] void Lost(const std::string& why) const;
  store::LeaderLease& lease_;
  boost::asio::steady_timer timer_;
  std::chrono::steady_clock::time_point renewed_;
  bool released_ = false;
};

// What to do when the store refuses a write for a lost lease: exit at once.
void ExitOnFenceLost(const Status& why);

}  // namespace loopwarden::daemon
