#pragma once
// Delivers loopwarden's events to Slack and signed webhooks without ever holding up the
// reconcile loop.
//
// A cycle hands its events over with Enqueue() and moves on; a worker coroutine sends
// them: one message per notifier and policy per cycle, at most one message a second per
// notifier (Slack's rate for incoming webhooks), retrying 429 (after Retry-After) and
// 5xx a few times with backoff. A webhook that answers 410 Gone is disabled until the
// configuration is reloaded. Each event has a dedupe key; once delivered (or given up
// on) it is recorded in the store, so a restart never sends it twice.
//
// Used from the io_context thread only.

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "config/config.h"
#include "core/clock.h"
#include "exporters/metrics.h"
#include "exporters/notice.h"
#include "net/async_event.h"
#include "net/http_client.h"
#include "store/store.h"

namespace loopwarden::reconcile {

struct Outgoing {
  exporters::Event event;
  std::vector<std::string> notifiers;
};

class NotifyRunner {
 public:
  NotifyRunner(boost::asio::io_context& ioc, Clock& clock, store::Store& store, exporters::Metrics& metrics);
  ~NotifyRunner();

  // Replaces the notifiers (at start and on reload). Queued messages to a notifier that
  // no longer exists are dropped. A bad CA file is an error naming the notifier.
  Status Configure(const std::vector<config::NotifierConfig>& notifiers);

  // Queues one cycle's events; events already delivered or queued are skipped.
  void Enqueue(const std::vector<Outgoing>& events);

  // The worker: runs until Stop() and the queue is empty, or until cancelled.
  boost::asio::awaitable<void> Run();
  // Finish what is queued (no new retries are scheduled past now), then end Run().
  void Stop();

  size_t queued() const { return queue_.size(); }
  // Called after each delivery attempt (tests wait on it).
  uint64_t deliveries() const { return deliveries_; }

 private:
  struct Target {
    config::NotifierConfig config;
    std::shared_ptr<net::HttpClient> client;  // shared: an in-flight send outlives a reload
    bool disabled = false;
    Time next_send;
  };
  struct Batch {
    std::string notifier;
    std::string policy;
    std::vector<exporters::Event> events;
    int attempts = 0;
    Time not_before;
  };
  boost::asio::awaitable<void> Deliver(Batch batch);
  void Finish(const Batch& b, const std::string& status);

  boost::asio::io_context& ioc_;
  Clock& clock_;
  store::Store& store_;
  exporters::Metrics& metrics_;
  std::map<std::string, Target> targets_;
  std::deque<Batch> queue_;
  std::set<std::string> queued_keys_;
  net::AsyncEvent wake_;
  bool stopping_ = false;
  uint64_t deliveries_ = 0;
  std::mt19937_64 rng_{std::random_device{}()};
};

// The key recorded for one event at one notifier.
std::string DeliveryKey(const exporters::Event& e, const std::string& notifier);

}  // namespace loopwarden::reconcile
