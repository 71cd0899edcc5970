#include "store/instance_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace loopwarden::store {

Result<InstanceLock> InstanceLock::Acquire(const std::string& database) {
  const std::string path = database + ".lock";
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) {
    const int e = errno;
    const bool exists = ::access(path.c_str(), F_OK) == 0;
    std::string hint;
    if (e == EACCES || e == EROFS) {
      hint = exists ? " (this user may not write it: run loopwarden as the user that owns the state)"
                    : " (is the state directory writable by this user?)";
    }
    return Unavailable(std::string(exists ? "cannot open lock file " : "cannot create lock file ") + path + ": " +
                       std::strerror(e) + hint);
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int e = errno;
    std::string holder = "unknown pid";
    char buf[32] = {};
    const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
    if (n > 0) {
      std::string pid(buf, static_cast<size_t>(n));
      while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
      if (!pid.empty() && pid.find_first_not_of("0123456789") == std::string::npos) holder = "pid " + pid;
    }
    ::close(fd);
    if (e != EWOULDBLOCK) return Unavailable("cannot lock " + path + ": " + std::strerror(e));
    return FailedPrecondition("database " + database + " is in use by another loopwarden (" + holder + ", lock " + path +
                              "); run one instance per database. `loopwarden plan`, `status` and `report` work beside it");
  }
  // Ours: say who holds it.
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    const int e = errno;
    ::close(fd);
    return Unavailable("cannot write lock file " + path + ": " + std::strerror(e));
  }
  return InstanceLock(fd, path);
}

InstanceLock& InstanceLock::operator=(InstanceLock&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    path_ = std::move(o.path_);
    o.fd_ = -1;
  }
  return *this;
}

InstanceLock::~InstanceLock() {
  // Closing drops the lock; the file stays (removing it would race a new holder).
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace loopwarden::store
