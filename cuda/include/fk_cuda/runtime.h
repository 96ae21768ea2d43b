// runtime.h: the CUDA runtime of fkeras._C_cuda (cuda/runtime/): error checking, the stream
// every kernel launches on, and grid helpers (fk_cuda/launch.h).
//
//   FK_CUDA_CHECK(cudaMemcpyAsync(...));        // throws fk_cuda::CudaError naming the call
//   auto c = fk_cuda::launch_config(n, 256);
//   if (c.blocks) { my_kernel<<<c.blocks, c.threads, 0, fk_cuda::stream()>>>(...);
//                   FK_CUDA_CHECK_LAUNCH("my_kernel"); }
//
// CudaError derives from std::runtime_error, which pybind11 turns into Python RuntimeError.
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "fk_cuda/launch.h"

namespace fk_cuda {

// A failed CUDA runtime call: what() is "<call> failed at <file>:<line>: <cudaGetErrorString>
// (<cudaGetErrorName>)". Mapped to Python RuntimeError.
class CudaError : public std::runtime_error {
 public:
  CudaError(cudaError_t code, const std::string& what) : std::runtime_error(what), code_(code) {}
  cudaError_t code() const { return code_; }

 private:
  cudaError_t code_;
};

// Throws CudaError for `err` (clearing CUDA's sticky last-error state first).
[[noreturn]] void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line);

// The stream of the current device: every kernel and copy of fkeras._C_cuda runs on it, so
// work is ordered and the caching allocator may reuse a freed block at once. Created on first
// use (non-blocking with respect to the legacy default stream).
cudaStream_t stream();

// The current CUDA device (cudaGetDevice), checked.
int current_device();

// Waits for all work queued on stream().
void synchronize();

// cudaDeviceProp of the current device, cached.
const cudaDeviceProp& device_properties();

inline dim3 grid_of(const Launch1D& c) { return dim3(c.blocks); }
inline dim3 grid_of(const Launch2D& c) { return dim3(c.grid_x, c.grid_y); }

}  // namespace fk_cuda

#define FK_CUDA_CHECK(call)                                                   \
  do {                                                                        \
    cudaError_t fk_cuda_err_ = (call);                                        \
    if (fk_cuda_err_ != cudaSuccess)                                          \
      ::fk_cuda::throw_cuda_error(fk_cuda_err_, #call, __FILE__, __LINE__);   \
  } while (0)

// After a <<<...>>> launch: checks the launch (bad configuration, missing kernel image).
#define FK_CUDA_CHECK_LAUNCH(kernel_name)                                     \
  do {                                                                        \
    cudaError_t fk_cuda_err_ = cudaGetLastError();                            \
    if (fk_cuda_err_ != cudaSuccess)                                          \
      ::fk_cuda::throw_cuda_error(fk_cuda_err_, "launch of " kernel_name,     \
                                  __FILE__, __LINE__);                        \
  } while (0)
