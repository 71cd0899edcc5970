#pragma once
// Text in 16 bytes, for the short strings every stored resource carries.
//
// A resource's id, display name and parent id are mostly under 16 characters (Baseten
// ids are 6 to 8, names like "grpo-k4q9"); as std::string each was 32 bytes, 96 bytes
// of every one of 100k+ stored resources. Here text of up to 15 bytes sits inline,
// NUL-terminated; longer text is one heap block of its length and a NUL, as
// std::string's would be.
//
// It reads like the std::string it replaces: it converts to std::string_view and
// std::string, compares with text, concatenates, and has c_str().
//
// Layout: byte 15 is 15 minus the inline length (so a 15-byte text ends in the NUL it
// needs), or kHeap; then bytes 0-7 are the block and 8-11 the length.

#include <compare>
#include <concepts>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>

namespace loopwarden {

class ShortString {
 public:
  static constexpr size_t kInline = 15;

  ShortString() noexcept { SetInline({}); }
  ShortString(std::string_view s) { Set(s); }      // NOLINT: implicit, like std::string
  ShortString(const std::string& s) { Set(s); }    // NOLINT
  ShortString(const char* s) { Set(s); }           // NOLINT
  ShortString(const ShortString& o) { Set(o.view()); }
  ShortString(ShortString&& o) noexcept {
    std::memcpy(raw_, o.raw_, sizeof raw_);
    o.SetInline({});
  }
  ShortString& operator=(const ShortString& o) {
    if (this != &o) *this = o.view();
    return *this;
  }
  ShortString& operator=(ShortString&& o) noexcept {
    if (this != &o) {
      Free();
      std::memcpy(raw_, o.raw_, sizeof raw_);
      o.SetInline({});
    }
    return *this;
  }
  ShortString& operator=(std::string_view s) {
    // Built aside first: `s` may view this string's own text.
    ShortString made(s);
    return *this = std::move(made);
  }
  // The texts one after another, made in place: "sampler " + id as a std::string first
  // was a second heap block, copied and freed, for every name past 15 bytes.
  static ShortString Concat(std::string_view a, std::string_view b, std::string_view c = {}) {
    const size_t n = a.size() + b.size() + c.size();
    ShortString out;
    char* p;
    if (n <= kInline) {
      p = reinterpret_cast<char*>(out.raw_);
      out.raw_[15] = static_cast<unsigned char>(kInline - n);
    } else {
      p = new char[n + 1];
      p[n] = '\0';
      const auto len = static_cast<uint32_t>(n);
      std::memcpy(out.raw_, &p, sizeof p);
      std::memcpy(out.raw_ + 8, &len, sizeof len);
      out.raw_[15] = kHeap;
    }
    for (std::string_view part : {a, b, c}) {
      if (!part.empty()) std::memcpy(p, part.data(), part.size());  // an empty view's data may be null
      p += part.size();
    }
    return out;
  }
  ShortString& operator=(const std::string& s) { return *this = std::string_view(s); }
  ShortString& operator=(const char* s) { return *this = std::string_view(s); }
  ~ShortString() { Free(); }

  bool on_heap() const noexcept { return Tag() == kHeap; }
  const char* data() const noexcept { return on_heap() ? HeapPtr() : reinterpret_cast<const char*>(raw_); }
  const char* c_str() const noexcept { return data(); }
  size_t size() const noexcept {
    if (!on_heap()) return kInline - Tag();
    uint32_t n;
    std::memcpy(&n, raw_ + 8, sizeof n);
    return n;
  }
  bool empty() const noexcept { return size() == 0; }
  std::string_view view() const noexcept { return {data(), size()}; }
  operator std::string_view() const noexcept { return view(); }  // NOLINT: implicit
  operator std::string() const { return std::string(view()); }   // NOLINT: implicit
  std::string substr(size_t pos, size_t n = std::string::npos) const { return std::string(view().substr(pos, n)); }

  friend bool operator==(const ShortString& a, const ShortString& b) noexcept { return a.view() == b.view(); }
  friend std::strong_ordering operator<=>(const ShortString& a, const ShortString& b) noexcept { return a.view() <=> b.view(); }
  // Against plain text (exact for std::string, const char* and string_view, so no
  // conversion is ambiguous).
  template <class T>
    requires(!std::same_as<T, ShortString> && std::convertible_to<const T&, std::string_view>)
  friend bool operator==(const ShortString& a, const T& b) noexcept {
    return a.view() == std::string_view(b);
  }
  template <class T>
    requires(!std::same_as<T, ShortString> && std::convertible_to<const T&, std::string_view>)
  friend std::strong_ordering operator<=>(const ShortString& a, const T& b) noexcept {
    return a.view() <=> std::string_view(b);
  }

  friend std::string operator+(std::string a, const ShortString& b) { return a.append(b.view()); }
  friend std::string operator+(const char* a, const ShortString& b) { return std::string(a).append(b.view()); }
  friend std::string operator+(const ShortString& a, std::string_view b) { return std::string(a.view()).append(b); }
  friend std::string operator+(const ShortString& a, const std::string& b) { return std::string(a.view()).append(b); }
  friend std::string operator+(const ShortString& a, const char* b) { return std::string(a.view()).append(b); }
  friend std::string operator+(const ShortString& a, const ShortString& b) { return std::string(a.view()).append(b.view()); }
  friend std::ostream& operator<<(std::ostream& os, const ShortString& s) { return os << s.view(); }

 private:
  static constexpr unsigned char kHeap = 0xFF;

  unsigned char Tag() const noexcept { return raw_[15]; }
  const char* HeapPtr() const noexcept {
    const char* p;
    std::memcpy(&p, raw_, sizeof p);
    return p;
  }
  void SetInline(std::string_view s) noexcept {
    std::memset(raw_, 0, sizeof raw_);
    if (!s.empty()) std::memcpy(raw_, s.data(), s.size());  // an empty view's data may be null
    raw_[15] = static_cast<unsigned char>(kInline - s.size());
  }
  void Set(std::string_view s) {
    if (s.size() <= kInline) return SetInline(s);
    char* p = new char[s.size() + 1];
    std::memcpy(p, s.data(), s.size());
    p[s.size()] = '\0';
    const auto n = static_cast<uint32_t>(s.size());
    std::memcpy(raw_, &p, sizeof p);
    std::memcpy(raw_ + 8, &n, sizeof n);
    raw_[15] = kHeap;
  }
  void Free() noexcept {
    if (on_heap()) delete[] HeapPtr();
  }

  alignas(8) unsigned char raw_[16];
};

static_assert(sizeof(ShortString) == 16);

}  // namespace loopwarden
