#pragma once
// Text in 8 bytes, for fields most stored resources leave empty.
//
// A std::string is 32 bytes wherever it sits, empty or not. The newest promotable
// checkpoint's two names are set on few resources (Fireworks sessions and trainer jobs
// that saved one) but were 64 bytes in every one of 100k+ stored resources. Empty is a
// null pointer; any other text is one heap block of its length and bytes.
//
// It reads like the std::string it replaces where those fields are used: it converts
// to std::string_view and std::string, compares with text, and concatenates.

#include <cstdint>
#include <cstring>
#include <new>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>

namespace loopwarden {

class CompactString {
 public:
  CompactString() noexcept = default;
  CompactString(std::string_view s) : p_(Make(s)) {}                              // NOLINT: implicit, like std::string
  CompactString(const std::string& s) : p_(Make(s)) {}                            // NOLINT
  CompactString(const char* s) : p_(Make(s)) {}                                   // NOLINT
  CompactString(const CompactString& o) : p_(Make(o.view())) {}
  CompactString(CompactString&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  CompactString& operator=(const CompactString& o) {
    if (this != &o) Reset(Make(o.view()));
    return *this;
  }
  CompactString& operator=(CompactString&& o) noexcept {
    if (this != &o) Reset(std::exchange(o.p_, nullptr));
    return *this;
  }
  CompactString& operator=(std::string_view s) {
    Reset(Make(s));
    return *this;
  }
  CompactString& operator=(const std::string& s) { return *this = std::string_view(s); }
  CompactString& operator=(const char* s) { return *this = std::string_view(s); }
  ~CompactString() { Reset(nullptr); }

  std::string_view view() const noexcept {
    if (!p_) return {};
    uint32_t n;
    std::memcpy(&n, p_, sizeof n);
    return {p_ + sizeof n, n};
  }
  operator std::string_view() const noexcept { return view(); }  // NOLINT: implicit
  operator std::string() const { return std::string(view()); }   // NOLINT: implicit
  bool empty() const noexcept { return p_ == nullptr; }
  size_t size() const noexcept { return view().size(); }

  friend bool operator==(const CompactString& a, const CompactString& b) noexcept { return a.view() == b.view(); }
  friend bool operator==(const CompactString& a, std::string_view b) noexcept { return a.view() == b; }
  friend bool operator==(const CompactString& a, const std::string& b) noexcept { return a.view() == b; }
  friend bool operator==(const CompactString& a, const char* b) noexcept { return a.view() == b; }
  friend std::string operator+(std::string a, const CompactString& b) { return a.append(b.view()); }
  friend std::string operator+(const CompactString& a, std::string_view b) {
    std::string s(a.view());
    return s.append(b);
  }
  friend std::ostream& operator<<(std::ostream& os, const CompactString& s) { return os << s.view(); }

 private:
  static char* Make(std::string_view s) {
    if (s.empty()) return nullptr;
    const auto n = static_cast<uint32_t>(s.size());
    char* p = static_cast<char*>(::operator new(sizeof n + s.size()));
    std::memcpy(p, &n, sizeof n);
    std::memcpy(p + sizeof n, s.data(), s.size());
    return p;
  }
  void Reset(char* p) noexcept { ::operator delete(std::exchange(p_, p)); }

  char* p_ = nullptr;
};

}  // namespace loopwarden
