#pragma once
// An allocator that carves a node container's nodes out of large blocks.
//
// Each node of a std::unordered_set is its own malloc block, and malloc adds a header to
// each and rounds it up to 16 bytes: for the store's 115,000 resource nodes of 384 bytes
// that was 16 bytes a node, 1.8 MB. NodeSlabAllocator gives single nodes from blocks of
// about 64 KB and keeps freed ones on a free list for the next insert; arrays (a hash
// table's buckets) still come from operator new. Blocks go back when the container and
// every copy of its allocator are gone, not before: a container that shrinks for good
// keeps its peak, as it would largely have under malloc.
//
// Not thread-safe: a container and its allocator are used by one thread, and a copied
// container gets a slab of its own (select_on_container_copy_construction).

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define LW_SLAB_POISON(p, n) __asan_poison_memory_region((p), (n))
#define LW_SLAB_UNPOISON(p, n) __asan_unpoison_memory_region((p), (n))
#else
#define LW_SLAB_POISON(p, n) ((void)(p), (void)(n))
#define LW_SLAB_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

namespace loopwarden {

// Fixed-size slots in blocks that stay put. The slot size is set by the first Take.
class NodeSlab {
 public:
  NodeSlab() = default;
  NodeSlab(const NodeSlab&) = delete;
  NodeSlab& operator=(const NodeSlab&) = delete;
  ~NodeSlab() {
    for (std::byte* b : blocks_) ::operator delete(b, std::align_val_t{kAlign});
  }

  void* Take(size_t size) {
    const size_t slot = (size + kAlign - 1) / kAlign * kAlign;
    if (slot_ == 0) slot_ = slot;
    // One node type per slab (NodeSlabAllocator::FromSlab admits only nodes, and a
    // container has one node type): another size is a bug, stopped here before it
    // overruns a slot.
    if (slot != slot_) std::abort();
    if (free_ != nullptr) {
      void* p = free_;
      LW_SLAB_UNPOISON(p, slot_);
      free_ = *static_cast<void**>(p);
      return p;
    }
    if (next_ == end_) {
      const size_t per_block = std::max<size_t>(1, kBlockBytes / slot_);
      auto* b = static_cast<std::byte*>(::operator new(per_block * slot_, std::align_val_t{kAlign}));
      blocks_.push_back(b);
      next_ = b;
      end_ = b + per_block * slot_;
      LW_SLAB_POISON(next_, per_block * slot_);
    }
    void* p = next_;
    next_ += slot_;
    LW_SLAB_UNPOISON(p, slot_);
    return p;
  }
  void Give(void* p) {
    *static_cast<void**>(p) = free_;
    free_ = p;
    LW_SLAB_POISON(p, slot_);
  }
  // The slot size, 0 before the first Take.
  size_t slot() const { return slot_; }
  size_t blocks() const { return blocks_.size(); }

  static constexpr size_t kAlign = alignof(std::max_align_t);
  static constexpr size_t kBlockBytes = 64 * 1024;

 private:
  size_t slot_ = 0;
  std::vector<std::byte*> blocks_;
  std::byte* next_ = nullptr;
  std::byte* end_ = nullptr;
  void* free_ = nullptr;
};

template <class T>
class NodeSlabAllocator {
 public:
  using value_type = T;
  using propagate_on_container_move_assignment = std::true_type;
  using propagate_on_container_swap = std::true_type;

  NodeSlabAllocator() : slab_(std::make_shared<NodeSlab>()) {}
  template <class U>
  NodeSlabAllocator(const NodeSlabAllocator<U>& o) noexcept : slab_(o.slab_) {}

  NodeSlabAllocator select_on_container_copy_construction() const { return NodeSlabAllocator(); }

  T* allocate(size_t n) {
    if (FromSlab(n)) return static_cast<T*>(slab_->Take(sizeof(T)));
    return std::allocator<T>().allocate(n);
  }
  void deallocate(T* p, size_t n) noexcept {
    if (FromSlab(n)) {
      slab_->Give(p);
    } else {
      std::allocator<T>().deallocate(p, n);
    }
  }

  const NodeSlab& slab() const { return *slab_; }

  template <class U>
  friend bool operator==(const NodeSlabAllocator& a, const NodeSlabAllocator<U>& b) noexcept {
    return a.slab_ == b.slab_;
  }

 private:
  template <class U>
  friend class NodeSlabAllocator;
  // One node at a time, and nodes only: a bucket array of one pointer is not a node.
  // Big types too (a slot of hundreds of kilobytes would make each block one slot).
  static constexpr bool FromSlab(size_t n) {
    return n == 1 && sizeof(T) > 4 * sizeof(void*) && sizeof(T) <= NodeSlab::kBlockBytes / 16 &&
           alignof(T) <= NodeSlab::kAlign;
  }

  std::shared_ptr<NodeSlab> slab_;
};

}  // namespace loopwarden
