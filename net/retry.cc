#include "net/retry.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <string>

namespace loopwarden::net {

Duration BackoffDelay(const RetryPolicy& policy, int attempt, std::optional<Duration> server_after,
                      std::mt19937_64& rng) {
  const int shift = std::clamp(attempt - 1, 0, 30);
  const int64_t ceiling = std::min<int64_t>(policy.cap.count(), policy.base.count() << shift);
  std::uniform_int_distribution<int64_t> jitter(0, std::max<int64_t>(ceiling, 0));
  Duration d(jitter(rng));
  if (server_after) {
    const Duration wait = std::min(*server_after, policy.max_server_wait);
    std::uniform_int_distribution<int64_t> extra(0, std::max<int64_t>(wait.count() / 10, 1000));
    d = std::max(d, wait + Duration(extra(rng)));
  }
  return d;
}

std::optional<Duration> ParseRetryAfter(std::string_view value, Time now) {
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
  if (value.empty()) return std::nullopt;
  if (value.find_first_not_of("0123456789") == std::string_view::npos) {
    if (value.size() > 9) return std::nullopt;
    return std::chrono::seconds(std::stoll(std::string(value)));
  }
  // IMF-fixdate: "Sun, 06 Nov 1994 08:49:37 GMT".
  static constexpr std::array<std::string_view, 12> kMonths{"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  if (value.size() != 29 || value.substr(25) != " GMT") return std::nullopt;
  auto num = [&](size_t pos, size_t n) -> int {
    int v = 0;
    for (size_t i = pos; i < pos + n; ++i) {
      if (value[i] < '0' || value[i] > '9') return -1;
      v = v * 10 + (value[i] - '0');
    }
    return v;
  };
  const int day = num(5, 2), year = num(12, 4), hh = num(17, 2), mm = num(20, 2), ss = num(23, 2);
  int month = -1;
  for (size_t i = 0; i < kMonths.size(); ++i) {
    if (value.substr(8, 3) == kMonths[i]) month = static_cast<int>(i) + 1;
  }
  if (day < 1 || year < 0 || hh < 0 || mm < 0 || ss < 0 || month < 0) return std::nullopt;
  std::chrono::year_month_day ymd{std::chrono::year(year), std::chrono::month(static_cast<unsigned>(month)),
                                  std::chrono::day(static_cast<unsigned>(day))};
  if (!ymd.ok()) return std::nullopt;
  const Time at = std::chrono::sys_days(ymd) + std::chrono::hours(hh) + std::chrono::minutes(mm) +
                  std::chrono::seconds(ss);
  return at > now ? at - now : Duration::zero();
}

}  // namespace loopwarden::net
