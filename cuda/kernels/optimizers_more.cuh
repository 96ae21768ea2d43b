// optimizers_more.cuh: launchers of the Lion, Ftrl, Lamb, Adafactor, Muon and
// ScheduleFreeAdamW updates (cuda/kernels/optimizers_more.cu), the mirrors of fkeras._C's
// *_update kernels (kernels.h). Flat float32 device buffers of n elements; param and every slot
// are READ AND WRITTEN in place, grad / ortho are read only. The Args come from
// fk_cuda/optimizer_more_math.h's make_*_args. Lamb and Adafactor need
// optimizer_more_workspace_bytes(n) bytes of workspace (block partial sums + step scalars).
// All work is queued on `stream`; every launch is checked (fk_cuda::CudaError).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "fk_cuda/optimizer_more_math.h"

namespace fk_cuda {

size_t optimizer_more_workspace_bytes(int64_t n);

void lion_update(float* param, float* m, const float* grad, int64_t n, const LionArgs& a,
                 cudaStream_t s);
void ftrl_update(float* param, float* accumulator, float* linear, const float* grad, int64_t n,
                 const FtrlArgs& a, cudaStream_t s);
void lamb_update(float* param, float* m, float* v, const float* grad, int64_t n,
                 const LambArgs& a, void* workspace, cudaStream_t s);
void adafactor_update(float* param, float* v, const float* grad, int64_t n,
                      const AdafactorArgs& a, void* workspace, cudaStream_t s);
void muon_momentum_update(float* m, float* out, const float* grad, int64_t n, const MuonArgs& a,
                          cudaStream_t s);
void muon_update(float* param, const float* ortho, int64_t n, const MuonArgs& a, cudaStream_t s);
void schedule_free_adamw_update(float* param, float* z, float* v, const float* grad, int64_t n,
                                const SfAdamwArgs& a, cudaStream_t s);

}  // namespace fk_cuda
