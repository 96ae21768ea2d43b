// pool_impl.h: pooling loops, included by pooling.cpp, pooling_avx2.cpp and pooling_avx512.cpp
// only. Everything is in an anonymous namespace so that each includer gets its own copy
// compiled for its ISA; pool_kernels.h describes the functions.
//
// Each loop runs over channels innermost with restrict pointers and no calls, so -O3
// vectorizes it at the includer's vector width. Window order is row-major (r, then s), i.e.
// increasing flat offset: the first maximum wins; NaN counts as the largest value and the first
// NaN wins (np.argmax's rule).
#pragma once

#include <algorithm>
#include <cstdint>

#include "pool_kernels.h"

namespace fk {
namespace pool {
namespace {

// In-bounds range [lo, hi) of the window starting at `start` of length k on an axis of size n.
inline void window(int64_t start, int64_t k, int64_t n, int64_t& lo, int64_t& hi) {
  lo = std::max<int64_t>(start, 0);
  hi = std::min<int64_t>(start + k, n);
}

void max_row_impl(float* y, int64_t* idx, const float* x, const Geom& g, int64_t n, int64_t p) {
  int64_t h_lo, h_hi;
  window(p * g.sh - g.pt, g.R, g.H, h_lo, h_hi);
  for (int64_t q = 0; q < g.Q; ++q) {
    int64_t w_lo, w_hi;
    window(q * g.sw - g.pl, g.S, g.W, w_lo, w_hi);
    float* __restrict yq = y + q * g.C;      // (C)
    int64_t* __restrict iq = idx + q * g.C;  // (C)
    bool first = true;
    for (int64_t h = h_lo; h < h_hi; ++h) {
      for (int64_t w = w_lo; w < w_hi; ++w) {
        const int64_t off = ((n * g.H + h) * g.W + w) * g.C;
        const float* __restrict xt = x + off;  // (C)
        if (first) {
          for (int64_t c = 0; c < g.C; ++c) {
            yq[c] = xt[c];
            iq[c] = off + c;
          }
          first = false;
          continue;
        }
        for (int64_t c = 0; c < g.C; ++c) {
          const float v = xt[c], b = yq[c];
          const bool take = v > b || (v != v && b == b);
          yq[c] = take ? v : b;
          iq[c] = take ? off + c : iq[c];
        }
      }
    }
  }
}

void avg_row_impl(float* y, const float* x, const Geom& g, int64_t n, int64_t p) {
  int64_t h_lo, h_hi;
  window(p * g.sh - g.pt, g.R, g.H, h_lo, h_hi);
  for (int64_t q = 0; q < g.Q; ++q) {
    int64_t w_lo, w_hi;
    window(q * g.sw - g.pl, g.S, g.W, w_lo, w_hi);
    float* __restrict yq = y + q * g.C;  // (C)
    for (int64_t c = 0; c < g.C; ++c) yq[c] = 0.f;
    for (int64_t h = h_lo; h < h_hi; ++h)
      for (int64_t w = w_lo; w < w_hi; ++w) {
        const float* __restrict xt = x + ((n * g.H + h) * g.W + w) * g.C;  // (C)
        for (int64_t c = 0; c < g.C; ++c) yq[c] += xt[c];
      }
    const float inv = 1.f / static_cast<float>((h_hi - h_lo) * (w_hi - w_lo));
    for (int64_t c = 0; c < g.C; ++c) yq[c] *= inv;
  }
}

void avg_backward_impl(float* dx, const float* dy, const Geom& g, int64_t n, int64_t c0,
                       int64_t c1) {
  const int64_t nc = c1 - c0;
  float* dxn = dx + n * g.H * g.W * g.C + c0;  // (H, W, C) from channel c0
  for (int64_t i = 0; i < g.H * g.W; ++i) {
    float* __restrict d = dxn + i * g.C;
    for (int64_t c = 0; c < nc; ++c) d[c] = 0.f;
  }
  for (int64_t p = 0; p < g.P; ++p) {
    int64_t h_lo, h_hi;
    window(p * g.sh - g.pt, g.R, g.H, h_lo, h_hi);
    for (int64_t q = 0; q < g.Q; ++q) {
      int64_t w_lo, w_hi;
      window(q * g.sw - g.pl, g.S, g.W, w_lo, w_hi);
      const float inv = 1.f / static_cast<float>((h_hi - h_lo) * (w_hi - w_lo));
      const float* __restrict dyq = dy + ((n * g.P + p) * g.Q + q) * g.C + c0;  // (nc)
      for (int64_t h = h_lo; h < h_hi; ++h)
        for (int64_t w = w_lo; w < w_hi; ++w) {
          float* __restrict d = dxn + (h * g.W + w) * g.C;
          for (int64_t c = 0; c < nc; ++c) d[c] += dyq[c] * inv;
        }
    }
  }
}

Kernels make_kernels() { return Kernels{max_row_impl, avg_row_impl, avg_backward_impl}; }

}  // namespace
}  // namespace pool
}  // namespace fk
