#pragma once
// How a List() spends its per-poll allowance of per-resource detail reads (metrics,
// checkpoints, spend, deployment listings): `detail_calls_per_poll`. Shared by both
// adapters.

#include <algorithm>
#include <utility>
#include <vector>

#include "core/time.h"
#include "net/parallel.h"

namespace loopwarden::providers {

// Calls a List() may still spend on details this poll.
struct DetailBudget {
  int left;
  bool Take() {
    if (left <= 0) return false;
    --left;
    return true;
  }
};

// A detail read a List() would like, with when it was last read. (A constructor, not
// an aggregate: GCC 12 mishandles brace-initialized temporaries in coroutines.)
struct WantedDetail {
  WantedDetail(Time l, net::Task t) : last(l), task(std::move(t)) {}
  Time last;
  net::Task task;
};

// As many of `wanted` as the budget allows, least recently read first, so that when
// the budget binds successive polls (and successive `run --once` processes sharing the
// stored caches) rotate through the fleet instead of re-reading the same first few.
inline std::vector<net::Task> TakeOldestFirst(std::vector<WantedDetail>& wanted, DetailBudget& budget) {
  std::stable_sort(wanted.begin(), wanted.end(), [](const WantedDetail& a, const WantedDetail& b) { return a.last < b.last; });
  std::vector<net::Task> out;
  for (WantedDetail& w : wanted) {
    if (!budget.Take()) break;
    out.push_back(std::move(w.task));
  }
  return out;
}

}  // namespace loopwarden::providers
