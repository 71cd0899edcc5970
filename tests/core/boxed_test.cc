// Boxed<T>: one pointer, T{} until written, copies that do not share.
#include <doctest/doctest.h>

#include <string>
#include <utility>

#include "core/boxed.h"
#include "core/resource.h"

using loopwarden::Boxed;
using loopwarden::Checkpoints;

namespace {
struct Summary {
  int count = 0;
  bool reachable = true;  // a default that is not zero: null must read as T{}, not as zeroed bytes
  std::string name;
};
}  // namespace

static_assert(sizeof(Boxed<Summary>) == sizeof(void*));

TEST_CASE("a box nobody wrote reads as the type's default and holds no block") {
  const Boxed<Summary> b;
  CHECK_FALSE(b.boxed());
  CHECK(b->count == 0);
  CHECK(b->reachable);
  CHECK(b->name.empty());
  CHECK(&*b == &*Boxed<Summary>());  // every empty box reads the one default
}

TEST_CASE("a box written holds its own value, copies it and gives it back on reset") {
  Boxed<Summary> a;
  a.Mutable().count = 3;
  a.Mutable().name = "step-40";
  CHECK(a.boxed());
  CHECK(a->count == 3);
  CHECK(a->reachable);  // the rest of T{} came with the first write

  Boxed<Summary> b = a;  // a copy has its own block
  b.Mutable().count = 4;
  CHECK(a->count == 3);
  CHECK(b->count == 4);
  CHECK(b->name == "step-40");

  Boxed<Summary> empty;
  b = empty;  // copying an empty box empties the target
  CHECK_FALSE(b.boxed());
  CHECK(b->count == 0);
  empty = a;
  CHECK(empty.boxed());
  CHECK(empty->name == "step-40");

  Boxed<Summary> moved = std::move(a);
  CHECK(moved->count == 3);
  CHECK(moved.boxed());

  moved = Summary{.count = 9, .reachable = false, .name = {}};
  CHECK(moved->count == 9);
  CHECK_FALSE(moved->reachable);
  moved.reset();
  CHECK_FALSE(moved.boxed());
  CHECK(moved->reachable);
}

TEST_CASE("a resource's checkpoints are boxed only once something is written to them") {
  loopwarden::Resource r;
  CHECK_FALSE(r.checkpoints.boxed());
  CHECK_FALSE(r.checkpoints->known);
  CHECK(r.checkpoints->reachable);  // Checkpoints{}: reachable unless the provider says not
  loopwarden::Resource copy = r;
  CHECK_FALSE(copy.checkpoints.boxed());
  r.checkpoints.Mutable().count = 2;
  copy = r;
  CHECK(copy.checkpoints.boxed());
  CHECK(copy.checkpoints->count == 2);
}
