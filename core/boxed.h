#pragma once
// A value held out of line, for a member most objects leave at its default.
//
// A stored resource's checkpoint summary is 48 bytes, and it is known for few of them
// (trainers whose checkpoints were listed: 2,250 of 115,000 in the generated fleet);
// inline, every one of the others carried it too. Boxed<T> is one pointer: null reads
// as T{}, anything written goes to a heap block of its own. Copies copy the value.
//
// Reading is through * and ->; writing through Mutable() or assignment of a T. Once
// written, the block stays until reset() (writing T{} back does not free it): a value
// is never inferred from its bytes, so boxed() says whether one was set.

#include <memory>
#include <utility>

namespace loopwarden {

template <class T>
class Boxed {
 public:
  Boxed() noexcept = default;
  Boxed(const T& v) : p_(std::make_unique<T>(v)) {}  // NOLINT: implicit, as the T it replaces
  Boxed(const Boxed& o) : p_(o.p_ ? std::make_unique<T>(*o.p_) : nullptr) {}
  Boxed(Boxed&&) noexcept = default;
  Boxed& operator=(const Boxed& o) {
    if (this != &o) *this = o.p_ ? Boxed(*o.p_) : Boxed();
    return *this;
  }
  Boxed& operator=(Boxed&&) noexcept = default;
  Boxed& operator=(const T& v) {
    Mutable() = v;
    return *this;
  }
  ~Boxed() = default;

  const T& operator*() const noexcept { return p_ ? *p_ : Default(); }
  const T* operator->() const noexcept { return &**this; }
  // The value, to write: allocated (as T{}) the first time.
  T& Mutable() {
    if (!p_) p_ = std::make_unique<T>();
    return *p_;
  }
  // Whether a value is held: written since construction or the last reset().
  bool boxed() const noexcept { return p_ != nullptr; }
  // Back to reading T{}, the block freed.
  void reset() noexcept { p_.reset(); }

 private:
  static const T& Default() noexcept {
    static const T kDefault{};
    return kDefault;
  }
  std::unique_ptr<T> p_;
};

}  // namespace loopwarden
