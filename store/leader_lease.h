#pragma once
// The leader lease: one row in PostgreSQL saying which loopwarden may write and act,
// until when (by the database's clock, so replicas' clocks never disagree about it),
// and under which token. Every takeover increments the token; the store's writes and
// the executor's provider calls carry it (store/postgres.h: fencing), so a leader that
// was paused or cut off and comes back is refused before it reaches a provider.
//
// A follower takes the lease only once it has expired; a leader renews it well within
// its duration and gives it up on a clean shutdown, so a rolling restart fails over at
// once and a crash within one lease.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/time.h"
#include "store/postgres.h"

namespace loopwarden::store {

class LeaderLease {
 public:
  // Connects on its own connection (renewals never wait behind the store's work) and
  // creates the lease table when absent.
  static Result<std::unique_ptr<LeaderLease>> Open(const std::string& dsn, std::string holder, Duration lease);

  // The new token when this process now holds the lease; nothing while another's
  // lease runs.
  Result<std::optional<int64_t>> TryAcquire();
  // false: the lease is no longer ours (it expired, or another process took it).
  Result<bool> Renew();
  // Expires our lease now, so a follower takes over without waiting.
  Status Release();

  struct Holder {
    std::string holder;
    int64_t token = 0;
    double seconds_left = 0;  // negative once expired
  };
  Result<std::optional<Holder>> Current();
  // Every takeover so far (lw_lease_log), oldest first: token, holder, and when, in
  // Unix seconds by the database's clock.
  struct Term {
    int64_t token = 0;
    std::string holder;
    double acquired_unix = 0;
  };
  Result<std::vector<Term>> History();

  const std::string& holder() const { return holder_; }
  std::optional<int64_t> token() const { return token_; }
  Duration lease() const { return lease_; }

 private:
  LeaderLease(std::unique_ptr<pg::Conn> conn, std::string holder, Duration lease)
      : conn_(std::move(conn)), holder_(std::move(holder)), lease_(lease) {}
  std::unique_ptr<pg::Conn> conn_;
  std::string holder_;
  Duration lease_;
  std::optional<int64_t> token_;
};

}  // namespace loopwarden::store
