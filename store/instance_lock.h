#pragma once
// One writer per database: an exclusive flock(2) on "<database>.lock", held for the
// life of the writing Store, with the holder's pid inside so a second writer can say
// who holds it. The kernel drops the lock when the holder exits, kill -9 included, so a
// stale file never blocks a restart. Readers (status, report, plan's copy) take none.
//
// flock is reliable on local filesystems; on NFS it may not be, so keep state local.

#include <string>

#include "core/status.h"

namespace loopwarden::store {

class InstanceLock {
 public:
  // FailedPrecondition naming the holder's pid when another process holds it.
  static Result<InstanceLock> Acquire(const std::string& database);
  InstanceLock(InstanceLock&& o) noexcept : fd_(o.fd_), path_(std::move(o.path_)) { o.fd_ = -1; }
  InstanceLock& operator=(InstanceLock&& o) noexcept;
  InstanceLock(const InstanceLock&) = delete;
  InstanceLock& operator=(const InstanceLock&) = delete;
  ~InstanceLock();
  const std::string& path() const { return path_; }

 private:
  InstanceLock(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  int fd_ = -1;
  std::string path_;
};

}  // namespace loopwarden::store
