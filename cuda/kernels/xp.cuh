// xp.cuh: launchers of the array namespace kernels (cuda/kernels/xp.cu) that
// fkeras/backend/cuda_xp.py calls through cuda/bindings/bind_xp.cpp: a broadcasting binary map,
// a unary map, where, an axis reduction and a strided 2-D copy (concatenate and its split).
// Per-element math and index maps: fk_cuda/xp_math.h. Raw device pointers, float32 data; all
// work queued on `stream`, every launch checked (fk_cuda::CudaError).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "fk_cuda/xp_math.h"

namespace fk_cuda {

// An operand of a map: an array walked by the map's strides, or (data == nullptr) a scalar.
struct XpOperand {
  const float* data;
  float value;
};

// out[i] = binary(op, a[map(i)], b[map(i)]) for the n = prod(map.shape) elements of out
// (map: 2 operands, collapsed; out C-contiguous).
void xp_binary(float* out, XpOperand a, XpOperand b, int op, const xp::StridedMap& map,
               cudaStream_t stream);

// out[i] = unary(op, x[i]) for n elements (out may be x).
void xp_unary(float* out, const float* x, int op, int64_t n, cudaStream_t stream);

// out[i] = cond[map(i)] != 0 ? x[map(i)] : y[map(i)] (map: 3 operands; cond float32 when
// cond_bytes == 4, bool/uint8 when 1).
void xp_where(float* out, const void* cond, int cond_bytes, XpOperand x, XpOperand y,
              const xp::StridedMap& map, cudaStream_t stream);

// Floats of double workspace xp_reduce needs for this map (0: none).
int64_t xp_reduce_workspace(const xp::ReduceMap& map);

// out[o] = reduce(op) over r of x[kept(o) + red(r)], accumulated in double, deterministic
// (fixed grids, fixed trees, partials added in order). `workspace` holds
// xp_reduce_workspace(map) doubles. n_red == 0 gives the identity (mean: NaN).
void xp_reduce(float* out, const float* x, int op, const xp::ReduceMap& map, double* workspace,
               cudaStream_t stream);

// dst[r * dst_ld + c] = src[r * src_ld + c] for r < rows, c < cols, elements of elem_bytes
// (1, 2, 4 or 8) bytes.
void xp_copy2d(void* dst, int64_t dst_ld, const void* src, int64_t src_ld, int64_t rows,
               int64_t cols, int elem_bytes, cudaStream_t stream);

}  // namespace fk_cuda
