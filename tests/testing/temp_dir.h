#pragma once
// A fresh directory under the system temp dir, removed when the test ends.

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>

namespace loopwarden::testing {

class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() / ("loopwarden-test-" + std::to_string(rd()) + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    // LOOPWARDEN_TEST_KEEP=1 keeps the logs and databases of a run for a post-mortem.
    if (std::getenv("LOOPWARDEN_TEST_KEEP") != nullptr) {
      std::fprintf(stderr, "kept %s\n", path_.c_str());
      return;
    }
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string File(const std::string& name) const { return (path_ / name).string(); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace loopwarden::testing
