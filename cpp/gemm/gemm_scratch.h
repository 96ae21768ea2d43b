// gemm_scratch.h: a 64-byte aligned scratch buffer that only grows, for one thread's packed
// panels or temporaries. Portable translation units only (gemm.cpp, dense.cpp): the per-ISA
// files receive pointers, they never include this.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <new>

namespace fk {
namespace gemm_detail {

template <typename T>
class Scratch {
 public:
  Scratch() = default;
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  ~Scratch() { std::free(ptr_); }
  // At least n elements; the contents are not kept when it grows.
  T* get(size_t n) {
    if (n > cap_) {
      std::free(ptr_);
      ptr_ = nullptr;
      cap_ = 0;
      const size_t bytes = ((n * sizeof(T) + 63) / 64) * 64;
      ptr_ = static_cast<T*>(std::aligned_alloc(64, bytes));
      if (!ptr_) throw std::bad_alloc();
      cap_ = bytes / sizeof(T);
    }
    return ptr_;
  }

 private:
  T* ptr_ = nullptr;
  size_t cap_ = 0;
};

}  // namespace gemm_detail
}  // namespace fk
