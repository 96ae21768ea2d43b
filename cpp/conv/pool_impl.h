// pool_impl.h: pooling loops, included by pooling.cpp, pooling_avx2.cpp and pooling_avx512.cpp
// only. Everything is in an anonymous namespace so that each includer gets its own copy
// compiled for its ISA; pool_kernels.h describes the functions.
//
// Each loop runs over channels innermost with restrict pointers and no calls, so -O3
// vectorizes it at the includer's vector width (max_row: explicit GCC vector types). Window
// order is row-major (r, then s), i.e. increasing flat offset: the first maximum wins; NaN
// counts as the largest value and the first NaN wins (np.argmax's rule).
#pragma once

#include <cstdint>

#include "fkeras/column_sums.h"
#include "fkeras/kernels.h"
#include "pool_kernels.h"

namespace fk {
namespace pool {
namespace {

// In-bounds range [lo, hi) of the window starting at `start` of length k on an axis of size n.
// (No std:: templates in this file: an out-of-line copy compiled for one ISA could be the one
// the linker keeps for all.)
void window(int64_t start, int64_t k, int64_t n, int64_t& lo, int64_t& hi) {
  lo = start > 0 ? start : 0;
  hi = start + k < n ? start + k : n;
}

// One output row of a max pool: values, and each maximum's flat input index plus `base` (kMode
// 1, I = int64_t) or its position in the window (kMode 2, I = int8_t: (h - h_lo) * S + (w -
// w_lo), for windows inside the input); kMode 0: the values only.
// Channels in blocks of kBlock (GCC vector types: one zmm, two ymm or four xmm per the
// includer's ISA) whose running maxima and winning cells stay in registers for the whole window
// (one store each), then the remaining channels one at a time; every comparison follows the
// rule above. Before, the maxima and indices went through y and idx once per window cell: on
// the benchmark CNN's conv2 (64x24x24x64, 2x2) at 1 thread (process CPU time) the fused conv +
// pool with indices took 7.03 ms, 6.23 ms now (without indices 6.30 -> 6.00; the conv alone
// 5.98); maxpool2d_forward alone with indices 0.54 -> 0.43 ms.
constexpr int64_t kBlock = 16;
typedef float BlockF __attribute__((vector_size(kBlock * 4)));
typedef int32_t BlockM __attribute__((vector_size(kBlock * 4)));
typedef int64_t BlockI __attribute__((vector_size(kBlock * 8)));
typedef int8_t BlockP __attribute__((vector_size(kBlock)));

inline bool takes(float v, float b) { return (v > b) | ((v != v) & (b == b)); }

template <int kMode, class I>
void max_row(float* y, I* idx, const float* x, const Geom& g, int64_t n, int64_t p,
             int64_t base) {
  // Sizes in locals: the index stores could otherwise alias g's fields, which would stop the
  // compiler from vectorizing.
  const int64_t C = g.C, H = g.H, W = g.W, S = g.S, sw = g.sw, pl = g.pl, Q = g.Q;
  int64_t h_lo, h_hi;
  window(p * g.sh - g.pt, g.R, H, h_lo, h_hi);
  BlockI lane;
  for (int64_t j = 0; j < kBlock; ++j) lane[j] = j;
  // The blocks track the winning cell as an int32 (kMode 1: its offset from the window's first
  // cell, widened to the int64 index once per block; kMode 2: its position), one broadcast
  // blend per cell; a window whose offsets could pass int32 (rows of over 2^31 / R floats)
  // takes the one-channel loop.
  const int64_t blocked_c = (kMode != 1 || g.R * W * C < (int64_t(1) << 31)) ? C : 0;
  for (int64_t q = 0; q < Q; ++q) {
    int64_t w_lo, w_hi;
    window(q * sw - pl, S, W, w_lo, w_hi);
    float* __restrict yq = y + q * C;  // (C)
    I* __restrict iq = kMode ? idx + q * C : nullptr;  // (C)
    const int64_t first = ((n * H + h_lo) * W + w_lo) * C;
    int64_t c0 = 0;
    for (; c0 + kBlock <= blocked_c; c0 += kBlock) {
      BlockF bv;
      __builtin_memcpy(&bv, x + first + c0, sizeof bv);
      BlockM cell = BlockM{};
      for (int64_t h = h_lo; h < h_hi; ++h) {
        for (int64_t w = (h == h_lo ? w_lo + 1 : w_lo); w < w_hi; ++w) {
          const int64_t rel = ((h - h_lo) * W + (w - w_lo)) * C;
          BlockF v;
          __builtin_memcpy(&v, x + first + rel + c0, sizeof v);
          const BlockM take = (v > bv) | ((v != v) & (bv == bv));
          bv = take ? v : bv;
          if constexpr (kMode != 0) {
            const int32_t here = static_cast<int32_t>(kMode == 1 ? rel
                                                                 : (h - h_lo) * S + w - w_lo);
            cell = take ? BlockM{} + here : cell;
          }
        }
      }
      __builtin_memcpy(yq + c0, &bv, sizeof bv);
      if constexpr (kMode == 1) {
        const BlockI bi = __builtin_convertvector(cell, BlockI) + lane + (base + first + c0);
        __builtin_memcpy(iq + c0, &bi, sizeof bi);
      } else if constexpr (kMode == 2) {
        const BlockP bp = __builtin_convertvector(cell, BlockP);
        __builtin_memcpy(iq + c0, &bp, sizeof bp);
      }
    }
    for (int64_t c = c0; c < C; ++c) {
      float bv = x[first + c];
      int64_t bi = kMode == 1 ? first + c : 0;
      for (int64_t h = h_lo; h < h_hi; ++h) {
        for (int64_t w = (h == h_lo ? w_lo + 1 : w_lo); w < w_hi; ++w) {
          const int64_t off = ((n * H + h) * W + w) * C + c;
          const bool take = takes(x[off], bv);
          bv = take ? x[off] : bv;
          if constexpr (kMode != 0) bi = take ? (kMode == 1 ? off : (h - h_lo) * S + w - w_lo) : bi;
        }
      }
      yq[c] = bv;
      if constexpr (kMode == 1) iq[c] = base + bi;
      if constexpr (kMode == 2) iq[c] = static_cast<I>(bi);
    }
  }
}

void max_row_impl(float* y, int64_t* idx, const float* x, const Geom& g, int64_t n, int64_t p,
                  int64_t base) {
  max_row<1>(y, idx, x, g, n, p, base);
}

void max_pos_row_impl(float* y, int8_t* pos, const float* x, const Geom& g, int64_t n,
                      int64_t p) {
  max_row<2>(y, pos, x, g, n, p, 0);
}

// max_row_impl without the indices (inference): the same values, same NaN rule.
void max_values_row_impl(float* y, const float* x, const Geom& g, int64_t n, int64_t p) {
  max_row<0, int64_t>(y, nullptr, x, g, n, p, 0);
}

void avg_row_impl(float* y, const float* x, const Geom& g, int64_t n, int64_t p) {
  const int64_t C = g.C, H = g.H, W = g.W, S = g.S, sw = g.sw, pl = g.pl, Q = g.Q;
  int64_t h_lo, h_hi;
  window(p * g.sh - g.pt, g.R, H, h_lo, h_hi);
  for (int64_t q = 0; q < Q; ++q) {
    int64_t w_lo, w_hi;
    window(q * sw - pl, S, W, w_lo, w_hi);
    float* __restrict yq = y + q * C;  // (C)
    for (int64_t c = 0; c < C; ++c) yq[c] = 0.f;
    for (int64_t h = h_lo; h < h_hi; ++h)
      for (int64_t w = w_lo; w < w_hi; ++w) {
        const float* __restrict xt = x + ((n * H + h) * W + w) * C;  // (C)
        for (int64_t c = 0; c < C; ++c) yq[c] += xt[c];
      }
    const float inv = 1.f / static_cast<float>((h_hi - h_lo) * (w_hi - w_lo));
    for (int64_t c = 0; c < C; ++c) yq[c] *= inv;
  }
}

void avg_backward_impl(float* dx, const float* dy, const Geom& g, int64_t n, int64_t c0,
                       int64_t c1) {
  const int64_t C = g.C, H = g.H, W = g.W, P = g.P, Q = g.Q, nc = c1 - c0;
  float* dxn = dx + n * H * W * C + c0;  // (H, W, C) from channel c0
  for (int64_t i = 0; i < H * W; ++i) {
    float* __restrict d = dxn + i * C;
    for (int64_t c = 0; c < nc; ++c) d[c] = 0.f;
  }
  for (int64_t p = 0; p < P; ++p) {
    int64_t h_lo, h_hi;
    window(p * g.sh - g.pt, g.R, H, h_lo, h_hi);
    for (int64_t q = 0; q < Q; ++q) {
      int64_t w_lo, w_hi;
      window(q * g.sw - g.pl, g.S, W, w_lo, w_hi);
      const float inv = 1.f / static_cast<float>((h_hi - h_lo) * (w_hi - w_lo));
      const float* __restrict dyq = dy + ((n * P + p) * Q + q) * C + c0;  // (nc)
      for (int64_t h = h_lo; h < h_hi; ++h)
        for (int64_t w = w_lo; w < w_hi; ++w) {
          float* __restrict d = dxn + (h * W + w) * C;
          for (int64_t c = 0; c < nc; ++c) d[c] += dyq[c] * inv;
        }
    }
  }
}

// One dz row of conv_max_backward: out (K) from its window's cell (dy, y, ix from channel 0).
// The value is the unfused pair's: maxpool2d_backward's 0 + dy, then bias_activation_backward's
// product with act'(y) (read off the output: y > 0 selects 1, else 0 or alpha; NaN: not > 0).
template <int64_t kAct>
void scatter_row(float* __restrict out, const float* __restrict dy, const float* __restrict y,
                 const int64_t* __restrict ix, int64_t base, int64_t K, float alpha) {
  for (int64_t k = 0; k < K; ++k) {
    const float g = 0.f + dy[k];
    float d = g;
    if constexpr (kAct == kRelu) d = g * (y[k] > 0.f ? 1.f : 0.f);
    if constexpr (kAct == kLeakyRelu) d = g * (y[k] > 0.f ? 1.f : alpha);
    out[k] = ix[k] == base + k ? d : 0.f;
  }
}

template <int64_t kAct>
void conv_max_rows(float* dz, double* colsum, float* tmp, const float* dy, const float* y,
                   const int64_t* idx, const ScatterGeom& g, int64_t r0, int64_t r1) {
  const int64_t K = g.K, Q = g.Q, PQ = g.P * g.Q, Pc = g.Pp * g.ph, Qc = g.Qp * g.pw;
  auto row = [&](float* __restrict out, int64_t m) {
    const int64_t n = m / PQ, p = (m / Q) % g.P, q = m % Q;
    if (p >= Pc || q >= Qc) {
      for (int64_t k = 0; k < K; ++k) out[k] = 0.f;
      return;
    }
    const int64_t cell = ((n * g.Pp + p / g.ph) * g.Qp + q / g.pw) * K;
    scatter_row<kAct>(out, dy + cell, y + cell, idx + cell, m * K, K, g.alpha);
  };
  if (colsum == nullptr) {
    for (int64_t m = r0; m < r1; ++m) row(dz + m * K, m);
    return;
  }
  for (int64_t j = 0; j < K; ++j) colsum[j] = 0.0;
  int64_t i = r0;
  for (; i + 8 <= r1; i += 8) {
    float* __restrict z = dz ? dz + i * K : tmp;  // (8, K)
    for (int64_t t = 0; t < 8; ++t) row(z + t * K, i + t);
    colsum::add_group(colsum, z, K, K);
  }
  for (; i < r1; ++i) {
    float* __restrict z = dz ? dz + i * K : tmp;
    row(z, i);
    colsum::add_row(colsum, z, K);
  }
}

void conv_max_backward_impl(float* dz, double* colsum, float* tmp, const float* dy,
                            const float* y, const int64_t* idx, const ScatterGeom& g, int64_t r0,
                            int64_t r1) {
  if (g.activation == kRelu) return conv_max_rows<kRelu>(dz, colsum, tmp, dy, y, idx, g, r0, r1);
  if (g.activation == kLeakyRelu)
    return conv_max_rows<kLeakyRelu>(dz, colsum, tmp, dy, y, idx, g, r0, r1);
  conv_max_rows<kLinear>(dz, colsum, tmp, dy, y, idx, g, r0, r1);
}

void max_unpool_rows_impl(float* out, const float* dy, const int8_t* pos, const ScatterGeom& g,
                          int64_t r0, int64_t r1) {
  const int64_t K = g.K, P = g.P, Q = g.Q, Pc = g.Pp * g.ph, Qc = g.Qp * g.pw;
  if (r0 >= r1) return;
  // Pixel m = (n * P + p) * Q + q, with p = pp * ph + dp and q = qq * pw + dq kept by counters.
  int64_t q = r0 % Q, p = (r0 / Q) % P, n = r0 / (P * Q);
  int64_t pp = p / g.ph, dp = p % g.ph, qq = q / g.pw, dq = q % g.pw;
  for (int64_t m = r0; m < r1; ++m) {
    float* __restrict o = out + (m - r0) * K;
    if (p >= Pc || q >= Qc) {
      for (int64_t k = 0; k < K; ++k) o[k] = 0.f;
    } else {
      const int64_t cell = ((n * g.Pp + pp) * g.Qp + qq) * K;
      const int8_t self = static_cast<int8_t>(dp * g.pw + dq);
      const float* __restrict d = dy + cell;
      const int8_t* __restrict s = pos + cell;
      for (int64_t k = 0; k < K; ++k) o[k] = s[k] == self ? 0.f + d[k] : 0.f;
    }
    if (++dq == g.pw) dq = 0, ++qq;
    if (++q == Q) {
      q = qq = dq = 0;
      if (++dp == g.ph) dp = 0, ++pp;
      if (++p == P) p = pp = dp = 0, ++n;
    }
  }
}

Kernels make_kernels() {
  return Kernels{max_row_impl, avg_row_impl, avg_backward_impl, max_values_row_impl,
                 conv_max_backward_impl, max_pos_row_impl, max_unpool_rows_impl};
}

}  // namespace
}  // namespace pool
}  // namespace fk
