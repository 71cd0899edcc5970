// kill -9 a writing process in the middle of transactions, many times: the file stays
// consistent and integrity_check clean.
#include <doctest/doctest.h>

#include <csignal>
#include <random>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/store/fixtures.h"
#include "tests/testing/temp_dir.h"

using namespace loopwarden;
using namespace loopwarden::testing;
using namespace std::chrono_literals;

namespace {

// The child: ingest cycles as fast as it can, one byte down the pipe after each commit.
[[noreturn]] void Writer(const std::string& path, int fd, uint64_t seed) {
  auto s = store::Store::Open({.path = path});
  if (!s.ok()) _exit(3);
  std::mt19937_64 rng(seed);
  std::vector<ListedResource> fleet;
  for (int i = 0; i < 400; ++i) fleet.push_back(Run("k" + std::to_string(i), 8, i % 2 == 0));
  for (int cycle = 0;; ++cycle) {
    for (int k = 0; k < 60; ++k) {
      Resource& r = fleet[rng() % fleet.size()];
      r.billing.billable = !r.billing.billable;
      r.lifecycle = r.billing.billable ? Lifecycle::kRunning : Lifecycle::kStopped;
      r.name = "n" + std::to_string(rng());
    }
    auto snap = Snap(fleet);
    if (!(*s)->Ingest({&snap, 1}, kT0 + std::chrono::minutes(cycle), Prices()).ok()) _exit(4);
    store::Intent in{0, "c" + std::to_string(seed) + "-" + std::to_string(cycle), "bt/baseten.run/k1", "p", "deactivate",
                     "x", kT0};
    if (!(*s)->BeginIntent(in).ok()) _exit(6);
    char b = 1;
    if (write(fd, &b, 1) != 1) _exit(5);
  }
}

}  // namespace

TEST_CASE("integrity survives 30 kill -9s in the middle of writes") {
  TempDir dir;
  const std::string path = dir.File("kill.db");
  std::mt19937_64 rng(7);
  for (int round = 0; round < 30; ++round) {
    int fds[2];
    REQUIRE(pipe(fds) == 0);
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      close(fds[0]);
      Writer(path, fds[1], static_cast<uint64_t>(round));
    }
    close(fds[1]);
    // Let it commit 1..4 cycles, then kill it wherever it is in the next one.
    const int wait_for = 1 + static_cast<int>(rng() % 4);
    for (int i = 0; i < wait_for; ++i) {
      char b;
      REQUIRE(read(fds[0], &b, 1) == 1);
    }
    kill(pid, SIGKILL);
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    CHECK(WIFSIGNALED(status));
    close(fds[0]);
    auto s = store::Store::Open({.path = path});
    REQUIRE_MESSAGE(s.ok(), s.status().message());
    CHECK((*s)->IntegrityCheck().ok());
    // What was committed before the kill survived it: every cycle the writer reported
    // left its intent.
    auto intents = (*s)->IntentsWithKeyPrefix("c" + std::to_string(round) + "-");
    REQUIRE(intents.ok());
    CHECK(intents->size() >= static_cast<size_t>(wait_for));
    // Every open ledger interval belongs to a resource that bills, and nothing is negative.
    for (const store::ResourceState& st : (*s)->resources()) {
      CHECK(st.closed_spend.micros() >= 0);
      if (st.open_gpu) CHECK(st.resource.billing.billable);
    }
  }
}
