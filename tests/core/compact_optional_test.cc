#include <doctest/doctest.h>

#include <algorithm>
#include <optional>
#include <vector>

#include "core/time.h"

namespace lw = loopwarden;
using namespace std::chrono_literals;

namespace {
const lw::Time kT = lw::FromUnixMicros(1'700'000'000'000'000);
}  // namespace

TEST_CASE("OptionalTime holds an instant or nothing in 8 bytes") {
  static_assert(sizeof(lw::OptionalTime) == sizeof(lw::Time));
  static_assert(sizeof(lw::OptionalDuration) == sizeof(lw::Duration));
  lw::OptionalTime empty;
  CHECK_FALSE(empty.has_value());
  CHECK_FALSE(static_cast<bool>(empty));
  CHECK(empty == std::nullopt);
  CHECK(empty.value_or(kT) == kT);
  CHECK_THROWS_AS((void)empty.value(), std::bad_optional_access);

  lw::OptionalTime t = kT;
  CHECK(t.has_value());
  CHECK(*t == kT);
  CHECK(t->time_since_epoch() == kT.time_since_epoch());
  CHECK(t == kT);
  CHECK(t.value_or(lw::Time{}) == kT);
  t.reset();
  CHECK(t == std::nullopt);
  t = kT;
  t = std::nullopt;
  CHECK_FALSE(t.has_value());
}

TEST_CASE("OptionalTime keeps the epoch and the earliest instant as values, not as empty") {
  // The epoch (Time{}) is a real value some code falls back to.
  lw::OptionalTime epoch = lw::Time{};
  CHECK(epoch.has_value());
  CHECK(*epoch == lw::Time{});
  // min() is the empty marker: stored, it moves one tick later and still reads as set.
  lw::OptionalTime earliest = lw::Time::min();
  CHECK(earliest.has_value());
  CHECK(*earliest == lw::Time::min() + lw::Duration(1));
  lw::OptionalDuration shortest = lw::Duration::min();
  CHECK(shortest.has_value());
}

TEST_CASE("OptionalTime converts to and from std::optional<Time> without losing emptiness") {
  const std::optional<lw::Time> none;
  const std::optional<lw::Time> some = kT;
  lw::OptionalTime a = none, b = some;
  CHECK_FALSE(a.has_value());
  CHECK(b == kT);
  const std::optional<lw::Time> back_a = a, back_b = b;
  CHECK_FALSE(back_a.has_value());
  CHECK(back_b == some);
  // Durations of other units convert, as they do into std::optional<Duration>.
  lw::OptionalDuration d = std::chrono::minutes(30);
  CHECK(*d == 30min);
}

TEST_CASE("OptionalTime orders like std::optional: empty before any instant") {
  const lw::OptionalTime empty, early = kT, late = kT + 1h;
  CHECK(empty < early);
  CHECK(early < late);
  CHECK(empty < kT);
  CHECK(early <= kT);
  CHECK(late > kT);
  CHECK_FALSE(empty == kT);
  CHECK(early != late);
  std::vector<lw::OptionalTime> v{late, empty, early};
  std::sort(v.begin(), v.end());
  CHECK(v[0] == std::nullopt);
  CHECK(v[1] == early);
  CHECK(v[2] == late);
  // The same answers std::optional gives.
  const std::optional<lw::Time> so_empty, so_early = kT;
  CHECK((so_empty < so_early) == (empty < early));
  CHECK(std::max(empty, early) == early);
}

TEST_CASE("OptionalTime compares with a std::optional<Time> as one optional with another") {
  const std::optional<lw::Time> so_empty, so_t = kT, so_late = kT + 1h;
  const lw::OptionalTime empty, t = kT;
  // Two empties are equal whichever side each is on (std::optional's value comparison
  // would call them unequal).
  CHECK(so_empty == empty);
  CHECK(empty == so_empty);
  CHECK_FALSE(so_empty != empty);
  CHECK(so_t == t);
  CHECK(t == so_t);
  CHECK(so_empty != t);
  CHECK(t != so_empty);
  CHECK(so_empty < t);
  CHECK(empty < so_t);
  CHECK(t < so_late);
  CHECK(so_late > t);
}
