#include "core/interned.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <utility>

#include "core/flat_hash.h"

namespace loopwarden {

class InternPool {
 public:
  static InternPool& Get() {
    // Never destroyed: resources held by statics may release entries during exit.
    static InternPool* pool = new InternPool;
    return *pool;
  }

  Interned::Entry* Intern(std::string_view text) {
    std::lock_guard lock(mu_);
    if (auto it = entries_.find(text); it != entries_.end()) {
      it->second->refs.fetch_add(1, std::memory_order_relaxed);
      return it->second.get();
    }
    if (entries_.size() >= sweep_at_) Sweep();
    auto e = std::make_unique<Interned::Entry>(text);
    Interned::Entry* raw = e.get();
    entries_.emplace(raw->text, std::move(e));  // the key views the entry's own text
    return raw;
  }

  // Intern() through the calling thread's memo of recent values.
  static Interned::Entry* InternRecent(std::string_view text);

  size_t Size() {
    std::lock_guard lock(mu_);
    return entries_.size();
  }

 private:
  struct Recent;

  // Frees the entries no handle holds. A count of 0 cannot rise again without this
  // lock (copies need a live handle), so erasing here is safe.
  void Sweep() {
    boost::unordered::erase_if(entries_, [](const auto& kv) { return kv.second->refs.load(std::memory_order_acquire) == 0; });
    sweep_at_ = std::max<size_t>(kMinSweep, entries_.size() * 2);
  }

  static constexpr size_t kMinSweep = 1024;
  std::mutex mu_;
  // Open addressing: every listed resource interns its statuses, owners and models each
  // poll, and a node-based map walks a node (a likely cache miss) per lookup.
  // The key views the entry's own text, which stays put when the table moves a slot.
  HashMap<std::string_view, std::unique_ptr<Interned::Entry>> entries_;
  size_t sweep_at_ = kMinSweep;
};

namespace {

// Where `text` goes in the per-thread memo: its length and its first and last eight
// bytes, mixed. Texts that differ only in between share a slot, which costs a trip to
// the pool, never a wrong answer (a hit compares the whole text).
size_t RecentSlot(std::string_view text, size_t slots) {
  uint64_t a = 0, b = 0;
  const size_t n = text.size();
  if (n >= 8) {
    std::memcpy(&a, text.data(), 8);
    std::memcpy(&b, text.data() + n - 8, 8);
  } else {
    std::memcpy(&a, text.data(), n);
  }
  const uint64_t h = (a ^ (b * 0x9E3779B97F4A7C15ULL) ^ n) * 0xBF58476D1CE4E5B9ULL;
  return static_cast<size_t>(h >> 32) % slots;
}

}  // namespace

// The values a thread interned last, one per slot, each holding its own count so no
// sweep can free it under the memo. Every listed resource interns its statuses, owners,
// models and refs' keys each poll, the same few hundred values again and again, and the
// pool's lock and hash were 5 % of a steady 100k cycle; a hit here is a compare and a count.
struct InternPool::Recent {
  static constexpr size_t kSlots = 512;
  Interned::Entry* slots[kSlots] = {};
  ~Recent() {
    for (Interned::Entry* e : slots) Interned::Release(e);
  }
};

Interned::Entry* InternPool::InternRecent(std::string_view text) {
  thread_local Recent recent;
  Interned::Entry*& slot = recent.slots[RecentSlot(text, Recent::kSlots)];
  if (slot != nullptr && slot->text == text) {
    Interned::Hold(slot);
    return slot;
  }
  Interned::Entry* e = Get().Intern(text);  // the caller's count
  Interned::Hold(e);                         // and the memo's
  Interned::Release(std::exchange(slot, e));
  return e;
}

Interned::Interned(std::string_view text) {
  if (!text.empty()) entry_ = InternPool::InternRecent(text);
}

const std::string& Interned::Empty() noexcept {
  static const std::string empty;
  return empty;
}

size_t Interned::PoolSize() { return InternPool::Get().Size(); }

std::string operator+(const Interned& a, std::string_view b) {
  std::string out(a.view());
  out.append(b);
  return out;
}
std::string operator+(std::string_view a, const Interned& b) {
  std::string out(a);
  out.append(b.view());
  return out;
}

}  // namespace loopwarden
