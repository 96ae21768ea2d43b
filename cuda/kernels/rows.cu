// rows.cu: softmax, log_softmax and the softmax crossentropies over the last axis of a
// (rows, cols) row-major view. Rows of cols <= kWarpRowCols get one warp each (8 rows per
// 256-thread block), longer rows one 256-thread block each; both grid-stride over rows.
//
// Numerics as the CPU (cpp/elementwise/softmax.inc, losses.inc; terms in fk_cuda/loss_math.h):
// the row max m first (NaN-ignoring, the exp pass then turns a NaN input into a NaN row), exp
// of x - m <= 0, sums of exp and dot products accumulated per thread in double and reduced by
// a fixed shuffle / shared-memory tree: deterministic (no atomics), independent of timing.
#include <cstdint>

#include "fk_cuda/activation_math.h"
#include "fk_cuda/launch.h"
#include "fk_cuda/loss_math.h"
#include "fk_cuda/runtime.h"
#include "kernels/pointwise.cuh"

namespace fk_cuda {
namespace {

constexpr int kBlock = 256;
constexpr int kWarps = kBlock / 32;

// kT threads per row: 32 (a warp) or kBlock (the whole block).
template <int kT>
struct Row {
  int t;          // thread index within the row
  double* smem;   // kWarps doubles (block variant)

  __device__ float max(float v) const {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
      const float w = __shfl_xor_sync(0xffffffffu, v, o);
      v = w > v ? w : v;
    }
    if (kT == 32) return v;
    if ((threadIdx.x & 31) == 0) smem[threadIdx.x >> 5] = v;
    __syncthreads();
    float m = static_cast<float>(smem[0]);
    for (int w = 1; w < kWarps; ++w) {
      const float x = static_cast<float>(smem[w]);
      m = x > m ? x : m;
    }
    __syncthreads();
    return m;
  }

  __device__ double sum(double v) const {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    if (kT == 32) return v;
    if ((threadIdx.x & 31) == 0) smem[threadIdx.x >> 5] = v;
    __syncthreads();
    double s = 0.0;
    for (int w = 0; w < kWarps; ++w) s += smem[w];
    __syncthreads();
    return s;
  }
};

// Row r handled by this thread group and the group's thread index; rows stride by `step`.
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
__device__ float row_max(const Row<kT>& R, const float* x, int64_t cols) {
  float m = -__int_as_float(0x7f800000);
  for (int64_t i = R.t; i < cols; i += kT) m = x[i] > m ? x[i] : m;
  return R.max(m);
}

template <int kT>
__device__ double row_exp_sum(const Row<kT>& R, const float* x, int64_t cols, float m) {
  double s = 0.0;
  for (int64_t i = R.t; i < cols; i += kT) s += softmax_exp_term(x[i], m);
  return R.sum(s);
}

// Sum of a * b over the row (b null: of a).
template <int kT>
__device__ double row_dot(const Row<kT>& R, const float* a, const float* b, int64_t cols) {
  double s = 0.0;
  for (int64_t i = R.t; i < cols; i += kT) s += b ? a[i] * b[i] : a[i];
  return R.sum(s);
}

// NOTE: every thread of a block runs the same number of row iterations in the block variant
// (r is uniform), and the warp variant only shuffles within the warp: the __syncthreads and
// full-mask shuffles are reached by all threads they name.

template <int kT>
__global__ void softmax_fwd_kernel(float* y, const float* x, int64_t rows, int64_t cols) {
  __shared__ double smem[kWarps];
  int64_t r, step;
  int t;
  row_start<kT>(r, step, t);
  const Row<kT> R{t, smem};
  for (; r < rows; r += step) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    const float m = row_max(R, xr, cols);
    const float inv = static_cast<float>(1.0 / row_exp_sum(R, xr, cols, m));
    for (int64_t i = t; i < cols; i += kT) yr[i] = softmax_exp_term(xr[i], m) * inv;
  }
}

template <int kT>
__global__ void log_softmax_fwd_kernel(float* y, const float* x, int64_t rows, int64_t cols) {
  __shared__ double smem[kWarps];
  int64_t r, step;
  int t;
  row_start<kT>(r, step, t);
  const Row<kT> R{t, smem};
  for (; r < rows; r += step) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    const float m = row_max(R, xr, cols);
    const float lse = static_cast<float>(log(row_exp_sum(R, xr, cols, m)));
    for (int64_t i = t; i < cols; i += kT) yr[i] = log_softmax_term(xr[i], m, lse);
  }
}

template <int kT>
__global__ void softmax_bwd_kernel(float* dx, const float* dy, const float* y, int64_t rows,
                                   int64_t cols) {
  __shared__ double smem[kWarps];
  int64_t r, step;
  int t;
  row_start<kT>(r, step, t);
  const Row<kT> R{t, smem};
  for (; r < rows; r += step) {
    const float* dyr = dy + r * cols;
    const float* yr = y + r * cols;
    float* dxr = dx + r * cols;
    const float dot = static_cast<float>(row_dot(R, dyr, yr, cols));
    for (int64_t i = t; i < cols; i += kT) dxr[i] = softmax_grad_term(dyr[i], yr[i], dot);
  }
}

template <int kT>
__global__ void log_softmax_bwd_kernel(float* dx, const float* dy, const float* y, int64_t rows,
                                       int64_t cols) {
  __shared__ double smem[kWarps];
  int64_t r, step;
  int t;
  row_start<kT>(r, step, t);
  const Row<kT> R{t, smem};
  for (; r < rows; r += step) {
    const float* dyr = dy + r * cols;
    const float* yr = y + r * cols;
    float* dxr = dx + r * cols;
    const float sum = static_cast<float>(row_dot(R, dyr, static_cast<const float*>(nullptr), cols));
    for (int64_t i = t; i < cols; i += kT) dxr[i] = log_softmax_grad_term(dyr[i], yr[i], sum);
  }
}

// Writes probs = softmax(l) and returns log(sum exp(l - m)); *m = the row max.
template <int kT>
__device__ double softmax_into(const Row<kT>& R, float* pr, const float* lr, int64_t cols,
                               float* m) {
  *m = row_max(R, lr, cols);
  const double s = row_exp_sum(R, lr, cols, *m);
  const float inv = static_cast<float>(1.0 / s);
  for (int64_t i = R.t; i < cols; i += kT) pr[i] = softmax_exp_term(lr[i], *m) * inv;
  return log(s);
}

template <int kT>
__global__ void softmax_ce_fwd_kernel(float* loss, float* probs, const float* logits,
                                      const float* labels, int64_t rows, int64_t cols) {
  __shared__ double smem[kWarps];
  int64_t r, step;
  int t;
  row_start<kT>(r, step, t);
  const Row<kT> R{t, smem};
  for (; r < rows; r += step) {
    if (cols == 0) {
      if (t == 0) loss[r] = 0.0f;  // an empty sum
      continue;
    }
    const float* lr = logits + r * cols;
    const float* zr = labels + r * cols;
    float m;
    const double log_s = softmax_into(R, probs + r * cols, lr, cols, &m);
    double zl = 0.0, zs = 0.0;
    for (int64_t i = t; i < cols; i += kT) {
      zl += zr[i] * (lr[i] - m);
      zs += zr[i];
    }
    zl = R.sum(zl);
    zs = R.sum(zs);
    if (t == 0) loss[r] = softmax_ce_row_loss(log_s, zs, zl);
  }
}

template <int kT>
__global__ void softmax_ce_bwd_kernel(float* dlogits, const float* dloss, const float* probs,
                                      const float* labels, int64_t rows, int64_t cols) {
  __shared__ double smem[kWarps];
  int64_t r, step;
  int t;
  row_start<kT>(r, step, t);
  const Row<kT> R{t, smem};
  for (; r < rows; r += step) {
    const float* pr = probs + r * cols;
    const float* zr = labels + r * cols;
    float* dr = dlogits + r * cols;
    const float zsum = static_cast<float>(row_dot(R, zr, static_cast<const float*>(nullptr), cols));
    const float g = dloss[r];
    for (int64_t i = t; i < cols; i += kT) dr[i] = softmax_ce_grad_term(g, pr[i], zsum, zr[i]);
  }
}

template <int kT>
__global__ void sparse_ce_fwd_kernel(float* loss, float* probs, const float* logits,
                                     const int64_t* labels, int64_t rows, int64_t cols) {
  __shared__ double smem[kWarps];
  int64_t r, step;
  int t;
  row_start<kT>(r, step, t);
  const Row<kT> R{t, smem};
  for (; r < rows; r += step) {
    const float* lr = logits + r * cols;
    float m;
    const double log_s = softmax_into(R, probs + r * cols, lr, cols, &m);
    if (t == 0) loss[r] = sparse_ce_row_loss(log_s, lr[labels[r]], m);
  }
}

template <int kT>
__global__ void sparse_ce_bwd_kernel(float* dlogits, const float* dloss, const float* probs,
                                     const int64_t* labels, int64_t rows, int64_t cols) {
  int64_t r, step;
  int t;
  row_start<kT>(r, step, t);
  for (; r < rows; r += step) {
    const float* pr = probs + r * cols;
    float* dr = dlogits + r * cols;
    const float g = dloss[r];
    const int64_t k = labels[r];
    for (int64_t i = t; i < cols; i += kT) dr[i] = sparse_ce_grad_term(g, pr[i], i == k);
  }
}

unsigned row_blocks(int64_t rows, bool warp_rows) {
  const int64_t b = warp_rows ? ceil_div(rows, kWarps) : rows;
  return static_cast<unsigned>(b < kMaxBlocks1D ? b : kMaxBlocks1D);
}

#define FK_ROW_LAUNCH(kernel, name, rows, cols, s, ...)                                  \
  do {                                                                                   \
    if ((rows) <= 0) return;                                                             \
    const bool warp_rows = (cols) <= kWarpRowCols;                                       \
    const unsigned blocks = row_blocks(rows, warp_rows);                                 \
    if (warp_rows)                                                                       \
      kernel<32><<<blocks, kBlock, 0, s>>>(__VA_ARGS__);                                 \
    else                                                                                 \
      kernel<kBlock><<<blocks, kBlock, 0, s>>>(__VA_ARGS__);                             \
    FK_CUDA_CHECK_LAUNCH(name);                                                          \
  } while (0)

}  // namespace

void softmax_forward(float* y, const float* x, int64_t rows, int64_t cols, cudaStream_t s) {
  if (cols <= 0) return;
  FK_ROW_LAUNCH(softmax_fwd_kernel, "softmax_forward", rows, cols, s, y, x, rows, cols);
}

void softmax_backward(float* dx, const float* dy, const float* y, int64_t rows, int64_t cols,
                      cudaStream_t s) {
  if (cols <= 0) return;
  FK_ROW_LAUNCH(softmax_bwd_kernel, "softmax_backward", rows, cols, s, dx, dy, y, rows, cols);
}

void log_softmax_forward(float* y, const float* x, int64_t rows, int64_t cols, cudaStream_t s) {
  if (cols <= 0) return;
  FK_ROW_LAUNCH(log_softmax_fwd_kernel, "log_softmax_forward", rows, cols, s, y, x, rows, cols);
}

void log_softmax_backward(float* dx, const float* dy, const float* y, int64_t rows, int64_t cols,
                          cudaStream_t s) {
  if (cols <= 0) return;
  FK_ROW_LAUNCH(log_softmax_bwd_kernel, "log_softmax_backward", rows, cols, s, dx, dy, y, rows,
                cols);
}

void softmax_crossentropy_forward(float* loss, float* probs, const float* logits,
                                  const float* labels, int64_t rows, int64_t cols,
                                  cudaStream_t s) {
  FK_ROW_LAUNCH(softmax_ce_fwd_kernel, "softmax_crossentropy_forward", rows, cols, s, loss,
                probs, logits, labels, rows, cols);
}

void softmax_crossentropy_backward(float* dlogits, const float* dloss, const float* probs,
                                   const float* labels, int64_t rows, int64_t cols,
                                   cudaStream_t s) {
  if (cols <= 0) return;
  FK_ROW_LAUNCH(softmax_ce_bwd_kernel, "softmax_crossentropy_backward", rows, cols, s, dlogits,
                dloss, probs, labels, rows, cols);
}

void sparse_softmax_crossentropy_forward(float* loss, float* probs, const float* logits,
                                         const int64_t* labels, int64_t rows, int64_t cols,
                                         cudaStream_t s) {
  if (cols <= 0) return;
  FK_ROW_LAUNCH(sparse_ce_fwd_kernel, "sparse_softmax_crossentropy_forward", rows, cols, s, loss,
                probs, logits, labels, rows, cols);
}

void sparse_softmax_crossentropy_backward(float* dlogits, const float* dloss, const float* probs,
                                          const int64_t* labels, int64_t rows, int64_t cols,
                                          cudaStream_t s) {
  if (cols <= 0) return;
  FK_ROW_LAUNCH(sparse_ce_bwd_kernel, "sparse_softmax_crossentropy_backward", rows, cols, s,
                dlogits, dloss, probs, labels, rows, cols);
}

}  // namespace fk_cuda
