// layernorm.cu: layer normalization over the last axis of a (rows, D) row-major view on the GPU,
// the mirror of cpp/layernorm/layernorm.cpp (contract: cpp/include/fkeras/kernels.h).
//
// Layouts: x, y, dy, dx (rows, D) float32; mean, rstd (rows); gamma, beta, dgamma, dbeta (D).
// Every output is OVERWRITTEN. Saved state: mean (the float32 row mean) and rstd.
//
// Forward: one warp per row for D <= 1024 (8 rows per 256-thread block), one 256-thread block
// per row above; three passes over the row (L1/L2-resident for one row): the float64 sum, the
// float64 centred sums around the float32 mean, then y. Per-row and per-element math in
// fk_cuda/layernorm_math.h (cpp/layernorm/layernorm.cpp's formulas).
// Backward: the same row kernel forms S_dz, S_d, S_dzd in float64 and writes dx, plus the
// per-row shift t of z = fma(x - m, rstd, t) into the workspace; dgamma / dbeta are column sums
// of dy z and dy: a grid of (column blocks, row chunks) writes float64 partials, a second kernel
// adds them in chunk order. No atomics: every sum has a fixed order (bitwise reproducible).
// Sums per thread (strided by the row's thread count) are combined by a fixed xor-shuffle tree,
// then, for block rows, the 8 warp totals in warp order.
#include "fk_cuda/launch.h"
#include "fk_cuda/layernorm_math.h"
#include "fk_cuda/runtime.h"
#include "layernorm.cuh"

namespace fk_cuda {
namespace {

using ln::kBlock;
constexpr int kWarps = kBlock / 32;

template <int N>
struct Vec {
  double v[N];
};

// kT threads per row (32 or kBlock): the row's sums of N float64 values, equal on every thread.
template <int kT, int N>
__device__ Vec<N> row_sum(Vec<N> s, double (*smem)[3]) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1)
#pragma unroll
    for (int i = 0; i < N; ++i) s.v[i] += __shfl_xor_sync(0xffffffffu, s.v[i], o);
  if (kT == 32) return s;
  if ((threadIdx.x & 31) == 0)
#pragma unroll
    for (int i = 0; i < N; ++i) smem[threadIdx.x >> 5][i] = s.v[i];
  __syncthreads();
  Vec<N> t;
#pragma unroll
  for (int i = 0; i < N; ++i) {
    t.v[i] = smem[0][i];
    for (int w = 1; w < kWarps; ++w) t.v[i] += smem[w][i];
  }
  __syncthreads();  // smem is reused by the next sum
  return t;
}

template <int kT>
__device__ __forceinline__ void row_start(int64_t& r, int64_t& step, int& t) {
  if (kT == 32) {
    r = static_cast<int64_t>(blockIdx.x) * kWarps + (threadIdx.x >> 5);
    step = static_cast<int64_t>(gridDim.x) * kWarps;
    t = threadIdx.x & 31;
  } else {
    r = blockIdx.x;
    step = gridDim.x;
    t = threadIdx.x;
  }
}

template <int kT>
__global__ void __launch_bounds__(kBlock)
    forward_kernel(float* __restrict__ y, float* __restrict__ mean, float* __restrict__ rstd,
                   const float* __restrict__ x, const float* __restrict__ gamma,
                   const float* __restrict__ beta, int64_t rows, int64_t D, double eps,
                   bool rms_scaling) {
  __shared__ double smem[kWarps][3];
  int64_t r, step;
  int t;
  row_start<kT>(r, step, t);
  const bool affine = gamma != nullptr || beta != nullptr;
  for (; r < rows; r += step) {
    if (D == 0) {
      if (t == 0) {
        mean[r] = 0.f;
        rstd[r] = ln::empty_rstd(eps);
      }
      continue;
    }
    const float* px = x + r * D;
    Vec<1> s{{0.0}};
    for (int64_t j = t; j < D; j += kT) s.v[0] += static_cast<double>(px[j]);
    const float m_f = ln::row_mean(row_sum<kT, 1>(s, smem).v[0], D);
    Vec<2> c{{0.0, 0.0}};
    for (int64_t j = t; j < D; j += kT) {
      const double d = static_cast<double>(px[j]) - static_cast<double>(m_f);
      c.v[0] += d;
      c.v[1] = fma(d, d, c.v[1]);
    }
    c = row_sum<kT, 2>(c, smem);
    const ln::RowCoeffs k = ln::forward_coeffs(m_f, c.v[0], c.v[1], D, eps, rms_scaling);
    float* py = y + r * D;
    for (int64_t j = t; j < D; j += kT)
      py[j] = ln::forward_elem(px[j], k, gamma ? gamma[j] : 1.f, beta ? beta[j] : 0.f, affine);
    if (t == 0) {
      mean[r] = k.mean;
      rstd[r] = k.rstd;
    }
  }
}

// Per row: the float64 sums, dx (when wanted) and the shift t of z (when row_t is given).
template <int kT>
__global__ void __launch_bounds__(kBlock)
    backward_rows_kernel(float* __restrict__ dx, float* __restrict__ row_t,
                         const float* __restrict__ dy, const float* __restrict__ x,
                         const float* __restrict__ mean, const float* __restrict__ rstd,
                         const float* __restrict__ gamma, int64_t rows, int64_t D,
                         bool rms_scaling) {
  __shared__ double smem[kWarps][3];
  int64_t r, step;
  int t;
  row_start<kT>(r, step, t);
  for (; r < rows; r += step) {
    const float* px = x + r * D;
    const float* pdy = dy + r * D;
    const float m_f = mean[r];
    Vec<3> s{{0.0, 0.0, 0.0}};
    for (int64_t j = t; j < D; j += kT) {
      const double dz = gamma ? ln::dz_elem(pdy[j], gamma[j]) : pdy[j];
      const double d = static_cast<double>(px[j]) - static_cast<double>(m_f);
      s.v[0] += dz;
      s.v[1] += d;
      s.v[2] = fma(dz, d, s.v[2]);
    }
    s = row_sum<kT, 3>(s, smem);
    const ln::BackCoeffs k = ln::backward_coeffs(s.v[0], s.v[1], s.v[2], D, m_f, rstd[r],
                                                 rms_scaling);
    if (dx) {
      float* pdx = dx + r * D;
      for (int64_t j = t; j < D; j += kT)
        pdx[j] = ln::dx_elem(gamma ? ln::dz_elem(pdy[j], gamma[j]) : pdy[j], px[j], m_f, k);
    }
    if (row_t && t == 0) row_t[r] = k.t;
  }
}

// partial (chunks, 2, D): float64 sums of dy (dbeta) and dy z (dgamma) over one row chunk.
__global__ void __launch_bounds__(ln::kColThreads)
    param_partial_kernel(double* __restrict__ partial, const float* __restrict__ dy,
                         const float* __restrict__ x, const float* __restrict__ mean,
                         const float* __restrict__ rstd, const float* __restrict__ row_t,
                         int64_t rows, int64_t D, int64_t len, bool rms_scaling) {
  const int64_t r0 = static_cast<int64_t>(blockIdx.y) * len;
  const int64_t r1 = r0 + len < rows ? r0 + len : rows;
  for (int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < D;
       j += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    double sb = 0.0, sg = 0.0;
    for (int64_t r = r0; r < r1; ++r) {
      ln::BackCoeffs k;
      k.a = rstd[r];
      k.zm = rms_scaling ? 0.f : mean[r];
      k.t = row_t[r];
      const double g = dy[r * D + j];
      sb += g;
      sg = fma(g, static_cast<double>(ln::z_elem(x[r * D + j], k)), sg);
    }
    double* p = partial + static_cast<int64_t>(blockIdx.y) * 2 * D;
    p[j] = sb;
    p[D + j] = sg;
  }
}

__global__ void param_final_kernel(float* dgamma, float* dbeta, const double* partial,
                                   int64_t chunks, int64_t D) {
  for (int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < D;
       j += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    double sb = 0.0, sg = 0.0;
    for (int64_t c = 0; c < chunks; ++c) {
      sb += partial[c * 2 * D + j];
      sg += partial[c * 2 * D + D + j];
    }
    if (dbeta) dbeta[j] = static_cast<float>(sb);
    if (dgamma) dgamma[j] = static_cast<float>(sg);
  }
}

struct Parts {
  int64_t chunks, len;
  size_t row_t, partial;
};

Parts carve(int64_t rows, int64_t D, WorkspaceLayout* ws) {
  Parts p;
  p.chunks = ln::col_chunks(rows, D);
  p.len = ln::col_chunk_len(rows, p.chunks);
  p.row_t = ws->add(sizeof(float) * static_cast<size_t>(rows));
  p.partial = ws->add(sizeof(double) * static_cast<size_t>(2 * D * p.chunks));
  return p;
}

template <class T>
T* at(void* base, size_t off) {
  return reinterpret_cast<T*>(static_cast<char*>(base) + off);
}

unsigned row_blocks(int64_t rows, int64_t D) {
  const int64_t b = ln::threads_per_row(D) == 32 ? ceil_div(rows, kWarps) : rows;
  return static_cast<unsigned>(b < kMaxBlocks1D ? b : kMaxBlocks1D);
}

}  // namespace

size_t layer_norm_workspace_bytes(int64_t rows, int64_t D) {
  WorkspaceLayout ws;
  carve(rows, D, &ws);
  return ws.bytes();
}

void layer_norm_forward(float* y, float* mean, float* rstd, const float* x, const float* gamma,
                        const float* beta, int64_t rows, int64_t D, double epsilon,
                        bool rms_scaling, cudaStream_t stream) {
  if (rows <= 0) return;
  const unsigned blocks = row_blocks(rows, D);
  if (ln::threads_per_row(D) == 32) {
    forward_kernel<32><<<blocks, kBlock, 0, stream>>>(y, mean, rstd, x, gamma, beta, rows, D,
                                                      epsilon, rms_scaling);
    FK_CUDA_CHECK_LAUNCH("layer_norm forward_kernel<32>");
  } else {
    forward_kernel<kBlock><<<blocks, kBlock, 0, stream>>>(y, mean, rstd, x, gamma, beta, rows,
                                                          D, epsilon, rms_scaling);
    FK_CUDA_CHECK_LAUNCH("layer_norm forward_kernel<256>");
  }
}

void layer_norm_backward(float* dx, float* dgamma, float* dbeta, const float* dy, const float* x,
                         const float* mean, const float* rstd, const float* gamma, int64_t rows,
                         int64_t D, bool rms_scaling, void* workspace, cudaStream_t stream) {
  const bool want_params = dgamma != nullptr || dbeta != nullptr;
  if (D <= 0 || (!dx && !want_params)) return;
  WorkspaceLayout ws;
  const Parts p = carve(rows, D, &ws);
  float* row_t = want_params ? at<float>(workspace, p.row_t) : nullptr;
  if (rows > 0) {
    const unsigned blocks = row_blocks(rows, D);
    if (ln::threads_per_row(D) == 32) {
      backward_rows_kernel<32><<<blocks, kBlock, 0, stream>>>(dx, row_t, dy, x, mean, rstd,
                                                              gamma, rows, D, rms_scaling);
      FK_CUDA_CHECK_LAUNCH("layer_norm backward_rows_kernel<32>");
    } else {
      backward_rows_kernel<kBlock><<<blocks, kBlock, 0, stream>>>(dx, row_t, dy, x, mean, rstd,
                                                                  gamma, rows, D, rms_scaling);
      FK_CUDA_CHECK_LAUNCH("layer_norm backward_rows_kernel<256>");
    }
  }
  if (!want_params) return;
  double* partial = at<double>(workspace, p.partial);
  const int64_t cb = ceil_div(D, ln::kColThreads);
  const dim3 grid(static_cast<unsigned>(cb < 65535 ? cb : 65535), static_cast<unsigned>(p.chunks));
  param_partial_kernel<<<grid, ln::kColThreads, 0, stream>>>(partial, dy, x, mean, rstd, row_t,
                                                             rows, D, p.len, rms_scaling);
  FK_CUDA_CHECK_LAUNCH("layer_norm param_partial_kernel");
  const Launch1D f = launch_config(D, 256);
  param_final_kernel<<<f.blocks, f.threads, 0, stream>>>(dgamma, dbeta, partial, p.chunks, D);
  FK_CUDA_CHECK_LAUNCH("layer_norm param_final_kernel");
}

}  // namespace fk_cuda
