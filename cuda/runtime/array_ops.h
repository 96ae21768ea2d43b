// array_ops.h: the kernels of the device buffer protocol: fill (DeviceArray::fill, any storage
// dtype) and the float32 sum the tape accumulates gradients with.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "fk_cuda/device_array.h"

namespace fk_cuda {

// Sets the n elements of dtype `dtype` at `p` to `value` (converted as a C cast does), on `s`.
void launch_fill(void* p, int64_t n, DType dtype, double value, cudaStream_t s);

// out[i] = a[i] + b[i] for n float32 elements (out may alias a or b), on `s`.
void launch_add(float* out, const float* a, const float* b, int64_t n, cudaStream_t s);

// out[i] = alpha * a[i] + beta * b[i] in float32, each product rounded before the sum (as
// NumPy computes `a * alpha + b * beta` on float32 arrays with Python floats).
void launch_axpby(float* out, const float* a, const float* b, float alpha, float beta, int64_t n,
                  cudaStream_t s);

// out[i] = alpha * a[i] in float32 (out may alias a).
void launch_scale(float* out, const float* a, float alpha, int64_t n, cudaStream_t s);

// Partial-sum blocks of launch_sum (its workspace holds this many doubles).
constexpr int kSumBlocks = 256;

// *out = alpha * sum(a[0..n)) in float64, deterministic (a fixed grid of kSumBlocks blocks,
// fixed shared-memory trees, partials added in block order); `partials` holds kSumBlocks
// doubles.
void launch_sum(float* out, const float* a, int64_t n, double alpha, double* partials,
                cudaStream_t s);

// out[i] = alpha * src[0] for n elements (a device scalar broadcast, no host round trip).
void launch_broadcast_scalar(float* out, const float* src, double alpha, int64_t n,
                             cudaStream_t s);

}  // namespace fk_cuda
