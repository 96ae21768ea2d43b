// rnn_gemm.cu: the GEMM adapter of the recurrent drivers (fk_cuda::gemm) and their small
// data-movement kernels (contract in rnn_gemm.cuh). Grid-stride loops, bounds-checked for any
// size; the column sums run one thread per column over the rows in order (no atomics).
#include "fk_cuda/gemm.cuh"
#include "fk_cuda/launch.h"
#include "fk_cuda/runtime.h"
#include "rnn_gemm.cuh"

namespace fk_cuda {
namespace rnn_ops {
namespace {

#define FK_GRID_STRIDE(i, total)                                                   \
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;   \
       i < (total); i += static_cast<int64_t>(gridDim.x) * blockDim.x)

__global__ void copy_rows_kernel(float* dst, int64_t ldd, const float* src, int64_t lds,
                                 int64_t rows, int64_t cols) {
  FK_GRID_STRIDE(k, rows * cols) {
    const int64_t r = k / cols, c = k - r * cols;
    dst[r * ldd + c] = src ? src[r * lds + c] : 0.f;
  }
}

__global__ void fill_rows_kernel(float* dst, int64_t ldd, const float* v, int64_t rows,
                                 int64_t cols) {
  FK_GRID_STRIDE(k, rows * cols) {
    const int64_t r = k / cols, c = k - r * cols;
    dst[r * ldd + c] = v ? v[c] : 0.f;
  }
}

__global__ void col_sums_kernel(float* out, const float* src, int64_t lds, int64_t rows,
                                int64_t cols) {
  FK_GRID_STRIDE(c, cols) {
    double s = 0.0;
    for (int64_t r = 0; r < rows; ++r) s += src[r * lds + c];
    out[c] = static_cast<float>(s);
  }
}

__global__ void reverse_time_kernel(float* dst, const float* src, int64_t N, int64_t T,
                                    int64_t W) {
  FK_GRID_STRIDE(k, N * T * W) {
    const int64_t w = k % W, t = (k / W) % T, n = k / (W * T);
    dst[k] = src[(n * T + (T - 1 - t)) * W + w];
  }
}

__global__ void prev_states_kernel(float* hp, const float* hs, const float* h0, const float* r,
                                   int64_t ld_r, int64_t N, int64_t T, int64_t U) {
  FK_GRID_STRIDE(k, N * T * U) {
    const int64_t j = k % U, s = (k / U) % T, n = k / (U * T);
    float v = s ? hs[(n * T + s - 1) * U + j] : (h0 ? h0[n * U + j] : 0.f);
    if (r) v *= r[(n * T + s) * ld_r + j];
    hp[k] = v;
  }
}

#undef FK_GRID_STRIDE

}  // namespace

#define FK_LAUNCH_N(kernel, total, ...)                                 \
  do {                                                                  \
    const Launch1D c_ = launch_config((total), 256);                    \
    if (!c_.blocks) return;                                             \
    kernel<<<c_.blocks, c_.threads, 0, stream>>>(__VA_ARGS__);          \
    FK_CUDA_CHECK_LAUNCH(#kernel);                                      \
  } while (0)

void copy_rows(float* dst, int64_t ldd, const float* src, int64_t lds, int64_t rows,
               int64_t cols, cudaStream_t stream) {
  FK_LAUNCH_N(copy_rows_kernel, rows * cols, dst, ldd, src, lds, rows, cols);
}

void fill_rows(float* dst, int64_t ldd, const float* v, int64_t rows, int64_t cols,
               cudaStream_t stream) {
  FK_LAUNCH_N(fill_rows_kernel, rows * cols, dst, ldd, v, rows, cols);
}

void col_sums(float* out, const float* src, int64_t lds, int64_t rows, int64_t cols,
              cudaStream_t stream) {
  FK_LAUNCH_N(col_sums_kernel, cols, out, src, lds, rows, cols);
}

void reverse_time(float* dst, const float* src, int64_t N, int64_t T, int64_t W,
                  cudaStream_t stream) {
  FK_LAUNCH_N(reverse_time_kernel, N * T * W, dst, src, N, T, W);
}

void prev_states(float* hp, const float* hs, const float* h0, const float* r, int64_t ld_r,
                 int64_t N, int64_t T, int64_t U, cudaStream_t stream) {
  FK_LAUNCH_N(prev_states_kernel, N * T * U, hp, hs, h0, r, ld_r, N, T, U);
}

#undef FK_LAUNCH_N

void gemm(bool ta, bool tb, int64_t M, int64_t Nc, int64_t K, float alpha, const float* A,
          int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc,
          cudaStream_t stream) {
  fk_cuda::gemm(stream, C, A, B, M, Nc, K, ta, tb, alpha, beta, lda, ldb, ldc,
                fk_cuda::allow_tf32());
}

}  // namespace rnn_ops
}  // namespace fk_cuda
