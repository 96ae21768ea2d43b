// xp.cu: the array namespace kernels (launchers declared in xp.cuh). Each family is one
// grid-stride kernel templated on the operation (the switch of xp_math.h folds away) and on
// whether the collapsed index map has a single axis (no index decode).
#include "xp.cuh"

#include "fk_cuda/launch.h"
#include "fk_cuda/runtime.h"

namespace fk_cuda {
namespace {

constexpr int kThreads = 256;

FK_HD float operand_at(const XpOperand& a, int64_t off) { return a.data ? a.data[off] : a.value; }

template <int OP, bool ONE_DIM>
__global__ void __launch_bounds__(kThreads)
binary_kernel(float* __restrict__ out, XpOperand a, XpOperand b, xp::StridedMap m, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t off[2];
    if (ONE_DIM) {
      off[0] = i * m.stride[0][0];
      off[1] = i * m.stride[1][0];
    } else {
      xp::map_offsets<2>(m, i, off);
    }
    out[i] = xp::binary(OP, operand_at(a, off[0]), operand_at(b, off[1]));
  }
}

template <int OP>
__global__ void __launch_bounds__(kThreads)
unary_kernel(float* out, const float* x, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    out[i] = xp::unary(OP, x[i]);
}

template <class C>
__global__ void __launch_bounds__(kThreads)
where_kernel(float* __restrict__ out, const C* __restrict__ cond, XpOperand x, XpOperand y,
             xp::StridedMap m, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t off[3];
    xp::map_offsets<3>(m, i, off);
    out[i] = cond[off[0]] != C(0) ? operand_at(x, off[1]) : operand_at(y, off[2]);
  }
}

FK_HD int64_t red_offset(const xp::StridedMap& m, int64_t r) {
  return m.ndim == 1 ? r * m.stride[0][0] : xp::map_offset(m, r);
}

// Threads over outputs (grid x, striding), the reduced range's chunk blockIdx.y in order: the
// output with one chunk, else the chunk's partial (see xp::plan_reduce).
// (__launch_bounds__(256) alone gave 48 registers and an 8-byte spill on sm_80 for mean;
// asking for 4 resident blocks gives 56 registers and none.)
template <int OP>
__global__ void __launch_bounds__(kThreads, 4)
reduce_columns_kernel(float* __restrict__ out, double* __restrict__ partials,
                      const float* __restrict__ x, xp::ReduceMap m, int64_t chunk_len) {
  const int64_t chunks = gridDim.y;
  const int64_t r0 = blockIdx.y * chunk_len;
  const int64_t r1 = r0 + chunk_len < m.n_red ? r0 + chunk_len : m.n_red;
  for (int64_t o = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; o < m.n_out;
       o += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const float* base = x + xp::map_offset(m.kept, o);
    double acc = xp::reduce_identity(OP);
    for (int64_t r = r0; r < r1; ++r)
      acc = xp::reduce_combine(OP, acc, static_cast<double>(base[red_offset(m.red, r)]));
    if (chunks == 1)
      out[o] = xp::reduce_finish(OP, acc, m.n_red);
    else
      partials[o * chunks + blockIdx.y] = acc;
  }
}

// Blocks (chunk c, output o): the block's threads stride over the chunk's reduced elements,
// then a fixed shared-memory tree. With one chunk the block writes the output; else the
// partial, which reduce_finish_kernel combines in chunk order.
template <int OP>
__global__ void __launch_bounds__(kThreads)
reduce_block_kernel(float* __restrict__ out, double* __restrict__ partials,
                    const float* __restrict__ x, xp::ReduceMap m, int64_t chunk_len) {
  __shared__ double acc_s[kThreads];
  const int64_t chunks = gridDim.x;
  const int64_t r0 = blockIdx.x * chunk_len;
  const int64_t r1 = r0 + chunk_len < m.n_red ? r0 + chunk_len : m.n_red;
  for (int64_t o = blockIdx.y; o < m.n_out; o += gridDim.y) {
    const float* base = x + xp::map_offset(m.kept, o);
    double acc = xp::reduce_identity(OP);
    for (int64_t r = r0 + threadIdx.x; r < r1; r += kThreads)
      acc = xp::reduce_combine(OP, acc, static_cast<double>(base[red_offset(m.red, r)]));
    acc_s[threadIdx.x] = acc;
    __syncthreads();
    for (int w = kThreads / 2; w > 0; w /= 2) {
      if (threadIdx.x < w)
        acc_s[threadIdx.x] = xp::reduce_combine(OP, acc_s[threadIdx.x], acc_s[threadIdx.x + w]);
      __syncthreads();
    }
    if (threadIdx.x == 0) {
      if (chunks == 1)
        out[o] = xp::reduce_finish(OP, acc_s[0], m.n_red);
      else
        partials[o * chunks + blockIdx.x] = acc_s[0];
    }
    __syncthreads();  // acc_s is reused by the next output
  }
}

template <int OP>
__global__ void __launch_bounds__(kThreads)
reduce_finish_kernel(float* out, const double* partials, int64_t n_out, int64_t chunks,
                     int64_t n_red) {
  for (int64_t o = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; o < n_out;
       o += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    double acc = xp::reduce_identity(OP);
    for (int64_t c = 0; c < chunks; ++c)
      acc = xp::reduce_combine(OP, acc, partials[o * chunks + c]);
    out[o] = xp::reduce_finish(OP, acc, n_red);
  }
}

template <class T>
__global__ void __launch_bounds__(kThreads)
copy2d_kernel(T* __restrict__ dst, int64_t dst_ld, const T* __restrict__ src, int64_t src_ld,
              int64_t rows, int64_t cols) {
  const int64_t n = rows * cols;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = i / cols, c = i - r * cols;
    dst[r * dst_ld + c] = src[r * src_ld + c];
  }
}

template <int OP>
void launch_reduce(float* out, const float* x, const xp::ReduceMap& m, double* ws,
                   cudaStream_t s) {
  const xp::ReducePlan p = xp::plan_reduce(m);
  if (p.kind == xp::kColumns) {
    Launch1D c = launch_config(m.n_out, kThreads);
    reduce_columns_kernel<OP><<<dim3(c.blocks, static_cast<unsigned>(p.chunks)), c.threads, 0,
                                 s>>>(out, ws, x, m, p.chunk_len);
    FK_CUDA_CHECK_LAUNCH("reduce_columns_kernel");
  } else {
    const unsigned gy = static_cast<unsigned>(m.n_out < 65535 ? m.n_out : 65535);
    reduce_block_kernel<OP><<<dim3(static_cast<unsigned>(p.chunks), gy), kThreads, 0, s>>>(
        out, ws, x, m, p.chunk_len);
    FK_CUDA_CHECK_LAUNCH("reduce_block_kernel");
  }
  if (p.chunks > 1) {
    Launch1D c = launch_config(m.n_out, kThreads);
    reduce_finish_kernel<OP><<<c.blocks, c.threads, 0, s>>>(out, ws, m.n_out, p.chunks, m.n_red);
    FK_CUDA_CHECK_LAUNCH("reduce_finish_kernel");
  }
}

template <int OP>
void launch_binary(float* out, XpOperand a, XpOperand b, const xp::StridedMap& m, int64_t n,
                   cudaStream_t s) {
  Launch1D c = launch_config(n, kThreads);
  if (m.ndim == 1)
    binary_kernel<OP, true><<<c.blocks, c.threads, 0, s>>>(out, a, b, m, n);
  else
    binary_kernel<OP, false><<<c.blocks, c.threads, 0, s>>>(out, a, b, m, n);
  FK_CUDA_CHECK_LAUNCH("binary_kernel");
}

template <int OP>
void launch_unary(float* out, const float* x, int64_t n, cudaStream_t s) {
  Launch1D c = launch_config(n, kThreads);
  unary_kernel<OP><<<c.blocks, c.threads, 0, s>>>(out, x, n);
  FK_CUDA_CHECK_LAUNCH("unary_kernel");
}

template <class T>
void launch_copy2d(void* dst, int64_t dst_ld, const void* src, int64_t src_ld, int64_t rows,
                   int64_t cols, cudaStream_t s) {
  Launch1D c = launch_config(rows * cols, kThreads);
  copy2d_kernel<T><<<c.blocks, c.threads, 0, s>>>(static_cast<T*>(dst), dst_ld,
                                                  static_cast<const T*>(src), src_ld, rows, cols);
  FK_CUDA_CHECK_LAUNCH("copy2d_kernel");
}

int64_t map_size(const xp::StridedMap& m) {
  int64_t n = 1;
  for (int d = 0; d < m.ndim; ++d) n *= m.shape[d];
  return n;
}

}  // namespace

void xp_binary(float* out, XpOperand a, XpOperand b, int op, const xp::StridedMap& m,
               cudaStream_t s) {
  const int64_t n = map_size(m);
  if (n <= 0) return;
  switch (op) {
    case xp::kAdd: launch_binary<xp::kAdd>(out, a, b, m, n, s); break;
    case xp::kSubtract: launch_binary<xp::kSubtract>(out, a, b, m, n, s); break;
    case xp::kMultiply: launch_binary<xp::kMultiply>(out, a, b, m, n, s); break;
    case xp::kDivide: launch_binary<xp::kDivide>(out, a, b, m, n, s); break;
    case xp::kMaximum: launch_binary<xp::kMaximum>(out, a, b, m, n, s); break;
    case xp::kMinimum: launch_binary<xp::kMinimum>(out, a, b, m, n, s); break;
    case xp::kPower: launch_binary<xp::kPower>(out, a, b, m, n, s); break;
    case xp::kEqual: launch_binary<xp::kEqual>(out, a, b, m, n, s); break;
    case xp::kNotEqual: launch_binary<xp::kNotEqual>(out, a, b, m, n, s); break;
    case xp::kLess: launch_binary<xp::kLess>(out, a, b, m, n, s); break;
    case xp::kLessEqual: launch_binary<xp::kLessEqual>(out, a, b, m, n, s); break;
    case xp::kGreater: launch_binary<xp::kGreater>(out, a, b, m, n, s); break;
    case xp::kGreaterEqual: launch_binary<xp::kGreaterEqual>(out, a, b, m, n, s); break;
    case xp::kFirst: launch_binary<xp::kFirst>(out, a, b, m, n, s); break;
    default: throw std::invalid_argument("xp_binary: unknown operation code");
  }
}

void xp_unary(float* out, const float* x, int op, int64_t n, cudaStream_t s) {
  if (n <= 0) return;
  switch (op) {
    case xp::kNegative: launch_unary<xp::kNegative>(out, x, n, s); break;
    case xp::kAbs: launch_unary<xp::kAbs>(out, x, n, s); break;
    case xp::kSquare: launch_unary<xp::kSquare>(out, x, n, s); break;
    case xp::kSqrt: launch_unary<xp::kSqrt>(out, x, n, s); break;
    case xp::kExp: launch_unary<xp::kExp>(out, x, n, s); break;
    case xp::kLog: launch_unary<xp::kLog>(out, x, n, s); break;
    case xp::kSign: launch_unary<xp::kSign>(out, x, n, s); break;
    default: throw std::invalid_argument("xp_unary: unknown operation code");
  }
}

void xp_where(float* out, const void* cond, int cond_bytes, XpOperand x, XpOperand y,
              const xp::StridedMap& m, cudaStream_t s) {
  const int64_t n = map_size(m);
  if (n <= 0) return;
  Launch1D c = launch_config(n, kThreads);
  if (cond_bytes == 4)
    where_kernel<float><<<c.blocks, c.threads, 0, s>>>(out, static_cast<const float*>(cond), x, y,
                                                       m, n);
  else
    where_kernel<uint8_t><<<c.blocks, c.threads, 0, s>>>(out, static_cast<const uint8_t*>(cond),
                                                         x, y, m, n);
  FK_CUDA_CHECK_LAUNCH("where_kernel");
}

int64_t xp_reduce_workspace(const xp::ReduceMap& m) {
  if (m.n_out <= 0 || m.n_red <= 0) return 0;
  const xp::ReducePlan p = xp::plan_reduce(m);
  return p.chunks > 1 ? m.n_out * p.chunks : 0;
}

void xp_reduce(float* out, const float* x, int op, const xp::ReduceMap& m, double* ws,
               cudaStream_t s) {
  if (m.n_out <= 0) return;
  xp::ReduceMap mm = m;
  if (m.n_red <= 0) {  // the identity (sum 0, mean NaN): one thread per output, no reads
    mm.n_red = 0;
  }
  switch (op) {
    case xp::kSum: launch_reduce<xp::kSum>(out, x, mm, ws, s); break;
    case xp::kMean: launch_reduce<xp::kMean>(out, x, mm, ws, s); break;
    case xp::kMax: launch_reduce<xp::kMax>(out, x, mm, ws, s); break;
    case xp::kMin: launch_reduce<xp::kMin>(out, x, mm, ws, s); break;
    default: throw std::invalid_argument("xp_reduce: unknown operation code");
  }
}

void xp_copy2d(void* dst, int64_t dst_ld, const void* src, int64_t src_ld, int64_t rows,
               int64_t cols, int elem_bytes, cudaStream_t s) {
  if (rows <= 0 || cols <= 0) return;
  switch (elem_bytes) {
    case 1: launch_copy2d<uint8_t>(dst, dst_ld, src, src_ld, rows, cols, s); break;
    case 2: launch_copy2d<uint16_t>(dst, dst_ld, src, src_ld, rows, cols, s); break;
    case 4: launch_copy2d<uint32_t>(dst, dst_ld, src, src_ld, rows, cols, s); break;
    case 8: launch_copy2d<uint64_t>(dst, dst_ld, src, src_ld, rows, cols, s); break;
    default: throw std::invalid_argument("xp_copy2d: element size must be 1, 2, 4 or 8 bytes");
  }
}

}  // namespace fk_cuda
