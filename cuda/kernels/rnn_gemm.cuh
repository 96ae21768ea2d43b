// rnn_gemm.cuh: what the CUDA recurrent drivers (rnn_seq.cu) need from the GEMM helper, and
// the small data-movement kernels around it (rnn_gemm.cu).
//
// The recurrent drivers use the shared GEMM (fk_cuda/gemm.cuh, the GEMM family's; never a GEMM
// of their own): rnn_ops::gemm forwards to fk_cuda::gemm with the process-wide TF32 setting.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#if __has_include("fk_cuda/gemm.cuh") || defined(FK_CUDA_RNN_FORCE)
#define FK_CUDA_RNN_ENABLED 1
#endif

namespace fk_cuda {
namespace rnn_ops {

// Row-major C (M, Nc; ldc) = alpha * op(A) @ op(B) + beta * C with op(A) (M, K), op(B) (K, Nc);
// ta / tb: A is stored (K, M) / B is stored (Nc, K). K == 0 gives beta * C.
void gemm(bool ta, bool tb, int64_t M, int64_t Nc, int64_t K, float alpha, const float* A,
          int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc,
          cudaStream_t stream);

// dst (rows, cols; ldd) = src (rows, cols; lds), or zeros where src is null.
void copy_rows(float* dst, int64_t ldd, const float* src, int64_t lds, int64_t rows,
               int64_t cols, cudaStream_t stream);
// Every row of dst (rows, cols; ldd) = v (cols), or 0 where v is null.
void fill_rows(float* dst, int64_t ldd, const float* v, int64_t rows, int64_t cols,
               cudaStream_t stream);
// out (cols) = sum over the rows of src (rows, cols; lds), float64 in row order (deterministic).
void col_sums(float* out, const float* src, int64_t lds, int64_t rows, int64_t cols,
              cudaStream_t stream);
// dst (N, T, W) = src (N, T, W) with time reversed (dst[:, t] = src[:, T-1-t]).
void reverse_time(float* dst, const float* src, int64_t N, int64_t T, int64_t W,
                  cudaStream_t stream);
// hp (N, T, U): the state entering each step, h0 for step 0 then hs[:, s-1]; with r (N, T, U;
// ld_r) not null, multiplied by it (GRU's r * h_prev).
void prev_states(float* hp, const float* hs, const float* h0, const float* r, int64_t ld_r,
                 int64_t N, int64_t T, int64_t U, cudaStream_t stream);

}  // namespace rnn_ops
}  // namespace fk_cuda
