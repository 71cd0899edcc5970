// One writer per database: a second writer is refused and told who holds it; readers
// are not; the lock goes with its holder.
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>

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

namespace {

// Runs `fn` as a user other than the files' owner: `nobody` in a child process when the
// tests run as root (CI does; root ignores permission bits), else this same user, whom
// the permission bits set below stop just as well.
std::string AsAnotherUser(const std::function<std::string()>& fn) {
  if (getuid() != 0) return fn();
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    std::string out = setgid(65534) == 0 && setuid(65534) == 0 ? fn() : "could not become nobody";
    (void)!write(fds[1], out.data(), out.size());
    _exit(0);
  }
  close(fds[1]);
  std::string out;
  char buf[512];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return out;
}

std::string OpenError(const std::string& path, bool read_only) {
  auto s = store::Store::Open({.path = path, .read_only = read_only, .create = !read_only});
  return s.ok() ? "opened" : s.status().message();
}

}  // namespace

TEST_CASE("hardening: files and directories this user may not write are named as such, never called damaged") {
  // Issue 17: `status` in a read-only state directory said the database "is not a
  // loopwarden database or is damaged"; a writer opened a read-only file and failed later.
  TempDir dir;
  namespace fs = std::filesystem;
  const std::string state = dir.File("state");
  fs::create_directory(state);
  const std::string path = state + "/lw.db";
  REQUIRE(store::Store::Open({.path = path}).ok());
  const auto r = fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read;
  const auto x = fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec;
  fs::permissions(dir.path(), r | x);
  fs::permissions(path, r);
  fs::permissions(path + ".lock", r);
  fs::permissions(state, r | x);  // read-only directory

  const std::string reader = AsAnotherUser([&] { return OpenError(path, true); });
  CHECK(reader.find("cannot read database " + path + " as this user") != std::string::npos);
  CHECK(reader.find("write access to its directory " + state) != std::string::npos);
  CHECK(reader.find("damaged") == std::string::npos);
  const std::string writer = AsAnotherUser([&] { return OpenError(path, false); });
  CHECK(writer.find("cannot open lock file " + path + ".lock") != std::string::npos);
  CHECK(writer.find("this user may not write it") != std::string::npos);

  // The directory and lock writable, the database file not.
  fs::permissions(state, fs::perms::all);
  fs::permissions(path + ".lock", fs::perms::all);
  const std::string file = AsAnotherUser([&] { return OpenError(path, false); });
  CHECK(file.find("database " + path + " is not writable by this user") != std::string::npos);
  fs::permissions(dir.path(), fs::perms::owner_all);
}
