#include "core/interned.h"

#include <memory>
#include <mutex>

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

  size_t Size() {
    std::lock_guard lock(mu_);
    return entries_.size();
  }

 private:
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

Interned::Interned(std::string_view text) {
  if (!text.empty()) entry_ = InternPool::Get().Intern(text);
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
