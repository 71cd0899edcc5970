#include "reconcile/notify_runner.h"

#include <algorithm>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/this_coro.hpp>

#include "core/log.h"
#include "exporters/slack.h"
#include "exporters/webhook.h"
#include "net/retry.h"

namespace loopwarden::reconcile {

namespace {
constexpr int kMaxAttempts = 5;
// Slack allows about one message per second per incoming webhook.
constexpr Duration kSpacing = std::chrono::seconds(1);
}  // namespace

std::string DeliveryKey(const exporters::Event& e, const std::string& notifier) {
  return e.dedupe_key + "@" + notifier;
}

NotifyRunner::NotifyRunner(boost::asio::io_context& ioc, Clock& clock, store::Store& store,
                           exporters::Metrics& metrics)
    : ioc_(ioc), clock_(clock), store_(store), metrics_(metrics), wake_(ioc.get_executor()) {}

NotifyRunner::~NotifyRunner() = default;

Status NotifyRunner::Configure(const std::vector<config::NotifierConfig>& notifiers) {
  std::map<std::string, Target> next;
  for (const config::NotifierConfig& n : notifiers) {
    net::ClientOptions co;
    co.ca_file = n.ca_file;
    co.connect_timeout = n.timeout;
    co.io_timeout = n.timeout;
    co.max_connections = 2;
    co.max_response_bytes = 1 << 20;
    auto client = net::HttpClient::Create(ioc_, co);
    if (!client.ok()) return InvalidArgument("notifier " + n.name + ": " + client.status().message());
    Target t;
    t.config = n;
    t.client = std::move(*client);
    t.next_send = clock_.Now();
    next.emplace(n.name, std::move(t));
  }
  // Queued batches for notifiers that are gone are dropped; the rest keep their place.
  std::erase_if(queue_, [&](const Batch& b) { return !next.count(b.notifier); });
  // A delivery in flight holds its own reference to its client and looks its target up
  // by name again when it completes.
  targets_ = std::move(next);
  return Status::Ok();
}

void NotifyRunner::Enqueue(const std::vector<Outgoing>& events) {
  const Time now = clock_.Now();
  // One batch per (notifier, policy), in the order the cycle produced them.
  std::map<std::pair<std::string, std::string>, size_t> index;
  std::vector<Batch> fresh;
  for (const Outgoing& o : events) {
    for (const std::string& n : o.notifiers) {
      if (!targets_.count(n)) continue;
      const std::string key = DeliveryKey(o.event, n);
      if (queued_keys_.count(key)) continue;
      auto seen = store_.NotificationRecorded(key);
      if (!seen.ok()) {
        Log().Error("notification dedupe lookup failed", {{"notifier", n}, {"err", seen.status()}});
        continue;
      }
      if (*seen) continue;
      queued_keys_.insert(key);
      auto [it, inserted] = index.try_emplace({n, o.event.policy}, fresh.size());
      if (inserted) fresh.push_back(Batch{.notifier = n, .policy = o.event.policy, .events = {}, .attempts = 0,
                                          .not_before = now});
      fresh[it->second].events.push_back(o.event);
    }
  }
  for (Batch& b : fresh) queue_.push_back(std::move(b));
  if (!fresh.empty()) wake_.Notify();
}

void NotifyRunner::Stop() {
  stopping_ = true;
  wake_.Notify();
}

void NotifyRunner::Finish(const Batch& b, const std::string& status) {
  const Time now = clock_.Now();
  for (const exporters::Event& e : b.events) {
    const std::string key = DeliveryKey(e, b.notifier);
    queued_keys_.erase(key);
    if (auto r = store_.RecordNotification(key, b.notifier, now, status); !r.ok()) {
      Log().Error("recording a notification failed", {{"notifier", b.notifier}, {"err", r.status()}});
    }
    if (status == "sent" && e.type == "marked" && !e.resource.empty()) {
      if (Status s = store_.MarkNotified(e.policy, e.resource, now); !s.ok()) {
        Log().Warn("recording a mark's notification failed", {{"err", s}});
      }
    }
  }
}

boost::asio::awaitable<void> NotifyRunner::Run() {
  using namespace boost::asio::experimental::awaitable_operators;
  for (;;) {
    if (queue_.empty()) {
      if (stopping_) co_return;
      wake_.Reset();
      co_await wake_.Wait();
      continue;
    }
    // The batch that may go first: earliest not_before, respecting each notifier's spacing.
    const Time now = clock_.Now();
    auto ready_at = [&](const Batch& b) {
      auto t = targets_.find(b.notifier);
      Time at = b.not_before;
      if (t != targets_.end()) at = std::max(at, t->second.next_send);
      return at;
    };
    auto best = std::min_element(queue_.begin(), queue_.end(),
                                 [&](const Batch& a, const Batch& b) { return ready_at(a) < ready_at(b); });
    const Time at = ready_at(*best);
    if (at > now) {
      if (stopping_ && best->attempts > 0) {
        // Shutting down: retries that are not due yet are given up, not waited for.
        Batch b = std::move(*best);
        queue_.erase(best);
        metrics_.RecordNotification(b.notifier, false);
        Log().Warn("notification not delivered before shutdown",
                   {{"notifier", b.notifier}, {"policy", b.policy}, {"events", static_cast<long>(b.events.size())}});
        for (const exporters::Event& e : b.events) queued_keys_.erase(DeliveryKey(e, b.notifier));
        continue;
      }
      wake_.Reset();
      co_await (clock_.SleepUntil(at) || wake_.Wait());
      continue;
    }
    Batch b = std::move(*best);
    queue_.erase(best);
    co_await Deliver(std::move(b));
  }
}

boost::asio::awaitable<void> NotifyRunner::Deliver(Batch b) {
  auto it = targets_.find(b.notifier);
  if (it == targets_.end()) co_return;
  Target& t = it->second;
  if (t.disabled) {
    metrics_.RecordNotification(b.notifier, false);
    Finish(b, "disabled");
    co_return;
  }
  const Time now = clock_.Now();
  t.next_send = now + kSpacing;
  exporters::OutboundMessage m;
  if (t.config.type == config::NotifierType::kSlack) {
    m = exporters::BuildSlackMessage(b.events, t.config.webhook_url.value);
  } else {
    m = exporters::BuildWebhookMessage(b.events, t.config.url, t.config.secret.value, now);
  }
  net::HttpRequest req;
  req.method = "POST";
  req.url = m.url;
  req.headers = m.headers;
  req.body = std::move(m.body);
  // A Slack post that is resent could show twice; webhooks carry a stable webhook-id.
  req.idempotent = t.config.type == config::NotifierType::kWebhook;
  std::shared_ptr<net::HttpClient> client = t.client;
  Result<net::HttpResponse> resp = co_await client->Send(std::move(req));
  ++deliveries_;
  // The configuration may have been reloaded while we waited.
  it = targets_.find(b.notifier);
  if (it == targets_.end()) co_return;
  Target& target = it->second;
  exporters::DeliveryVerdict v;
  if (!resp.ok()) {
    v.delivery = exporters::Delivery::kRetry;
    v.why = resp.status().message();
  } else if (target.config.type == config::NotifierType::kSlack) {
    v = exporters::ClassifySlackResponse(resp->status, resp->body, resp->Header("Retry-After"));
  } else {
    v = exporters::ClassifyWebhookResponse(resp->status, resp->Header("Retry-After"));
  }
  ++b.attempts;
  const LogField who{"notifier", b.notifier};
  switch (v.delivery) {
    case exporters::Delivery::kOk:
      metrics_.RecordNotification(b.notifier, true);
      Log().Info("notification sent", {who, {"policy", b.policy}, {"events", static_cast<long>(b.events.size())}});
      Finish(b, "sent");
      co_return;
    case exporters::Delivery::kRetry:
      if (b.attempts < kMaxAttempts && !stopping_) {
        net::RetryPolicy rp;
        const Duration wait = net::BackoffDelay(rp, b.attempts, v.retry_after, rng_);
        b.not_before = clock_.Now() + wait;
        if (v.retry_after) target.next_send = std::max(target.next_send, b.not_before);
        Log().Warn("notification will be retried", {who, {"why", v.why}, {"attempt", b.attempts}, {"wait", wait}});
        queue_.push_back(std::move(b));
        co_return;
      }
      break;
    case exporters::Delivery::kDisable:
      target.disabled = true;
      Log().Error("webhook answered 410 Gone; disabled until the configuration is reloaded", {who});
      break;
    case exporters::Delivery::kFail: break;
  }
  metrics_.RecordNotification(b.notifier, false);
  Log().Error("notification failed", {who, {"policy", b.policy}, {"why", v.why}, {"attempts", b.attempts}});
  Finish(b, "failed");
}

}  // namespace loopwarden::reconcile
