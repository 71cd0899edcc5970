#include "exporters/slack.h"

#include <algorithm>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>
#include <cstdlib>
#include <map>

namespace loopwarden::exporters {
namespace {

namespace bj = boost::json;

std::string Clip(std::string s, size_t n) {
  if (s.size() <= n) return s;
  s.resize(n - 3);
  return s + "...";
}

std::string Headline(const std::vector<Event>& batch) {
  const Event& e = batch.front();
  const std::string n = std::to_string(batch.size());
  const std::string what = batch.size() == 1 ? "1 resource" : n + " resources";
  if (e.type == "marked") {
    return "loopwarden: " + e.policy + " marked " + what + (e.action == "notify" ? "" : " to " + e.action);
  }
  if (e.type == "acted") return "loopwarden: " + e.policy + " did " + e.action + " on " + what;
  if (e.type == "would_act") return "loopwarden (dry run): " + e.policy + " would " + e.action + " " + what;
  if (e.type == "failed" || e.type == "refused") return "loopwarden: " + e.policy + " could not " + e.action + " " + what;
  if (e.type == "budget_warning") return "loopwarden: budget " + e.policy + " nearing its limit";
  if (e.type == "budget_exceeded") return "loopwarden: budget " + e.policy + " exceeded";
  if (e.type == "blast_radius") return "loopwarden: blast-radius cap hit; nothing was changed this cycle";
  return "loopwarden: " + e.policy;
}

std::string Line(const Event& e) {
  std::string s;
  if (!e.resource.empty()) {
    s = "*" + SlackEscape(e.resource_name.empty() ? e.resource : e.resource_name) + "* `" + SlackEscape(e.resource) + "`";
    if (!e.owner.empty()) s += " (" + SlackEscape(e.owner) + ")";
    s += "\n";
  }
  s += SlackEscape(e.reason);
  if (e.act_at && e.type == "marked" && e.action != "notify") {
    s += "\nWill " + e.action + " at " + FormatTime(std::chrono::floor<std::chrono::seconds>(*e.act_at));
  }
  if (!e.resource.empty() && (e.type == "marked")) {
    s += "\nTo keep it: `loopwarden snooze " + SlackEscape(e.resource) + " --for 2h --reason \"...\"`";
  }
  return Clip(s, 2900);
}

}  // namespace

std::string SlackEscape(std::string_view in) {
  std::string out;
  for (char c : in) {
    if (c == '&') out += "&amp;";
    else if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else out += c;
  }
  return out;
}

OutboundMessage BuildSlackMessage(const std::vector<Event>& batch, std::string_view url) {
  OutboundMessage m;
  m.url = std::string(url);
  m.headers.emplace_back("Content-Type", "application/json");
  const std::string headline = batch.empty() ? "loopwarden" : Headline(batch);
  bj::array blocks;
  blocks.push_back(bj::object{{"type", "header"}, {"text", bj::object{{"type", "plain_text"}, {"text", Clip(headline, 150)}}}});
  const size_t shown = std::min<size_t>(batch.size(), 45);
  for (size_t i = 0; i < shown; ++i) {
    blocks.push_back(bj::object{{"type", "section"}, {"text", bj::object{{"type", "mrkdwn"}, {"text", Line(batch[i])}}}});
  }
  if (batch.size() > shown) {
    blocks.push_back(bj::object{
        {"type", "context"},
        {"elements", bj::array{bj::object{{"type", "mrkdwn"},
                                          {"text", "…and " + std::to_string(batch.size() - shown) + " more; see `loopwarden status`"}}}}});
  }
  if (!batch.empty() && batch.front().dry_run && batch.front().type != "would_act") {
    blocks.push_back(bj::object{
        {"type", "context"},
        {"elements", bj::array{bj::object{{"type", "mrkdwn"}, {"text", "dry run: loopwarden changes nothing"}}}}});
  }
  std::string text = headline;
  if (!batch.empty()) text += ": " + SlackEscape(batch.front().reason);
  m.body = bj::serialize(bj::object{{"text", Clip(text, 3000)}, {"blocks", blocks}});
  return m;
}

DeliveryVerdict ClassifySlackResponse(int status, std::string_view body, std::string_view retry_after) {
  DeliveryVerdict v;
  if (status == 200) {
    if (body == "ok") {
      v.delivery = Delivery::kOk;
    } else {
      v.delivery = Delivery::kFail;
      v.why = "200 with an unexpected body";
    }
    return v;
  }
  if (status == 429) {
    v.delivery = Delivery::kRetry;
    long s = retry_after.empty() ? 1 : std::strtol(std::string(retry_after).c_str(), nullptr, 10);
    v.retry_after = std::chrono::seconds(std::clamp<long>(s, 1, 60));
    v.why = "rate limited";
    return v;
  }
  if (status >= 500) {
    v.delivery = Delivery::kRetry;
    v.why = "HTTP " + std::to_string(status);
    return v;
  }
  v.delivery = Delivery::kFail;
  v.why = "HTTP " + std::to_string(status) + (body.empty() ? "" : ": " + std::string(body.substr(0, 80)));
  return v;
}

}  // namespace loopwarden::exporters
