// batchnorm.cuh: launchers of the CUDA batch-norm kernels (cuda/kernels/batchnorm.cu), the
// mirrors of fkeras._C's batchnorm_forward_train / _forward_infer / _backward (same argument
// order and semantics, see cpp/include/fkeras/kernels.h). Raw device pointers; gamma, beta,
// dx, dgamma, dbeta may be null. `workspace` holds batchnorm_workspace_bytes(...) bytes.
// All work is queued on `stream`; every launch is checked (fk_cuda::CudaError).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace fk_cuda {

size_t batchnorm_workspace_bytes(int64_t outer, int64_t C, int64_t inner);

void batchnorm_forward_train(float* y, float* var, float* mean, float* inv_std, const float* x,
                             const float* gamma, const float* beta, int64_t outer, int64_t C,
                             int64_t inner, float epsilon, void* workspace, cudaStream_t stream);
void batchnorm_forward_infer(float* y, const float* x, const float* mean, const float* var,
                             const float* gamma, const float* beta, int64_t outer, int64_t C,
                             int64_t inner, float epsilon, void* workspace, cudaStream_t stream);
void batchnorm_backward(float* dx, float* dgamma, float* dbeta, const float* dy, const float* x,
                        const float* mean, const float* inv_std, const float* gamma,
                        int64_t outer, int64_t C, int64_t inner, void* workspace,
                        cudaStream_t stream);

}  // namespace fk_cuda
