// caching_allocator.h: the bookkeeping of fkeras' caching allocator, parametrised by a raw
// allocate/free pair. fkeras._C_cuda instantiates it with cudaMalloc/cudaFree (one per device,
// cuda/runtime/allocator.cpp); fkeras._C_cuda_host with malloc/free, so that the tests check
// this same code on the CPU (tests/cuda/test_allocator_host.py).
//
// Requests are rounded up to a size class: multiples of 512 bytes up to 1 MiB, then four
// classes per power of two (at most 25% waste). A freed block goes to its class's bin and is
// handed out again to the next request of that class, or to a request of a smaller class when
// no larger than twice it (best fit), so a warm training step calls the raw allocator never.
// Blocks are not split or merged: the waste is bounded by the class rounding and the 2x reuse
// rule; empty_cache() returns every cached block to the raw allocator. Thread-safe (one mutex).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <new>
#include <stdexcept>
#include <unordered_map>
#include <vector>

namespace fk_cuda {

struct AllocatorStats {
  size_t allocated_bytes = 0;   // bytes in blocks handed out (class-rounded)
  size_t requested_bytes = 0;   // bytes asked for by live allocations
  size_t cached_bytes = 0;      // bytes in free blocks held for reuse
  size_t peak_allocated_bytes = 0;
  size_t reserved_bytes = 0;    // allocated + cached: what the raw allocator holds for us
  uint64_t raw_alloc_count = 0;  // calls to the raw allocator (cudaMalloc)
  uint64_t raw_free_count = 0;
  uint64_t alloc_count = 0;     // allocate() calls served
  uint64_t cache_hits = 0;      // served from a bin
  uint64_t live_blocks = 0;
};

// Size class of a request (bytes >= 1): see the header comment.
inline size_t size_class(size_t bytes) {
  const size_t kSmall = 512, kLarge = size_t(1) << 20;
  if (bytes == 0) bytes = 1;
  if (bytes <= kLarge) return (bytes + kSmall - 1) / kSmall * kSmall;
  size_t p = kLarge;
  while (p * 2 < bytes) p *= 2;          // p < bytes <= 2p
  size_t step = p / 4;
  return (bytes + step - 1) / step * step;
}

template <class RawAlloc>
class CachingAllocator {
 public:
  // RawAlloc: `void* allocate(size_t)` (nullptr when out of memory) and `void free(void*)`.
  explicit CachingAllocator(RawAlloc raw = RawAlloc()) : raw_(raw) {}
  ~CachingAllocator() { release_all(); }
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  // A block of at least `bytes` bytes; throws std::bad_alloc when the raw allocator fails even
  // after the cache was emptied.
  void* allocate(size_t bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    size_t cls = size_class(bytes);
    void* p = nullptr;
    size_t got = 0;
    // Best fit among cached blocks of class in [cls, 2*cls].
    auto it = bins_.lower_bound(cls);
    while (it != bins_.end() && it->first <= 2 * cls) {
      if (!it->second.empty()) {
        p = it->second.back();
        it->second.pop_back();
        got = it->first;
        stats_.cached_bytes -= got;
        ++stats_.cache_hits;
        break;
      }
      ++it;
    }
    if (p == nullptr) {
      p = raw_.allocate(cls);
      if (p == nullptr) {  // out of memory: give the cache back and try once more
        release_cached_locked();
        p = raw_.allocate(cls);
        if (p == nullptr) throw std::bad_alloc();
      }
      ++stats_.raw_alloc_count;
      stats_.reserved_bytes += cls;
      got = cls;
    }
    live_[p] = Live{got, bytes};
    stats_.allocated_bytes += got;
    stats_.requested_bytes += bytes;
    if (stats_.allocated_bytes > stats_.peak_allocated_bytes)
      stats_.peak_allocated_bytes = stats_.allocated_bytes;
    ++stats_.alloc_count;
    ++stats_.live_blocks;
    return p;
  }

  // Returns a block from allocate() to its bin. nullptr is ignored; a pointer this allocator
  // did not hand out throws std::invalid_argument.
  void deallocate(void* p) {
    if (p == nullptr) return;
    std::lock_guard<std::mutex> lock(mu_);
    auto it = live_.find(p);
    if (it == live_.end()) throw std::invalid_argument("CachingAllocator: unknown pointer");
    Live l = it->second;
    live_.erase(it);
    stats_.allocated_bytes -= l.block;
    stats_.requested_bytes -= l.requested;
    --stats_.live_blocks;
    bins_[l.block].push_back(p);
    stats_.cached_bytes += l.block;
  }

  // Frees every cached (not live) block through the raw allocator.
  void empty_cache() {
    std::lock_guard<std::mutex> lock(mu_);
    release_cached_locked();
  }

  AllocatorStats stats() const {
    std::lock_guard<std::mutex> lock(mu_);
    return stats_;
  }

  void reset_peak() {
    std::lock_guard<std::mutex> lock(mu_);
    stats_.peak_allocated_bytes = stats_.allocated_bytes;
  }

  // Block size (class) of a live pointer, 0 if unknown.
  size_t block_size(void* p) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = live_.find(p);
    return it == live_.end() ? 0 : it->second.block;
  }

  // Number of cached blocks per class (for tests and memory_stats()).
  std::map<size_t, size_t> bin_counts() const {
    std::lock_guard<std::mutex> lock(mu_);
    std::map<size_t, size_t> out;
    for (const auto& kv : bins_)
      if (!kv.second.empty()) out[kv.first] = kv.second.size();
    return out;
  }

 private:
  struct Live {
    size_t block, requested;
  };

  void release_cached_locked() {
    for (auto& kv : bins_) {
      for (void* p : kv.second) {
        raw_.free(p);
        ++stats_.raw_free_count;
        stats_.reserved_bytes -= kv.first;
        stats_.cached_bytes -= kv.first;
      }
      kv.second.clear();
    }
    bins_.clear();
  }

  // At destruction: cached blocks and (leaked) live blocks both go back to the raw allocator.
  void release_all() {
    std::lock_guard<std::mutex> lock(mu_);
    release_cached_locked();
    for (auto& kv : live_) raw_.free(kv.first);
    live_.clear();
  }

  RawAlloc raw_;
  mutable std::mutex mu_;
  std::map<size_t, std::vector<void*>> bins_;
  std::unordered_map<void*, Live> live_;
  AllocatorStats stats_;
};

}  // namespace fk_cuda
