#include "core/secrets.h"

#include <algorithm>
#include <mutex>
#include <vector>

namespace loopwarden {
namespace {

struct Registry {
  std::mutex mu;
  std::vector<std::string> values;  // longest first, so a secret containing another redacts whole
};

Registry& Get() {
  static Registry* r = new Registry();  // never destroyed: logging may run during exit
  return *r;
}

void AddLocked(Registry& r, std::string_view v) {
  if (v.size() < 4) return;
  if (std::find(r.values.begin(), r.values.end(), v) != r.values.end()) return;
  r.values.emplace_back(v);
  std::sort(r.values.begin(), r.values.end(), [](const std::string& a, const std::string& b) {
    return a.size() > b.size();
  });
}

}  // namespace

void RegisterSecret(std::string_view value) {
  Registry& r = Get();
  std::lock_guard lock(r.mu);
  AddLocked(r, value);
  // A URL's credential lives in its path (Slack: /services/T…/B…/token) or query.
  size_t scheme = value.find("://");
  if (scheme != std::string_view::npos) {
    size_t path = value.find('/', scheme + 3);
    if (path != std::string_view::npos && value.size() - path >= 8) AddLocked(r, value.substr(path));
  }
}

std::string Redact(std::string_view text) {
  Registry& r = Get();
  std::lock_guard lock(r.mu);
  std::string out(text);
  for (const std::string& s : r.values) {
    size_t pos = 0;
    while ((pos = out.find(s, pos)) != std::string::npos) {
      out.replace(pos, s.size(), kRedacted);
      pos += kRedacted.size();
    }
  }
  return out;
}

bool ContainsSecret(std::string_view text) {
  Registry& r = Get();
  std::lock_guard lock(r.mu);
  for (const std::string& s : r.values) {
    if (text.find(s) != std::string_view::npos) return true;
  }
  return false;
}

void ClearSecretsForTesting() {
  Registry& r = Get();
  std::lock_guard lock(r.mu);
  r.values.clear();
}

}  // namespace loopwarden
