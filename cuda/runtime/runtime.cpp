// runtime.cpp: CUDA error reporting, the per-device stream, device properties.
#include "fk_cuda/runtime.h"

#include <mutex>
#include <string>
#include <vector>

namespace fk_cuda {

void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line) {
  cudaGetLastError();  // clear a non-sticky error so the next call starts clean
  std::string msg = std::string(call) + " failed at " + file + ":" + std::to_string(line) +
                    ": " + cudaGetErrorString(err) + " (" + cudaGetErrorName(err) + ")";
  throw CudaError(err, msg);
}

int current_device() {
  int d = 0;
  FK_CUDA_CHECK(cudaGetDevice(&d));
  return d;
}

namespace {
std::mutex g_mu;
std::vector<cudaStream_t> g_streams;      // one per device, created on first use, never freed
std::vector<cudaDeviceProp*> g_props;
}  // namespace

cudaStream_t stream() {
  int d = current_device();
  std::lock_guard<std::mutex> lock(g_mu);
  if (static_cast<int>(g_streams.size()) <= d) g_streams.resize(d + 1, nullptr);
  if (g_streams[d] == nullptr) {
    cudaStream_t s;
    FK_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    g_streams[d] = s;
  }
  return g_streams[d];
}

void synchronize() { FK_CUDA_CHECK(cudaStreamSynchronize(stream())); }

const cudaDeviceProp& device_properties() {
  int d = current_device();
  std::lock_guard<std::mutex> lock(g_mu);
  if (static_cast<int>(g_props.size()) <= d) g_props.resize(d + 1, nullptr);
  if (g_props[d] == nullptr) {
    auto* p = new cudaDeviceProp;
    FK_CUDA_CHECK(cudaGetDeviceProperties(p, d));
    g_props[d] = p;
  }
  return *g_props[d];
}

}  // namespace fk_cuda
