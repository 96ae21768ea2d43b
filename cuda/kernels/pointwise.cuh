// pointwise.cuh: launchers of the CUDA pointwise family, named and ordered as fkeras._C's CPU
// kernels (outputs, saved state, inputs, sizes), plus a trailing stream. Raw device pointers;
// shapes and codes are validated by the bindings (cuda/bindings/bind_pointwise.cpp) before any
// launch. Every output is OVERWRITTEN (optimizer params and slots are read and written in
// place). Each launcher checks its launch (FK_CUDA_CHECK_LAUNCH) and throws fk_cuda::CudaError.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "fk_cuda/optimizer_math.h"

namespace fk_cuda {

// ---- elementwise (pointwise.cu) -------------------------------------------------------------
void activation_forward(float* y, const float* x, int64_t n, int64_t act, float alpha,
                        cudaStream_t s);
void activation_backward(float* dx, const float* dy, const float* x, const float* y, int64_t n,
                         int64_t act, float alpha, cudaStream_t s);
void bias_add_forward(float* y, const float* x, const float* b, int64_t rows, int64_t cols,
                      cudaStream_t s);
// Deterministic: row chunks write double partial column sums into `workspace`
// (bias_add_backward_workspace bytes), a second pass adds them in chunk order. No atomics.
size_t bias_add_backward_workspace(int64_t rows, int64_t cols);
void bias_add_backward(float* db, const float* dy, int64_t rows, int64_t cols, void* workspace,
                       cudaStream_t s);
void dropout_forward(float* y, float* mask, const float* x, int64_t n, float rate, int64_t seed,
                     cudaStream_t s);
void dropout_backward(float* dx, const float* dy, const float* mask, int64_t n, cudaStream_t s);
void embedding_forward(float* y, const int64_t* indices, const float* table, int64_t n,
                       int64_t V, int64_t D, cudaStream_t s);
// Deterministic: a stable radix sort of (index, position) pairs (CUB), then one warp per run of
// equal indices adds the dy rows in position order, in float, exactly as the CPU kernel does
// (same additions in the same order: bit-equal). Rows no index hits are zeroed.
// Index range check of indices (n) against [0, V) on the device: returns the first position
// whose index is out of range (and its value in *bad_value), or -1. `scratch` holds 8 bytes.
// Synchronizes the stream (the bindings raise before the kernel that would read out of range).
int64_t find_bad_index(const int64_t* indices, int64_t n, int64_t V, void* scratch,
                       int64_t* bad_value, cudaStream_t s);
size_t embedding_backward_workspace(int64_t n, int64_t V);
void embedding_backward(float* dtable, const float* dy, const int64_t* indices, int64_t n,
                        int64_t V, int64_t D, void* workspace, size_t workspace_bytes,
                        cudaStream_t s);

// ---- optimizers (pointwise.cu); null optional slots as fkeras._C ------------------------------
void sgd_update(float* param, float* velocity, const float* grad, int64_t n, const SgdArgs& a,
                cudaStream_t s);
void adam_update(float* param, float* m, float* v, float* vhat, const float* grad, int64_t n,
                 const AdamArgs& a, cudaStream_t s);
void adamax_update(float* param, float* m, float* u, const float* grad, int64_t n,
                   const AdamaxArgs& a, cudaStream_t s);
void nadam_update(float* param, float* m, float* v, const float* grad, int64_t n,
                  const NadamArgs& a, cudaStream_t s);
void rmsprop_update(float* param, float* velocity, float* momentum_buf, float* average_grad,
                    const float* grad, int64_t n, const RmspropArgs& a, cudaStream_t s);
void adagrad_update(float* param, float* accumulator, const float* grad, int64_t n,
                    const AdagradArgs& a, cudaStream_t s);
void adadelta_update(float* param, float* accumulated_grad, float* accumulated_delta,
                     const float* grad, int64_t n, const AdadeltaArgs& a, cudaStream_t s);

// ---- row kernels (rows.cu): a warp per row for cols <= kWarpRowCols, else a block per row ---
constexpr int64_t kWarpRowCols = 1024;
void softmax_forward(float* y, const float* x, int64_t rows, int64_t cols, cudaStream_t s);
void softmax_backward(float* dx, const float* dy, const float* y, int64_t rows, int64_t cols,
                      cudaStream_t s);
void log_softmax_forward(float* y, const float* x, int64_t rows, int64_t cols, cudaStream_t s);
void log_softmax_backward(float* dx, const float* dy, const float* y, int64_t rows, int64_t cols,
                          cudaStream_t s);
void softmax_crossentropy_forward(float* loss, float* probs, const float* logits,
                                  const float* labels, int64_t rows, int64_t cols,
                                  cudaStream_t s);
void softmax_crossentropy_backward(float* dlogits, const float* dloss, const float* probs,
                                   const float* labels, int64_t rows, int64_t cols,
                                   cudaStream_t s);
void sparse_softmax_crossentropy_forward(float* loss, float* probs, const float* logits,
                                         const int64_t* labels, int64_t rows, int64_t cols,
                                         cudaStream_t s);
void sparse_softmax_crossentropy_backward(float* dlogits, const float* dloss, const float* probs,
                                          const int64_t* labels, int64_t rows, int64_t cols,
                                          cudaStream_t s);
void sigmoid_crossentropy_forward(float* loss, const float* logits, const float* labels,
                                  int64_t n, cudaStream_t s);
void sigmoid_crossentropy_backward(float* dlogits, const float* dloss, const float* logits,
                                   const float* labels, int64_t n, cudaStream_t s);

}  // namespace fk_cuda
