// layernorm.cuh: launchers of the CUDA layer-norm kernels (cuda/kernels/layernorm.cu), the
// mirrors of fkeras._C's layer_norm_forward / layer_norm_backward (same argument order and
// semantics, cpp/include/fkeras/kernels.h). Raw device pointers; gamma, beta, dx, dgamma, dbeta
// may be null. `workspace` holds layer_norm_workspace_bytes(rows, D) bytes (backward only).
// All work is queued on `stream`; every launch is checked (fk_cuda::CudaError).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace fk_cuda {

size_t layer_norm_workspace_bytes(int64_t rows, int64_t D);

// x, y (rows, D); mean, rstd (rows); gamma, beta (D). Every output overwritten.
void layer_norm_forward(float* y, float* mean, float* rstd, const float* x, const float* gamma,
                        const float* beta, int64_t rows, int64_t D, double epsilon,
                        bool rms_scaling, cudaStream_t stream);

// dx (rows, D), dgamma, dbeta (D), each optional and overwritten.
void layer_norm_backward(float* dx, float* dgamma, float* dbeta, const float* dy, const float* x,
                         const float* mean, const float* rstd, const float* gamma, int64_t rows,
                         int64_t D, bool rms_scaling, void* workspace, cudaStream_t stream);

}  // namespace fk_cuda
