#include <doctest/doctest.h>

#include <string>

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
