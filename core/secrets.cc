#include "core/secrets.h"

#include <algorithm>
#include <mutex>
#include <vector>

namespace loopwarden {
namespace {

struct Registry {
  std::mutex mu;
  std::vector<std::string> values;  // longest first, so a secret containing another redacts whole
  // The distinct first four bytes of the values (each is at least 4 long): every place
  // a secret starts is a place one of these occurs. Keys issued alike often start
  // alike, so there are fewer scans than keys (20 accounts' keys in the benchmark
  // have 2 prefixes).
  std::vector<std::string> prefixes;
};

// Whether `text` holds any registered secret. Every resource a poll records passes
// five fields through here, and almost none holds one: a text shorter than the
// shortest secret (values.back()) is not scanned at all, and a longer one once per
// prefix.
bool HoldsAnyLocked(const Registry& r, std::string_view text) {
  if (r.values.empty() || text.size() < r.values.back().size()) return false;
  for (const std::string& p : r.prefixes) {
    for (size_t pos = text.find(p); pos != std::string_view::npos; pos = text.find(p, pos + 1)) {
      const std::string_view rest = text.substr(pos);
      for (const std::string& v : r.values) {
        if (rest.starts_with(v)) return true;
      }
    }
  }
  return false;
}

Registry& Get() {
  static Registry* r = new Registry();  // never destroyed: logging may run during exit
  return *r;
}

void AddLocked(Registry& r, std::string_view v) {
  if (v.size() < 4) return;
  if (std::find(r.values.begin(), r.values.end(), v) != r.values.end()) return;
  r.values.emplace_back(v);
  const std::string_view prefix = v.substr(0, 4);
  if (std::find(r.prefixes.begin(), r.prefixes.end(), prefix) == r.prefixes.end()) r.prefixes.emplace_back(prefix);
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
  if (!HoldsAnyLocked(r, text)) return out;
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
  return HoldsAnyLocked(r, text);
}

void ClearSecretsForTesting() {
  Registry& r = Get();
  std::lock_guard lock(r.mu);
  r.values.clear();
  r.prefixes.clear();
}

}  // namespace loopwarden
