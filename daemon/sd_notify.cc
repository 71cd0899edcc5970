#include "daemon/sd_notify.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>

namespace loopwarden::daemon {

SdNotifier::SdNotifier() {
  if (const char* s = std::getenv("NOTIFY_SOCKET"); s && *s) socket_ = s;
  const char* usec = std::getenv("WATCHDOG_USEC");
  const char* pid = std::getenv("WATCHDOG_PID");
  if (usec && *usec) {
    const long long us = std::atoll(usec);
    const bool ours = !pid || !*pid || std::atoll(pid) == static_cast<long long>(getpid());
    if (us > 0 && ours) watchdog_ = Duration(us / 2);
  }
}

Status SdNotifier::Send(std::string_view message) const {
  if (socket_.empty()) return Status::Ok();
  if (socket_[0] != '/' && socket_[0] != '@') return InvalidArgument("NOTIFY_SOCKET must be a path or @abstract");
  sockaddr_un sa{};
  sa.sun_family = AF_UNIX;
  if (socket_.size() >= sizeof sa.sun_path) return InvalidArgument("NOTIFY_SOCKET is too long");
  std::memcpy(sa.sun_path, socket_.data(), socket_.size());
  if (sa.sun_path[0] == '@') sa.sun_path[0] = '\0';
  // The exact length: sizeof(sa) would be wrong for abstract names.
  const socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + socket_.size());
  const int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Unavailable(std::string("sd_notify socket: ") + std::strerror(errno));
  Status out;
  if (connect(fd, reinterpret_cast<sockaddr*>(&sa), len) != 0) {
    out = Unavailable(std::string("sd_notify connect: ") + std::strerror(errno));
  } else if (write(fd, message.data(), message.size()) != static_cast<ssize_t>(message.size())) {
    out = Unavailable(std::string("sd_notify write: ") + std::strerror(errno));
  }
  close(fd);
  return out;
}

Status SdNotifier::Ready(std::string_view status) const {
  return Send(status.empty() ? std::string("READY=1") : "READY=1\nSTATUS=" + std::string(status));
}

Status SdNotifier::Reloading() const {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  const unsigned long long us = static_cast<unsigned long long>(ts.tv_sec) * 1000000ULL + static_cast<unsigned long long>(ts.tv_nsec) / 1000ULL;
  return Send("RELOADING=1\nMONOTONIC_USEC=" + std::to_string(us));
}

Status SdNotifier::Stopping() const { return Send("STOPPING=1"); }

}  // namespace loopwarden::daemon
