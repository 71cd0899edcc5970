// One writer per database: a second writer is refused and told who holds it; readers
// are not; the lock goes with its holder.
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "store/store.h"
#include "tests/testing/temp_dir.h"

using namespace loopwarden;
using namespace loopwarden::testing;

TEST_CASE("single writer: a second writer is refused naming the holder's pid, readers are not, and the lock leaves with its holder") {
  TempDir dir;
  const std::string path = dir.File("lw.db");
  auto first = store::Store::Open({.path = path});
  REQUIRE(first.ok());
  auto second = store::Store::Open({.path = path});
  REQUIRE_FALSE(second.ok());
  CHECK(second.status().code() == StatusCode::kFailedPrecondition);
  const std::string msg = second.status().message();
  CHECK(msg.find("in use by another loopwarden") != std::string::npos);
  CHECK(msg.find("pid " + std::to_string(getpid())) != std::string::npos);
  CHECK(msg.find(path + ".lock") != std::string::npos);
  // status and report read beside the writer.
  auto reader = store::Store::Open({.path = path, .read_only = true, .create = false});
  CHECK(reader.ok());
  first->reset();
  auto again = store::Store::Open({.path = path});
  CHECK(again.ok());
}

TEST_CASE("single writer: a lock file left by a dead holder does not block, and a lock that cannot be created is named") {
  TempDir dir;
  const std::string path = dir.File("lw.db");
  std::ofstream(path + ".lock") << "999999\n";  // a holder that is gone: no flock survives it
  auto s = store::Store::Open({.path = path});
  REQUIRE(s.ok());
  std::ifstream in(path + ".lock");
  std::string pid;
  in >> pid;
  CHECK(pid == std::to_string(getpid()));
  // Its directory is a file: no user, root included, can create the lock there.
  std::ofstream(dir.File("plain")) << "x";
  auto blocked = store::InstanceLock::Acquire(dir.File("plain") + "/lw.db");
  REQUIRE_FALSE(blocked.ok());
  CHECK(blocked.status().message().find("cannot create lock file " + dir.File("plain") + "/lw.db.lock") !=
        std::string::npos);
  if (getuid() != 0) {  // root writes anywhere: the permission hint only as another user
    const std::string ro = dir.File("ro");
    std::filesystem::create_directory(ro);
    std::filesystem::permissions(ro, std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
    auto denied = store::Store::Open({.path = ro + "/lw.db"});
    REQUIRE_FALSE(denied.ok());
    CHECK(denied.status().message().find("writable") != std::string::npos);
  }
}
