#pragma once
// What loopwarden tells people, and the outbound messages that carry it. Exporters build
// messages and read responses; the daemon sends them (exporters depend on core only).

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/time.h"

namespace loopwarden::exporters {

struct Event {
  // marked, acted, would_act, failed, refused, budget_warning, budget_exceeded,
  // blast_radius
  std::string type;
  std::string dedupe_key;  // stable across restarts: the store deduplicates on it
  std::string policy;
  std::string resource;    // key; empty for budget and blast-radius events
  std::string resource_name;
  std::string owner;
  std::string kind;
  std::string provider;
  std::string action;
  std::string reason;
  std::optional<Time> act_at;
  bool dry_run = false;
  Time at;
};

struct OutboundMessage {
  std::string url;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
};

enum class Delivery { kOk, kRetry, kFail, kDisable };

struct DeliveryVerdict {
  Delivery delivery = Delivery::kFail;
  std::optional<Duration> retry_after;
  std::string why;
};

}  // namespace loopwarden::exporters
