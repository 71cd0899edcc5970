#include <doctest/doctest.h>

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/resource.h"

namespace lw = loopwarden;

TEST_CASE("a resource's key, built fresh or over a reused buffer, is provider/kind/id") {
  lw::Resource r;
  r.provider = "fireworks-prod";
  r.kind = lw::Kind::kFireworksTrainingSession;
  r.id = "ts-1";
  CHECK(r.Key() == "fireworks-prod/fireworks.training_session/ts-1");
  std::string buf = "a longer key left over from the previous resource in the loop";
  lw::ResourceKeyInto(buf, r.provider, r.kind, r.id);
  CHECK(buf == r.Key());  // replaced, not appended to
  lw::ResourceKeyInto(buf, "bt", lw::Kind::kBasetenRun, "k4q95w5");
  CHECK(buf == lw::ResourceKey("bt", lw::Kind::kBasetenRun, "k4q95w5"));
  CHECK(buf == "bt/baseten.run/k4q95w5");
}

TEST_CASE("flags: every one has a name that parses back, a set holds each independently, in Flag order") {
  lw::FlagSet all;
  std::set<std::string_view> names;
  for (lw::Flag f : lw::AllFlags()) {
    CAPTURE(lw::FlagName(f));
    CHECK(lw::ParseFlag(lw::FlagName(f)) == f);
    CHECK(names.insert(lw::FlagName(f)).second);
    lw::FlagSet one{f};
    CHECK(one.contains(f));
    CHECK(one.items() == std::vector<lw::Flag>{f});
    all.insert(f);
  }
  CHECK(all.items() == std::vector<lw::Flag>(lw::AllFlags().begin(), lw::AllFlags().end()));
  CHECK_FALSE(lw::ParseFlag("no_such_flag").has_value());
  lw::Resource r;
  CHECK(r.flags.empty());
  r.flags = {lw::Flag::kSpot, lw::Flag::kKeptAliveIdle};
  CHECK(r.HasFlag("spot"));
  CHECK(r.HasFlag(lw::Flag::kKeptAliveIdle));
  CHECK_FALSE(r.HasFlag("orphaned"));
  CHECK_FALSE(r.HasFlag("no_such_flag"));
  CHECK(r.flags.items() == std::vector<lw::Flag>{lw::Flag::kKeptAliveIdle, lw::Flag::kSpot});  // Flag order
}

TEST_CASE("a listed GPU price is an optional Money in 8 bytes that keeps zero as a price") {
  static_assert(sizeof(lw::CompactOptional<lw::Money>) == 8);
  lw::Billing b;
  CHECK_FALSE(b.price_per_gpu_hour.has_value());
  b.price_per_gpu_hour = lw::Money();
  CHECK(b.price_per_gpu_hour.has_value());  // a free GPU is a price, not none
  CHECK(*b.price_per_gpu_hour == lw::Money());
  b.price_per_gpu_hour = lw::Money::min();  // the sentinel itself is kept as a value
  CHECK(b.price_per_gpu_hour.has_value());
  b.price_per_gpu_hour = std::optional<lw::Money>();
  CHECK_FALSE(b.price_per_gpu_hour.has_value());
}
