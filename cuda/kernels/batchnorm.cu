// batchnorm.cu: batch normalization over a tensor viewed as (outer, C, inner) on the GPU, the
// mirror of cpp/batchnorm/batchnorm.cpp (contract: cpp/include/fkeras/kernels.h).
//
// Layouts: x, y, dy, dx (outer, C, inner) row-major float32; mean, var, inv_std, gamma, beta,
// dgamma, dbeta (C). Every output is OVERWRITTEN (none accumulated).
// Saved state: the training forward writes mean (C) and inv_std (C) = 1 / sqrt(var + eps);
// var (C) is the biased batch variance. Empty batch (outer * inner == 0): mean 0, var 0,
// dgamma = dbeta = 0, as on the CPU.
//
// Passes (all per-element and per-channel math in fk_cuda/batchnorm_math.h, shared with the
// CPU tests through fkeras._C_cuda_host):
//   forward (train): 1. stats: grid (C, chunks); each block folds a contiguous chunk of one
//                       channel into 256 float64 Welford states (thread-strided), merges them
//                       by a fixed shared-memory tree and writes one partial;
//                    2. finalize: one thread per channel merges its partials in index order and
//                       writes mean / var / inv_std and the (m, s, t) of y = (x - m) * s + t;
//                    3. apply: grid-stride elementwise.
//   backward (two-pass, so the centred sum is never a difference of large sums):
//                    1. partial sums of dy and x - m, 2. delta = mean(x - m) per channel,
//                    3. partial sums of dy * ((x - m) - delta), 4. coefficients, dgamma, dbeta,
//                    5. dx = a * (dy + b * (x - m) + c) elementwise.
// No float atomics: every sum has a fixed order, so results are bitwise reproducible.
// Performance note: a block reads one channel, so for inner == 1 (channels-last) its loads are
// strided by C; a column-tiled stats pass for small inner would read coalesced rows.
#include "batchnorm.cuh"
#include "fk_cuda/batchnorm_math.h"
#include "fk_cuda/launch.h"
#include "fk_cuda/runtime.h"

namespace fk_cuda {
namespace {

using bn::kStatsThreads;
using bn::Welford;

struct Sum2 {
  double a, b;
};

// Fixed-order tree over the block's kStatsThreads states; returns the total in thread 0.
template <class S, class Merge>
__device__ S block_tree(S v, S* sh, Merge merge) {
  const int t = threadIdx.x;
  sh[t] = v;
  __syncthreads();
  for (int h = kStatsThreads / 2; h > 0; h >>= 1) {
    if (t < h) sh[t] = merge(sh[t], sh[t + h]);
    __syncthreads();
  }
  return sh[0];
}

struct ChunkRange {
  int64_t j0, j1;
};

__device__ ChunkRange chunk_range(int64_t n, int64_t len) {
  const int64_t j0 = static_cast<int64_t>(blockIdx.y) * len;
  return {j0, j0 + len < n ? j0 + len : n};
}

__global__ void __launch_bounds__(kStatsThreads)
    stats_kernel(Welford* partial, const float* __restrict__ x, int64_t n, int64_t C,
                 int64_t inner, int64_t len) {
  __shared__ Welford sh[kStatsThreads];
  const ChunkRange r = chunk_range(n, len);
  for (int64_t c = blockIdx.x; c < C; c += gridDim.x) {
    Welford w = bn::welford_empty();
    for (int64_t j = r.j0 + threadIdx.x; j < r.j1; j += kStatsThreads)
      bn::welford_add(w, x[bn::channel_offset(j, c, C, inner)]);
    const Welford tot = block_tree(w, sh, [](const Welford& a, const Welford& b) {
      return bn::welford_merge(a, b);
    });
    if (threadIdx.x == 0) partial[c * gridDim.y + blockIdx.y] = tot;
    __syncthreads();
  }
}

__global__ void train_finalize_kernel(float* var, float* mean, float* inv_std, float* coef,
                                      const Welford* partial, int64_t chunks, int64_t C,
                                      const float* gamma, const float* beta, float eps) {
  for (int64_t c = blockIdx.x * blockDim.x + threadIdx.x; c < C;
       c += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    Welford w = bn::welford_empty();
    for (int64_t k = 0; k < chunks; ++k) w = bn::welford_merge(w, partial[c * chunks + k]);
    const bn::TrainCoeffs k = bn::train_coeffs(bn::welford_mean(w), bn::welford_var(w),
                                               gamma ? gamma[c] : 1.0, beta ? beta[c] : 0.0, eps);
    mean[c] = k.mean;
    var[c] = k.var;
    inv_std[c] = k.inv_std;
    coef[c] = k.m;
    coef[C + c] = k.s;
    coef[2 * C + c] = k.t;
  }
}

__global__ void infer_coef_kernel(float* coef, const float* mean, const float* var,
                                  const float* gamma, const float* beta, int64_t C, float eps) {
  for (int64_t c = blockIdx.x * blockDim.x + threadIdx.x; c < C;
       c += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    coef[c] = mean[c];
    bn::infer_coeffs(var[c], gamma ? gamma[c] : 1.0, eps, coef + C + c);
    coef[2 * C + c] = beta ? beta[c] : 0.f;
  }
}

// y = (x - m) * s + t; coef = [m; s; t] (3, C).
__global__ void apply_kernel(float* __restrict__ y, const float* __restrict__ x,
                             const float* __restrict__ coef, int64_t total, int64_t C,
                             int64_t inner) {
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t c = (e / inner) % C;
    y[e] = bn::normalize(x[e], coef[c], coef[C + c], coef[2 * C + c]);
  }
}

__global__ void __launch_bounds__(kStatsThreads)
    sums_kernel(Sum2* partial, const float* __restrict__ dy, const float* __restrict__ x,
                const float* __restrict__ mean, int64_t n, int64_t C, int64_t inner,
                int64_t len) {
  __shared__ Sum2 sh[kStatsThreads];
  const ChunkRange r = chunk_range(n, len);
  for (int64_t c = blockIdx.x; c < C; c += gridDim.x) {
    const float m = mean[c];
    Sum2 s{0.0, 0.0};
    for (int64_t j = r.j0 + threadIdx.x; j < r.j1; j += kStatsThreads) {
      const int64_t e = bn::channel_offset(j, c, C, inner);
      s.a += dy[e];
      s.b += static_cast<double>(x[e]) - m;
    }
    const Sum2 tot = block_tree(s, sh, [](const Sum2& p, const Sum2& q) {
      return Sum2{p.a + q.a, p.b + q.b};
    });
    if (threadIdx.x == 0) partial[c * gridDim.y + blockIdx.y] = tot;
    __syncthreads();
  }
}

// Per channel: total (sum_dy, delta = mean(x - m)) into sums (C).
__global__ void delta_kernel(Sum2* sums, const Sum2* partial, int64_t chunks, int64_t C,
                             int64_t n) {
  for (int64_t c = blockIdx.x * blockDim.x + threadIdx.x; c < C;
       c += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    Sum2 s{0.0, 0.0};
    for (int64_t k = 0; k < chunks; ++k) {
      s.a += partial[c * chunks + k].a;
      s.b += partial[c * chunks + k].b;
    }
    sums[c] = Sum2{s.a, n ? s.b / static_cast<double>(n) : 0.0};
  }
}

__global__ void __launch_bounds__(kStatsThreads)
    dot_kernel(double* partial, const float* __restrict__ dy, const float* __restrict__ x,
               const float* __restrict__ mean, const Sum2* __restrict__ sums, int64_t n,
               int64_t C, int64_t inner, int64_t len) {
  __shared__ double sh[kStatsThreads];
  const ChunkRange r = chunk_range(n, len);
  for (int64_t c = blockIdx.x; c < C; c += gridDim.x) {
    const float m = mean[c];
    const double delta = sums[c].b;
    double s = 0.0;
    for (int64_t j = r.j0 + threadIdx.x; j < r.j1; j += kStatsThreads) {
      const int64_t e = bn::channel_offset(j, c, C, inner);
      s += dy[e] * ((static_cast<double>(x[e]) - m) - delta);
    }
    const double tot = block_tree(s, sh, [](double p, double q) { return p + q; });
    if (threadIdx.x == 0) partial[c * gridDim.y + blockIdx.y] = tot;
    __syncthreads();
  }
}

__global__ void backward_finalize_kernel(float* dgamma, float* dbeta, float* coef,
                                         const double* partial, const Sum2* sums,
                                         int64_t chunks, int64_t C, int64_t n,
                                         const float* mean, const float* inv_std,
                                         const float* gamma) {
  for (int64_t c = blockIdx.x * blockDim.x + threadIdx.x; c < C;
       c += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    double dot = 0.0;
    for (int64_t k = 0; k < chunks; ++k) dot += partial[c * chunks + k];
    const bn::BackwardCoeffs k = bn::backward_coeffs(sums[c].a, sums[c].b, dot,
                                                     static_cast<double>(n), inv_std[c],
                                                     gamma ? gamma[c] : 1.0);
    if (dgamma) dgamma[c] = n ? k.dgamma : 0.f;
    if (dbeta) dbeta[c] = n ? k.dbeta : 0.f;
    coef[c] = mean[c];
    coef[C + c] = k.a;
    coef[2 * C + c] = k.b;
    coef[3 * C + c] = k.c;
  }
}

// dx = a * (dy + b * (x - m) + c); coef = [m; a; b; c] (4, C).
__global__ void dx_kernel(float* __restrict__ dx, const float* __restrict__ dy,
                          const float* __restrict__ x, const float* __restrict__ coef,
                          int64_t total, int64_t C, int64_t inner) {
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t c = (e / inner) % C;
    dx[e] = bn::backward_dx(dy[e], x[e], coef[c], coef[C + c], coef[2 * C + c], coef[3 * C + c]);
  }
}

// The workspace's parts: partial states (C * chunks of the largest state), per-channel sums,
// coefficients (4, C).
struct Parts {
  int64_t chunks, len;
  size_t partial, sums, coef;
};

Parts carve(int64_t outer, int64_t C, int64_t inner, WorkspaceLayout* ws) {
  Parts p;
  const int64_t n = outer * inner;
  p.chunks = bn::stats_chunks(n, C);
  p.len = bn::chunk_len(n, p.chunks);
  p.partial = ws->add(sizeof(Welford) * static_cast<size_t>(C * p.chunks));
  p.sums = ws->add(sizeof(Sum2) * static_cast<size_t>(C));
  p.coef = ws->add(sizeof(float) * static_cast<size_t>(4 * C));
  return p;
}

template <class T>
T* at(void* base, size_t off) {
  return reinterpret_cast<T*>(static_cast<char*>(base) + off);
}

// Channels along x (launched first, so blocks that run together read the same rows: for
// channels-last data their strided loads share cache lines in L2), chunks along y (<= 65535).
dim3 stats_grid(const Parts& p, int64_t C) {
  return dim3(static_cast<unsigned>(C < kMaxBlocks1D ? C : kMaxBlocks1D),
              static_cast<unsigned>(p.chunks));
}

void launch_channels(int64_t C, unsigned* blocks) {
  *blocks = launch_config(C, 128).blocks;
}

}  // namespace

size_t batchnorm_workspace_bytes(int64_t outer, int64_t C, int64_t inner) {
  WorkspaceLayout ws;
  carve(outer, C, inner, &ws);
  return ws.bytes();
}

void batchnorm_forward_train(float* y, float* var, float* mean, float* inv_std, const float* x,
                             const float* gamma, const float* beta, int64_t outer, int64_t C,
                             int64_t inner, float epsilon, void* workspace, cudaStream_t stream) {
  if (C <= 0) return;
  WorkspaceLayout ws;
  const Parts p = carve(outer, C, inner, &ws);
  const int64_t n = outer * inner;
  Welford* partial = at<Welford>(workspace, p.partial);
  float* coef = at<float>(workspace, p.coef);
  stats_kernel<<<stats_grid(p, C), kStatsThreads, 0, stream>>>(partial, x, n, C, inner, p.len);
  FK_CUDA_CHECK_LAUNCH("batchnorm stats_kernel");
  unsigned cb;
  launch_channels(C, &cb);
  train_finalize_kernel<<<cb, 128, 0, stream>>>(var, mean, inv_std, coef, partial, p.chunks, C,
                                                gamma, beta, epsilon);
  FK_CUDA_CHECK_LAUNCH("batchnorm train_finalize_kernel");
  const Launch1D a = launch_config(n * C, 256);
  if (!a.blocks) return;
  apply_kernel<<<a.blocks, a.threads, 0, stream>>>(y, x, coef, n * C, C, inner);
  FK_CUDA_CHECK_LAUNCH("batchnorm apply_kernel");
}

void batchnorm_forward_infer(float* y, const float* x, const float* mean, const float* var,
                             const float* gamma, const float* beta, int64_t outer, int64_t C,
                             int64_t inner, float epsilon, void* workspace, cudaStream_t stream) {
  const int64_t total = outer * C * inner;
  if (total <= 0) return;
  WorkspaceLayout ws;
  const Parts p = carve(outer, C, inner, &ws);
  float* coef = at<float>(workspace, p.coef);
  unsigned cb;
  launch_channels(C, &cb);
  infer_coef_kernel<<<cb, 128, 0, stream>>>(coef, mean, var, gamma, beta, C, epsilon);
  FK_CUDA_CHECK_LAUNCH("batchnorm infer_coef_kernel");
  const Launch1D a = launch_config(total, 256);
  apply_kernel<<<a.blocks, a.threads, 0, stream>>>(y, x, coef, total, C, inner);
  FK_CUDA_CHECK_LAUNCH("batchnorm apply_kernel");
}

void batchnorm_backward(float* dx, float* dgamma, float* dbeta, const float* dy, const float* x,
                        const float* mean, const float* inv_std, const float* gamma,
                        int64_t outer, int64_t C, int64_t inner, void* workspace,
                        cudaStream_t stream) {
  if (C <= 0 || (!dx && !dgamma && !dbeta)) return;
  WorkspaceLayout ws;
  const Parts p = carve(outer, C, inner, &ws);
  const int64_t n = outer * inner;
  Sum2* sums = at<Sum2>(workspace, p.sums);
  float* coef = at<float>(workspace, p.coef);
  unsigned cb;
  launch_channels(C, &cb);
  sums_kernel<<<stats_grid(p, C), kStatsThreads, 0, stream>>>(
      at<Sum2>(workspace, p.partial), dy, x, mean, n, C, inner, p.len);
  FK_CUDA_CHECK_LAUNCH("batchnorm sums_kernel");
  delta_kernel<<<cb, 128, 0, stream>>>(sums, at<Sum2>(workspace, p.partial), p.chunks, C, n);
  FK_CUDA_CHECK_LAUNCH("batchnorm delta_kernel");
  dot_kernel<<<stats_grid(p, C), kStatsThreads, 0, stream>>>(
      at<double>(workspace, p.partial), dy, x, mean, sums, n, C, inner, p.len);
  FK_CUDA_CHECK_LAUNCH("batchnorm dot_kernel");
  backward_finalize_kernel<<<cb, 128, 0, stream>>>(dgamma, dbeta, coef,
                                                   at<double>(workspace, p.partial), sums,
                                                   p.chunks, C, n, mean, inv_std, gamma);
  FK_CUDA_CHECK_LAUNCH("batchnorm backward_finalize_kernel");
  if (!dx || n == 0) return;
  const Launch1D a = launch_config(n * C, 256);
  dx_kernel<<<a.blocks, a.threads, 0, stream>>>(dx, dy, x, coef, n * C, C, inner);
  FK_CUDA_CHECK_LAUNCH("batchnorm dx_kernel");
}

}  // namespace fk_cuda
