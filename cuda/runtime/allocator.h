// allocator.h: the device caching allocators (fk_cuda::CachingAllocator over cudaMalloc /
// cudaFree, one per device) and the pinned host staging buffer for batch uploads.
#pragma once

#include <cstddef>

#include "fk_cuda/caching_allocator.h"

namespace fk_cuda {

struct CudaMallocFree {
  int device = 0;
  void* allocate(size_t n);  // nullptr on cudaErrorMemoryAllocation; throws on other errors
  void free(void* p);        // errors ignored only when the driver is shutting down
};

using DeviceAllocator = CachingAllocator<CudaMallocFree>;

// The allocator of device `d` (created on first use, never destroyed: blocks outlive Python
// objects at interpreter exit, and the CUDA context may already be gone).
DeviceAllocator& device_allocator(int d);

// A pinned (page-locked) host buffer of at least `bytes`, grown as needed and reused; callers
// must synchronize the stream before the next call reuses it.
void* pinned_staging(size_t bytes);

}  // namespace fk_cuda
