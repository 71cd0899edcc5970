#include "daemon/leadership.h"

#include <unistd.h>

#include <algorithm>
#include <boost/asio/signal_set.hpp>
#include <csignal>
#include <cstdlib>

#include "config/config.h"
#include "core/log.h"
#include "core/version.h"
#include "daemon/sd_notify.h"
#include "exporters/metrics.h"
#include "net/http_server.h"

namespace loopwarden::daemon {

namespace asio = boost::asio;

namespace {

std::chrono::steady_clock::duration Steady(Duration d) {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(d);
}

}  // namespace

std::string HolderName() {
  char host[256] = {0};
  if (gethostname(host, sizeof host - 1) != 0) std::snprintf(host, sizeof host, "unknown");
  return std::string(host) + ":" + std::to_string(getpid());
}

Result<std::optional<int64_t>> AwaitLeadership(store::LeaderLease& lease, const std::string& listen) {
  asio::io_context ioc(1);
  exporters::Metrics metrics;
  metrics.SetBuildInfo(kVersion, kRevision, kCompiler);
  metrics.SetLeader(false);
  auto addr = config::ParseListen(listen);
  if (!addr.ok()) return addr.status();
  net::ServerOptions so;
  so.host = addr->first;
  so.port = addr->second;
  so.max_body_bytes = 4096;
  so.header_timeout = std::chrono::seconds(5);
  so.read_timeout = std::chrono::seconds(10);
  so.max_connections = 64;
  // A follower is healthy and ready: it serves its purpose by waiting, and a rollout
  // must not stall on it.
  auto server = net::HttpServer::Start(ioc, so, [&metrics, &lease](const net::HttpRequest& r) {
    const std::string path = r.Path();
    if (path == "/healthz" || path == "/readyz") return net::TextResponse(200, "ok: standing by (a follower)\n");
    if (path == "/metrics") {
      return net::TextResponse(200, metrics.RenderText(), std::string(exporters::Metrics::kContentType));
    }
    // The API (resources, plan, snooze) is the leader's: say which replica that is.
    auto holder = lease.Current();
    const std::string leader = holder.ok() && *holder ? (*holder)->holder : "not known yet";
    return net::TextResponse(503, "a follower: the leader is " + leader +
                                      "; send this request to it (this replica serves /healthz, /readyz and /metrics)\n");
  });
  if (!server.ok()) return server.status().WithContext("the admin server");
  Log().Info("standing by until this replica holds the leader lease",
             {{"holder", lease.holder()}, {"listen", so.host + ":" + std::to_string((*server)->port())},
              {"lease", lease.lease()}});

  std::optional<int64_t> token;
  asio::signal_set signals(ioc, SIGTERM, SIGINT);
  asio::steady_timer timer(ioc);
  SdNotifier sd;
  asio::steady_timer watchdog(ioc);
  std::function<void()> attempt = [&] {
    auto got = lease.TryAcquire();
    Duration wait = lease.lease() / 4;
    if (!got.ok()) {
      Log().Warn("the leader lease could not be read; trying again", {{"err", got.status()}});
    } else if (*got) {
      token = *got;
      signals.cancel();
      watchdog.cancel();
      (*server)->Stop();
      ioc.stop();
      return;
    } else if (auto held = lease.Current(); held.ok() && *held) {
      // Try again the moment the running lease ends (20 ms after, for the clocks'
      // rounding): a leader that died is replaced within one lease of its last renewal.
      const Duration left = std::chrono::microseconds(static_cast<int64_t>((*held)->seconds_left * 1e6));
      wait = std::clamp<Duration>(left + std::chrono::milliseconds(20), std::chrono::milliseconds(20), wait);
    }
    timer.expires_after(Steady(wait));
    timer.async_wait([&](const boost::system::error_code& ec) {
      if (!ec) attempt();
    });
  };
  signals.async_wait([&](const boost::system::error_code& ec, int sig) {
    if (ec) return;
    Log().Info("stopping while standing by", {{"signal", sig == SIGTERM ? "SIGTERM" : "SIGINT"}});
    timer.cancel();
    watchdog.cancel();
    (*server)->Stop();
    ioc.stop();
  });
  // systemd (Type=notify, WatchdogSec): a follower has started, and is alive.
  (void)sd.Ready("standing by: another replica leads");
  std::function<void()> ping = [&] {
    auto every = sd.watchdog_interval();
    if (!every) return;
    watchdog.expires_after(Steady(*every));
    watchdog.async_wait([&](const boost::system::error_code& ec) {
      if (ec) return;
      (void)sd.Watchdog();
      ping();
    });
  };
  ping();
  attempt();
  ioc.run();
  return token;
}

LeaseKeeper::LeaseKeeper(asio::io_context& ioc, store::LeaderLease& lease)
    : lease_(lease), timer_(ioc), renewed_(std::chrono::steady_clock::now()) {}

void LeaseKeeper::Start() {
  renewed_ = std::chrono::steady_clock::now();
  Arm();
}

void LeaseKeeper::Arm() {
  timer_.expires_after(Steady(lease_.lease() / 3));
  timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec || released_) return;
    auto held = lease_.Renew();
    const auto now = std::chrono::steady_clock::now();
    if (held.ok() && *held) {
      renewed_ = now;
    } else if (held.ok()) {
      Lost("the lease expired or another replica took it");
    } else if (now - renewed_ >= Steady(lease_.lease() * 2 / 3)) {
      Lost("the lease could not be renewed for two thirds of it: " + held.status().message());
    } else {
      Log().Warn("renewing the leader lease failed; trying again", {{"err", held.status()}});
    }
    Arm();
  });
}

void LeaseKeeper::Release() {
  released_ = true;
  timer_.cancel();
  if (Status s = lease_.Release(); !s.ok()) Log().Warn("giving up the leader lease failed", {{"err", s}});
}

void LeaseKeeper::Lost(const std::string& why) const {
  Log().Error("leadership lost: exiting so that this replica starts again as a follower",
              {{"why", why}, {"exit_code", kExitLeadershipLost}});
  std::_Exit(kExitLeadershipLost);
}

providers::SendGate LeaseKeeper::Gate(store::Store& store) const {
  const Duration margin = lease_.lease() / 4;
  const std::string tag = lease_.holder() + "/" + std::to_string(lease_.token().value_or(0));
  return [&store, margin, tag]() -> Result<providers::SendPermit> {
    LW_ASSIGN_OR_RETURN(Duration left, store.LeaseLeft());
    if (left <= margin) return FailedPrecondition("the leader lease runs out in " + FormatDuration(left));
    return providers::SendPermit{.send_by = std::chrono::steady_clock::now() + Steady(left - margin), .lease = tag};
  };
}

void ExitOnFenceLost(const Status& why) {
  Log().Error("leadership lost: a write was refused; exiting so that this replica starts again as a follower",
              {{"err", why}, {"exit_code", kExitLeadershipLost}});
  std::_Exit(kExitLeadershipLost);
}

}  // namespace loopwarden::daemon
