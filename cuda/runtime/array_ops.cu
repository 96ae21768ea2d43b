// array_ops.cu: fill (a grid-stride store of one value) and the float32 sum.
#include "array_ops.h"

#include <cuda_fp16.h>

#include "fk_cuda/launch.h"
#include "fk_cuda/runtime.h"

namespace fk_cuda {
namespace {

template <class T>
__global__ void fill_kernel(T* p, int64_t n, T value) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    p[i] = value;
}

template <class T>
void fill_as(void* p, int64_t n, T value, cudaStream_t s) {
  Launch1D c = launch_config(n, 256);
  fill_kernel<T><<<c.blocks, c.threads, 0, s>>>(static_cast<T*>(p), n, value);
  FK_CUDA_CHECK_LAUNCH("fill_kernel");
}

__global__ void add_kernel(float* out, const float* a, const float* b, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    out[i] = a[i] + b[i];
}

__global__ void axpby_kernel(float* out, const float* a, const float* b, float alpha, float beta,
                             int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    out[i] = __fadd_rn(__fmul_rn(a[i], alpha), __fmul_rn(b[i], beta));  // no FMA contraction
}

__global__ void scale_kernel(float* out, const float* a, float alpha, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    out[i] = a[i] * alpha;
}

constexpr int kSumThreads = 256;

// Block b adds a[b], a[b + B * T], ... per thread, then a fixed tree over its threads.
__global__ void sum_partials_kernel(double* partials, const float* a, int64_t n) {
  __shared__ double acc[kSumThreads];
  double v = 0.0;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(kSumThreads) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * kSumThreads)
    v += static_cast<double>(a[i]);
  acc[threadIdx.x] = v;
  __syncthreads();
  for (int w = kSumThreads / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) acc[threadIdx.x] += acc[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) partials[blockIdx.x] = acc[0];
}

__global__ void sum_final_kernel(float* out, const double* partials, int count, double alpha) {
  __shared__ double acc[kSumThreads];
  double v = 0.0;
  for (int i = threadIdx.x; i < count; i += kSumThreads) v += partials[i];
  acc[threadIdx.x] = v;
  __syncthreads();
  for (int w = kSumThreads / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) acc[threadIdx.x] += acc[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) *out = static_cast<float>(alpha * acc[0]);
}

__global__ void broadcast_scalar_kernel(float* out, const float* src, double alpha, int64_t n) {
  const float v = static_cast<float>(alpha * static_cast<double>(*src));
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    out[i] = v;
}

}  // namespace

void launch_sum(float* out, const float* a, int64_t n, double alpha, double* partials,
                cudaStream_t s) {
  sum_partials_kernel<<<kSumBlocks, kSumThreads, 0, s>>>(partials, a, n);
  FK_CUDA_CHECK_LAUNCH("sum_partials_kernel");
  sum_final_kernel<<<1, kSumThreads, 0, s>>>(out, partials, kSumBlocks, alpha);
  FK_CUDA_CHECK_LAUNCH("sum_final_kernel");
}

void launch_axpby(float* out, const float* a, const float* b, float alpha, float beta, int64_t n,
                  cudaStream_t s) {
  if (n <= 0) return;
  Launch1D c = launch_config(n, 256);
  axpby_kernel<<<c.blocks, c.threads, 0, s>>>(out, a, b, alpha, beta, n);
  FK_CUDA_CHECK_LAUNCH("axpby_kernel");
}

void launch_scale(float* out, const float* a, float alpha, int64_t n, cudaStream_t s) {
  if (n <= 0) return;
  Launch1D c = launch_config(n, 256);
  scale_kernel<<<c.blocks, c.threads, 0, s>>>(out, a, alpha, n);
  FK_CUDA_CHECK_LAUNCH("scale_kernel");
}

void launch_broadcast_scalar(float* out, const float* src, double alpha, int64_t n,
                             cudaStream_t s) {
  if (n <= 0) return;
  Launch1D c = launch_config(n, 256);
  broadcast_scalar_kernel<<<c.blocks, c.threads, 0, s>>>(out, src, alpha, n);
  FK_CUDA_CHECK_LAUNCH("broadcast_scalar_kernel");
}

void launch_add(float* out, const float* a, const float* b, int64_t n, cudaStream_t s) {
  if (n <= 0) return;
  Launch1D c = launch_config(n, 256);
  add_kernel<<<c.blocks, c.threads, 0, s>>>(out, a, b, n);
  FK_CUDA_CHECK_LAUNCH("add_kernel");
}

void launch_fill(void* p, int64_t n, DType dtype, double value, cudaStream_t s) {
  switch (dtype) {
    case DType::Float32: fill_as<float>(p, n, static_cast<float>(value), s); break;
    case DType::Int32: fill_as<int32_t>(p, n, static_cast<int32_t>(value), s); break;
    case DType::Int64: fill_as<int64_t>(p, n, static_cast<int64_t>(value), s); break;
    case DType::Float64: fill_as<double>(p, n, value, s); break;
    case DType::Bool: fill_as<uint8_t>(p, n, static_cast<uint8_t>(value != 0.0), s); break;
    case DType::UInt8: fill_as<uint8_t>(p, n, static_cast<uint8_t>(value), s); break;
    case DType::Int8: fill_as<int8_t>(p, n, static_cast<int8_t>(value), s); break;
    case DType::Int16: fill_as<int16_t>(p, n, static_cast<int16_t>(value), s); break;
    case DType::UInt16: fill_as<uint16_t>(p, n, static_cast<uint16_t>(value), s); break;
    case DType::UInt32: fill_as<uint32_t>(p, n, static_cast<uint32_t>(value), s); break;
    case DType::UInt64: fill_as<uint64_t>(p, n, static_cast<uint64_t>(value), s); break;
    case DType::Float16: fill_as<__half>(p, n, __double2half(value), s); break;
  }
}

}  // namespace fk_cuda
