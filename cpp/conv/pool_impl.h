// pool_impl.h: pooling loops, included by pooling.cpp, pooling_avx2.cpp and pooling_avx512.cpp
// only. Everything is in an anonymous namespace so that each includer gets its own copy
// compiled for its ISA; pool_kernels.h describes the functions.
//
// Each loop runs over channels innermost with restrict pointers and no calls, so -O3
// vectorizes it at the includer's vector width. Window order is row-major (r, then s), i.e.
// increasing flat offset: the first maximum wins; NaN counts as the largest value and the first
// NaN wins (np.argmax's rule).
#pragma once

#include <cstdint>

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

// One output row of a max pool: values, and (kIndices) each maximum's flat input index.
template <bool kIndices>
void max_row(float* y, int64_t* idx, const float* x, const Geom& g, int64_t n, int64_t p) {
  // Sizes in locals: the int64 index stores could otherwise alias g's fields, which would stop
  // the compiler from vectorizing.
  const int64_t C = g.C, H = g.H, W = g.W, S = g.S, sw = g.sw, pl = g.pl, Q = g.Q;
  int64_t h_lo, h_hi;
  window(p * g.sh - g.pt, g.R, H, h_lo, h_hi);
  for (int64_t q = 0; q < Q; ++q) {
    int64_t w_lo, w_hi;
    window(q * sw - pl, S, W, w_lo, w_hi);
    float* __restrict yq = y + q * C;  // (C)
    int64_t* __restrict iq = kIndices ? idx + q * C : nullptr;  // (C)
    const int64_t first = ((n * H + h_lo) * W + w_lo) * C;
    const float* __restrict x0 = x + first;  // (C)
    for (int64_t c = 0; c < C; ++c) {
      yq[c] = x0[c];
      if constexpr (kIndices) iq[c] = first + c;
    }
    for (int64_t h = h_lo; h < h_hi; ++h) {
      for (int64_t w = (h == h_lo ? w_lo + 1 : w_lo); w < w_hi; ++w) {
        const int64_t off = ((n * H + h) * W + w) * C;
        const float* __restrict xt = x + off;  // (C)
        for (int64_t c = 0; c < C; ++c) {
          const float v = xt[c], b = yq[c];
          const bool take = (v > b) | ((v != v) & (b == b));
          yq[c] = take ? v : b;
          if constexpr (kIndices) iq[c] = take ? off + c : iq[c];
        }
      }
    }
  }
}

void max_row_impl(float* y, int64_t* idx, const float* x, const Geom& g, int64_t n, int64_t p) {
  max_row<true>(y, idx, x, g, n, p);
}

// max_row_impl without the indices (inference): the same values, same NaN rule.
void max_values_row_impl(float* y, const float* x, const Geom& g, int64_t n, int64_t p) {
  max_row<false>(y, nullptr, x, g, n, p);
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

Kernels make_kernels() {
  return Kernels{max_row_impl, avg_row_impl, avg_backward_impl, max_values_row_impl};
}

}  // namespace
}  // namespace pool
}  // namespace fk
