// xp_math.h: the per-element math and index maps of the array namespace kernels
// (cuda/kernels/xp.cu): NumPy's float32 binary and unary functions, the reduction combines,
// strided (broadcast) index maps and their construction with dimension collapsing. FK_HD:
// compiled by nvcc into fkeras._C_cuda and by g++ into fkeras._C_cuda_host, where
// tests/cuda/test_xp_math_host.py compares it with NumPy.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "fk_cuda/hd.h"

#if defined(__CUDACC__)
#define FK_XP_UNROLL _Pragma("unroll")
#else
#define FK_XP_UNROLL
#endif

namespace fk_cuda {
namespace xp {

constexpr int kMaxDims = 8;      // rank limit of the namespace (NumPy's is 64)
constexpr int kMaxOperands = 3;  // where(cond, x, y)

// Binary functions: the codes cuda_xp.py passes. Comparisons give 1.0f / 0.0f; kFirst is a
// (broadcast_to: a copy through the map, b ignored).
enum BinaryOp : int {
  kAdd = 0, kSubtract, kMultiply, kDivide, kMaximum, kMinimum, kPower,
  kEqual, kNotEqual, kLess, kLessEqual, kGreater, kGreaterEqual, kFirst, kBinaryCount
};

enum UnaryOp : int { kNegative = 0, kAbs, kSquare, kSqrt, kExp, kLog, kSign, kUnaryCount };

enum ReduceOp : int { kSum = 0, kMean, kMax, kMin, kReduceCount };

FK_HD bool is_nan(float v) { return v != v; }
FK_HD bool is_nan(double v) { return v != v; }

// One float32 operation, rounded once (no contraction is possible: one operation each).
// maximum/minimum propagate NaN as np.maximum/np.minimum do.
FK_HD float binary(int op, float a, float b) {
  switch (op) {
    case kAdd: return a + b;
    case kSubtract: return a - b;
    case kMultiply: return a * b;
    case kDivide: return a / b;
    case kMaximum: return (a >= b || is_nan(a)) ? a : b;
    case kMinimum: return (a <= b || is_nan(a)) ? a : b;
    case kPower: return powf(a, b);
    case kEqual: return a == b ? 1.0f : 0.0f;
    case kNotEqual: return a != b ? 1.0f : 0.0f;
    case kLess: return a < b ? 1.0f : 0.0f;
    case kLessEqual: return a <= b ? 1.0f : 0.0f;
    case kGreater: return a > b ? 1.0f : 0.0f;
    case kGreaterEqual: return a >= b ? 1.0f : 0.0f;
    default: return a;  // kFirst
  }
}

// np.sign: 1, -1, 0 for +-0, NaN for NaN.
FK_HD float unary(int op, float x) {
  switch (op) {
    case kNegative: return -x;
    case kAbs: return fabsf(x);
    case kSquare: return x * x;
    case kSqrt: return sqrtf(x);
    case kExp: return expf(x);
    case kLog: return logf(x);
    case kSign: return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : (x == 0.0f ? 0.0f : x));
    default: return x;
  }
}

// Reductions accumulate in double (exact for max/min; one float64 sum for sum/mean).
FK_HD double reduce_identity(int op) {
  switch (op) {
    case kMax: return -INFINITY;
    case kMin: return INFINITY;
    default: return 0.0;
  }
}

// acc combined with v; max/min keep the first NaN met (NumPy propagates NaN).
FK_HD double reduce_combine(int op, double acc, double v) {
  switch (op) {
    case kMax: return (v > acc || is_nan(v)) && !is_nan(acc) ? v : acc;
    case kMin: return (v < acc || is_nan(v)) && !is_nan(acc) ? v : acc;
    default: return acc + v;
  }
}

// The float32 result of an accumulator over `count` elements (mean: acc / count, NaN for 0).
FK_HD float reduce_finish(int op, double acc, int64_t count) {
  if (op == kMean) return static_cast<float>(count ? acc / static_cast<double>(count) : NAN);
  return static_cast<float>(acc);
}

// An index map: element i of a C-ordered iteration over `shape` sits at offset
// sum_d idx_d * stride[k][d] in operand k (stride 0 on a broadcast axis).
struct StridedMap {
  int ndim = 0;
  int nops = 0;
  int64_t shape[kMaxDims] = {};
  int64_t stride[kMaxOperands][kMaxDims] = {};
};

template <int NOPS>
FK_HD void map_offsets(const StridedMap& m, int64_t i, int64_t* off) {
FK_XP_UNROLL
  for (int k = 0; k < NOPS; ++k) off[k] = 0;
  for (int d = m.ndim - 1; d >= 0; --d) {
    const int64_t n = m.shape[d];
    const int64_t q = i / n;
    const int64_t r = i - q * n;
FK_XP_UNROLL
    for (int k = 0; k < NOPS; ++k) off[k] += r * m.stride[k][d];
    i = q;
  }
}

// Offset of element i in one operand (the first of the map).
FK_HD int64_t map_offset(const StridedMap& m, int64_t i) {
  int64_t off = 0;
  for (int d = m.ndim - 1; d >= 0; --d) {
    const int64_t n = m.shape[d];
    const int64_t q = i / n;
    off += (i - q * n) * m.stride[0][d];
    i = q;
  }
  return off;
}

// ---- host-side construction (plain C++; used by the bindings and the host tests) ----

// Row-major strides of `shape` (elements).
inline std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (int d = static_cast<int>(shape.size()) - 2; d >= 0; --d) s[d] = s[d + 1] * shape[d + 1];
  return s;
}

// Drops size-1 axes and merges neighbours that every operand walks contiguously, so the
// decode loop runs over as few axes as possible. Keeps ndim >= 1.
inline void collapse(StridedMap* m) {
  StridedMap c;
  c.nops = m->nops;
  for (int d = 0; d < m->ndim; ++d) {
    if (m->shape[d] == 1) continue;
    bool merge = c.ndim > 0;
    for (int k = 0; k < m->nops && merge; ++k)
      merge = c.stride[k][c.ndim - 1] == m->stride[k][d] * m->shape[d];
    if (merge) {
      c.shape[c.ndim - 1] *= m->shape[d];
      for (int k = 0; k < m->nops; ++k) c.stride[k][c.ndim - 1] = m->stride[k][d];
    } else {
      c.shape[c.ndim] = m->shape[d];
      for (int k = 0; k < m->nops; ++k) c.stride[k][c.ndim] = m->stride[k][d];
      ++c.ndim;
    }
  }
  if (c.ndim == 0) {
    c.ndim = 1;
    c.shape[0] = 1;
    for (int k = 0; k < c.nops; ++k) c.stride[k][0] = 0;
  }
  *m = c;
}

// The map of an output of shape `out` over operands of shapes `ins` (C-contiguous), each
// broadcastable to `out` by NumPy's rule (right-aligned; equal sizes or 1). Returns false when
// an operand does not broadcast, the rank exceeds kMaxDims or there are too many operands.
inline bool make_broadcast_map(const std::vector<int64_t>& out,
                               const std::vector<std::vector<int64_t>>& ins, StridedMap* m) {
  const int nd = static_cast<int>(out.size());
  if (nd > kMaxDims || ins.size() > static_cast<size_t>(kMaxOperands)) return false;
  StridedMap r;
  r.ndim = nd;
  r.nops = static_cast<int>(ins.size());
  for (int d = 0; d < nd; ++d) r.shape[d] = out[d];
  for (int k = 0; k < r.nops; ++k) {
    const std::vector<int64_t>& s = ins[k];
    const int off = nd - static_cast<int>(s.size());
    if (off < 0) return false;
    std::vector<int64_t> st = contiguous_strides(s);
    for (int d = 0; d < nd; ++d) {
      if (d < off) {
        r.stride[k][d] = 0;
        continue;
      }
      const int64_t n = s[d - off];
      if (n == out[d]) {
        r.stride[k][d] = n == 1 ? 0 : st[d - off];
      } else if (n == 1) {
        r.stride[k][d] = 0;
      } else {
        return false;
      }
    }
  }
  collapse(&r);
  *m = r;
  return true;
}

// A reduction over the axes flagged in `reduced` of a C-contiguous array of `shape`: `kept`
// maps an output index to the offset of its first input element, `red` a reduction index to
// the offset from there. n_out * n_red == the input size.
struct ReduceMap {
  StridedMap kept, red;
  int64_t n_out = 1, n_red = 1;
};

inline ReduceMap make_reduce_map(const std::vector<int64_t>& shape,
                                 const std::vector<bool>& reduced) {
  ReduceMap m;
  m.kept.nops = m.red.nops = 1;
  std::vector<int64_t> st = contiguous_strides(shape);
  for (size_t d = 0; d < shape.size(); ++d) {
    StridedMap& t = reduced[d] ? m.red : m.kept;
    t.shape[t.ndim] = shape[d];
    t.stride[0][t.ndim] = st[d];
    ++t.ndim;
    (reduced[d] ? m.n_red : m.n_out) *= shape[d];
  }
  collapse(&m.kept);
  collapse(&m.red);
  return m;
}

// How xp_reduce covers a ReduceMap (a function of the shapes only, so results are
// reproducible). kColumns: a thread per output (consecutive threads read consecutive kept
// elements when the innermost kept axis is contiguous), the reduced range cut into `chunks`
// (grid y) when there are too few outputs to fill the GPU. kRows: a 256-thread block per
// output (threads stride over the reduced elements, a fixed tree), the range cut into `chunks`
// (grid x) when there are few outputs. With chunks > 1 the float64 partials
// (n_out * chunks) are added in chunk order by a finishing kernel.
enum ReduceKind : int { kColumns = 0, kRows = 1 };

struct ReducePlan {
  int kind = kColumns;
  int64_t chunks = 1, chunk_len = 0;
};

FK_HD int64_t xp_ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

FK_HD int64_t clamp_chunks(int64_t want, int64_t most) {
  int64_t c = want < most ? want : most;
  if (c < 1) c = 1;
  if (c > 65535) c = 65535;
  return c;
}

FK_HD ReducePlan plan_reduce(const ReduceMap& m) {
  ReducePlan p;
  p.chunk_len = m.n_red;
  if (m.n_out <= 0 || m.n_red <= 0) return p;
  const bool inner_contiguous = m.n_out > 1 && m.kept.stride[0][m.kept.ndim - 1] == 1;
  if (inner_contiguous) {  // ~64k threads in flight, each chunk >= 64 elements
    p.chunks = clamp_chunks(xp_ceil_div(65536, m.n_out), xp_ceil_div(m.n_red, 64));
  } else if (m.n_red > 32) {  // >= 1024 blocks when there are few outputs, >= 4096 each
    p.kind = kRows;
    p.chunks = clamp_chunks(xp_ceil_div(1024, m.n_out), xp_ceil_div(m.n_red, 4096));
  }
  p.chunk_len = xp_ceil_div(m.n_red, p.chunks);
  p.chunks = xp_ceil_div(m.n_red, p.chunk_len);  // no empty chunk
  return p;
}

}  // namespace xp
}  // namespace fk_cuda
