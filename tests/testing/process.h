#pragma once
// Child processes for end-to-end tests: start with extra environment and a log file,
// signal, and wait with a bound. The destructor SIGKILLs whatever is still running, so a
// failing test leaves nothing behind.

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <fcntl.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace loopwarden::testing {

class Process {
 public:
  // argv[0] is the executable path. `env` adds to (or overrides) this process's
  // environment; a value of "\x01unset" removes the variable.
  // `fsize_limit` > 0 caps the size of any file the child writes (RLIMIT_FSIZE), the way
  // a full disk would stop it.
  static std::unique_ptr<Process> Start(const std::vector<std::string>& argv,
                                        const std::map<std::string, std::string>& env, const std::string& log_path,
                                        long fsize_limit = 0) {
    std::map<std::string, std::string> merged;
    for (char** e = environ; *e; ++e) {
      std::string kv = *e;
      const size_t eq = kv.find('=');
      if (eq != std::string::npos) merged[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
    for (const auto& [k, v] : env) {
      if (v == "\x01unset") merged.erase(k);
      else merged[k] = v;
    }
    std::vector<std::string> envs;
    for (const auto& [k, v] : merged) envs.push_back(k + "=" + v);
    std::vector<char*> cargv, cenv;
    for (const std::string& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
    cargv.push_back(nullptr);
    for (std::string& e : envs) cenv.push_back(e.data());
    cenv.push_back(nullptr);
    const int fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) throw std::runtime_error("cannot open " + log_path);
    const pid_t pid = fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
      dup2(fd, 1);
      dup2(fd, 2);
      if (fsize_limit > 0) {
        rlimit rl{static_cast<rlim_t>(fsize_limit), static_cast<rlim_t>(fsize_limit)};
        setrlimit(RLIMIT_FSIZE, &rl);
      }
      execve(cargv[0], cargv.data(), cenv.data());
      _exit(127);
    }
    close(fd);
    auto p = std::unique_ptr<Process>(new Process());
    p->pid_ = pid;
    p->log_ = log_path;
    return p;
  }

  ~Process() {
    if (running()) {
      kill(pid_, SIGKILL);
      (void)Wait(std::chrono::seconds(5));
    }
  }

  pid_t pid() const { return pid_; }
  const std::string& log_path() const { return log_; }
  void Signal(int sig) const {
    if (exit_code_) return;
    kill(pid_, sig);
  }
  bool running() {
    Reap(false);
    return !exit_code_.has_value();
  }
  // The exit code (128 + signal for a signal), or nothing if still running after `limit`.
  std::optional<int> Wait(std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!exit_code_ && std::chrono::steady_clock::now() < deadline) {
      Reap(false);
      if (!exit_code_) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return exit_code_;
  }
  std::string Log() const {
    std::ifstream in(log_);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

 private:
  Process() = default;
  void Reap(bool block) {
    if (exit_code_) return;
    int status = 0;
    const pid_t r = waitpid(pid_, &status, block ? 0 : WNOHANG);
    if (r == pid_) {
      exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
  }
  pid_t pid_ = -1;
  std::string log_;
  std::optional<int> exit_code_;
};

// Polls `pred` every `step` until it holds or `limit` passes; the last result.
template <class Pred>
bool WaitUntil(Pred pred, std::chrono::milliseconds limit, std::chrono::milliseconds step = std::chrono::milliseconds(20)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(step);
  }
  return pred();
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace loopwarden::testing
