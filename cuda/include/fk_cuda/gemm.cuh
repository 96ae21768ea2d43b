// gemm.cuh: launchers of the CUDA GEMM family (row-major float32), on a given stream.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace fk_cuda {

// C (M x N, ldc) = act(alpha * op(A) @ op(B) + beta * C + bias) with op(A) M x K (A is M x K,
// lda, or K x M when trans_a), op(B) K x N (B is K x N, ldb, or N x K when trans_b). beta == 0
// never reads C; bias (N) may be null; act is an fk activation code (kLinear = 0) with its
// alpha. allow_tf32 selects the TF32 tensor-core kernel on sm_80+ (inputs rounded to TF32,
// FP32 accumulation); otherwise exact FP32. Any sizes >= 0 and leading dimensions.
void gemm_ex(cudaStream_t stream, float* C, const float* A, const float* B, int64_t M, int64_t N,
             int64_t K, bool trans_a, bool trans_b, float alpha, float beta, int64_t lda,
             int64_t ldb, int64_t ldc, bool allow_tf32, const float* bias, int64_t act,
             float act_alpha);

// Plain GEMM: gemm_ex with no bias and a linear epilogue.
void gemm(cudaStream_t stream, float* C, const float* A, const float* B, int64_t M, int64_t N,
          int64_t K, bool trans_a, bool trans_b, float alpha, float beta, int64_t lda,
          int64_t ldb, int64_t ldc, bool allow_tf32);

// Process-wide matmul precision: "highest" (exact FP32, default) or "high" (TF32 allowed).
void set_allow_tf32(bool allow);
bool allow_tf32();

// Dense backward's elementwise part: dz (M x N) = dy * act'(y) and dbias (N) = column sums of
// dz (deterministic, summed in float64 per column). dz or dbias may be null.
void dense_dz_colsum(cudaStream_t stream, float* dz, float* dbias, const float* dy,
                     const float* y, int64_t M, int64_t N, int64_t act, float act_alpha);

}  // namespace fk_cuda
