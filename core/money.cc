#include "core/money.h"

#include <cmath>
#include <cstdio>

namespace loopwarden {
namespace {
__extension__ typedef __int128 Int128;  // GCC and Clang both have it; -Wpedantic needs the marker.
}  // namespace

Money Money::FromDouble(double usd) { return Money(static_cast<int64_t>(std::llround(usd * 1e6))); }

Result<Money> ParseMoney(std::string_view text) {
  auto bad = [&](std::string_view why) {
    return InvalidArgument("invalid amount '" + std::string(text) + "': " + std::string(why) +
                           " (examples: 6.50, 0.248, 500)");
  };
  std::string_view t = text;
  bool negative = false;
  if (!t.empty() && t.front() == '-') {
    negative = true;
    t.remove_prefix(1);
  }
  if (!t.empty() && t.front() == '$') t.remove_prefix(1);
  if (t.empty()) return bad("empty");
  int64_t whole = 0;
  size_t i = 0;
  size_t digits = 0;
  while (i < t.size() && t[i] >= '0' && t[i] <= '9') {
    if (whole > 1'000'000'000'000) return bad("too large");
    whole = whole * 10 + (t[i] - '0');
    ++i;
    ++digits;
  }
  int64_t frac = 0;
  if (i < t.size() && t[i] == '.') {
    ++i;
    int places = 0;
    while (i < t.size() && t[i] >= '0' && t[i] <= '9') {
      if (places == 6) return bad("more than 6 decimal places");
      frac = frac * 10 + (t[i] - '0');
      ++places;
      ++i;
      ++digits;
    }
    for (; places < 6; ++places) frac *= 10;
  }
  if (digits == 0) return bad("expected digits");
  if (i != t.size()) return bad("unexpected characters");
  int64_t micros = whole * 1'000'000 + frac;
  return Money::FromMicros(negative ? -micros : micros);
}

std::string FormatMoney(Money m) {
  int64_t v = m.micros();
  std::string sign;
  if (v < 0) {
    sign = "-";
    v = -v;
  }
  char buf[48];
  std::snprintf(buf, sizeof buf, "%lld.%06lld", static_cast<long long>(v / 1'000'000),
                static_cast<long long>(v % 1'000'000));
  std::string s = buf;
  // Keep at least two decimals.
  while (s.size() > 0 && s.back() == '0' && s[s.size() - 3] != '.') s.pop_back();
  return sign + s;
}

std::string FormatUsd(Money m) {
  int64_t v = m.micros();
  std::string sign;
  if (v < 0) {
    sign = "-";
    v = -v;
  }
  int64_t cents = (v + 5'000) / 10'000;
  char buf[48];
  std::snprintf(buf, sizeof buf, "$%lld.%02lld", static_cast<long long>(cents / 100),
                static_cast<long long>(cents % 100));
  return sign + buf;
}

Money ScalePrice(Money price, int64_t quantity, int64_t per) {
  Int128 num = static_cast<Int128>(price.micros()) * quantity;
  Int128 half = per / 2;
  Int128 q = num >= 0 ? (num + half) / per : -((-num + half) / per);
  return Money::FromMicros(static_cast<int64_t>(q));
}

}  // namespace loopwarden
