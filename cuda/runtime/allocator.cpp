// allocator.cpp: device allocators and the pinned staging buffer.
#include "allocator.h"

#include <mutex>
#include <vector>

#include "fk_cuda/runtime.h"

namespace fk_cuda {

void* CudaMallocFree::allocate(size_t n) {
  int prev = 0;
  FK_CUDA_CHECK(cudaGetDevice(&prev));
  if (prev != device) FK_CUDA_CHECK(cudaSetDevice(device));
  void* p = nullptr;
  cudaError_t err = cudaMalloc(&p, n);
  if (prev != device) cudaSetDevice(prev);
  if (err == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    return nullptr;
  }
  if (err != cudaSuccess) throw_cuda_error(err, "cudaMalloc", __FILE__, __LINE__);
  return p;
}

void CudaMallocFree::free(void* p) {
  cudaError_t err = cudaFree(p);
  if (err == cudaErrorCudartUnloading) {  // process exit: the driver frees everything
    cudaGetLastError();
    return;
  }
  if (err != cudaSuccess) throw_cuda_error(err, "cudaFree", __FILE__, __LINE__);
}

namespace {
std::mutex g_mu;
std::vector<DeviceAllocator*> g_allocators;
void* g_pinned = nullptr;
size_t g_pinned_bytes = 0;
}  // namespace

DeviceAllocator& device_allocator(int d) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (static_cast<int>(g_allocators.size()) <= d) g_allocators.resize(d + 1, nullptr);
  if (g_allocators[d] == nullptr) {
    CudaMallocFree raw;
    raw.device = d;
    g_allocators[d] = new DeviceAllocator(raw);  // intentionally never deleted
  }
  return *g_allocators[d];
}

void* pinned_staging(size_t bytes) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (bytes > g_pinned_bytes) {
    if (g_pinned != nullptr) FK_CUDA_CHECK(cudaFreeHost(g_pinned));
    g_pinned = nullptr;
    g_pinned_bytes = 0;
    size_t n = align_up(bytes, size_t(1) << 20);
    FK_CUDA_CHECK(cudaHostAlloc(&g_pinned, n, cudaHostAllocDefault));
    g_pinned_bytes = n;
  }
  return g_pinned;
}

}  // namespace fk_cuda
