// attention.cuh: launchers of the CUDA fused attention (cuda/kernels/attention.cu), the mirrors
// of fkeras._C's attention_forward / attention_backward (same argument order and semantics,
// cpp/include/fkeras/kernels.h), except that the mask is int32 on the device (nonzero =
// visible; the binding converts NumPy booleans). Raw device pointers; mask may be null.
// `workspace` holds attention_workspace_bytes(...) bytes (delta of the backward, and a global
// scratch when a block's working set exceeds the shared memory a block may have).
// All work is queued on `stream`; every launch is checked (fk_cuda::CudaError).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "fk_cuda/attention_math.h"

namespace fk_cuda {

// Whether `backward` includes the dq/dk/dv passes (else only the forward's needs).
size_t attention_workspace_bytes(const attn::Problem& p, bool backward);

// out (N, Tq, heads, Dv) and lse (N, heads, Tq), both overwritten.
void attention_forward(float* out, float* lse, const float* q, const float* k, const float* v,
                       const attn::Problem& p, void* workspace, cudaStream_t stream);

// dq, dk, dv (shapes of q, k, v), all overwritten.
void attention_backward(float* dq, float* dk, float* dv, const float* dout, const float* q,
                        const float* k, const float* v, const float* out, const float* lse,
                        const attn::Problem& p, void* workspace, cudaStream_t stream);

}  // namespace fk_cuda
