// depthwise_impl.h: depthwise convolution row loops, included by depthwise.cpp,
// depthwise_avx2.cpp and depthwise_avx512.cpp only (see depthwise_kernels.h). Everything is in
// an anonymous namespace so each includer compiles its own copy for its ISA; no std::
// templates, whose out-of-line copies the linker could share across ISAs.
//
// Each loop runs over channels innermost with restrict pointers, so -O3 vectorizes it; the
// common multiplier-1 case (Kg == 1) has its own plain loop.
#pragma once

#include <cstdint>

#include "depthwise_kernels.h"

namespace fk {
namespace depthwise {
namespace {

// Channels per register-resident accumulator block (4 AVX-512 / 8 AVX2 registers).
constexpr int64_t kBlock = 64;

void forward_row_impl(float* y, const float* x, const float* w, const float* bias, const Geom& g,
                      int64_t n, int64_t p) {
  const int64_t H = g.H, W = g.W, C = g.C, K = g.K, R = g.R, S = g.S, Q = g.Q, Kg = g.Kg;
  const int64_t h0 = p * g.sh - g.pt;
  for (int64_t q = 0; q < Q; ++q) {
    float* __restrict yq = y + q * K;  // (K)
    const int64_t w0 = q * g.sw - g.pl;
    int64_t k0 = 0;
    if (Kg == 1) {
      // Full blocks of channels: the accumulator stays in registers across the taps.
      for (; k0 + kBlock <= K; k0 += kBlock) {
        float acc[kBlock];
        for (int64_t j = 0; j < kBlock; ++j) acc[j] = bias ? bias[k0 + j] : 0.f;
        for (int64_t r = 0; r < R; ++r) {
          const int64_t h = h0 + r * g.dh;
          if (h < 0 || h >= H) continue;
          for (int64_t s = 0; s < S; ++s) {
            const int64_t v = w0 + s * g.dw;
            if (v < 0 || v >= W) continue;
            const float* __restrict xt = x + ((n * H + h) * W + v) * C + k0;  // (kBlock)
            const float* __restrict wt = w + (r * S + s) * K + k0;            // (kBlock)
            for (int64_t j = 0; j < kBlock; ++j) acc[j] += xt[j] * wt[j];
          }
        }
        for (int64_t j = 0; j < kBlock; ++j) yq[k0 + j] = acc[j];
      }
    }
    for (int64_t k = k0; k < K; ++k) yq[k] = bias ? bias[k] : 0.f;
    if (k0 == K) continue;
    for (int64_t r = 0; r < R; ++r) {
      const int64_t h = h0 + r * g.dh;
      if (h < 0 || h >= H) continue;
      for (int64_t s = 0; s < S; ++s) {
        const int64_t v = w0 + s * g.dw;
        if (v < 0 || v >= W) continue;
        const float* __restrict xt = x + ((n * H + h) * W + v) * C;  // (C)
        const float* __restrict wt = w + (r * S + s) * K;            // (K)
        if (Kg == 1) {
          for (int64_t k = k0; k < K; ++k) yq[k] += xt[k] * wt[k];
        } else {
          for (int64_t c = 0; c < C; ++c)
            for (int64_t j = 0; j < Kg; ++j) yq[c * Kg + j] += xt[c] * wt[c * Kg + j];
        }
      }
    }
  }
}

void backward_input_row_impl(float* dx, const float* dy, const float* w, const Geom& g,
                             int64_t n, int64_t h) {
  const int64_t C = g.C, K = g.K, R = g.R, S = g.S, P = g.P, Q = g.Q, Kg = g.Kg;
  const int64_t sh = g.sh, sw = g.sw;
  // Channel blocks [c0, c0 + kBlock) with a register accumulator when Kg == 1; the rest
  // (a remainder, or every channel when Kg > 1) accumulates in dx itself.
  const int64_t full = Kg == 1 ? C / kBlock * kBlock : 0;
  for (int64_t v = 0; v < g.W; ++v) {
    float* __restrict d = dx + v * C;  // (C)
    for (int64_t c0 = 0; c0 <= full; c0 += kBlock) {
      const bool blocked = c0 < full;
      if (!blocked && c0 == C) break;  // no remainder
      float acc[kBlock];
      for (int64_t j = 0; j < kBlock; ++j) acc[j] = 0.f;
      if (!blocked)
        for (int64_t c = full; c < C; ++c) d[c] = 0.f;
      for (int64_t r = 0; r < R; ++r) {
        const int64_t tp = h + g.pt - r * g.dh;  // = p * sh for the output row this tap reads
        if (tp < 0) break;                       // decreasing in r
        if ((sh > 1 && tp % sh != 0) || tp / sh >= P) continue;
        const int64_t p = tp / sh;
        for (int64_t s = 0; s < S; ++s) {
          const int64_t tq = v + g.pl - s * g.dw;
          if (tq < 0) break;
          if ((sw > 1 && tq % sw != 0) || tq / sw >= Q) continue;
          const float* __restrict dyq = dy + ((n * P + p) * Q + tq / sw) * K;  // (K)
          const float* __restrict wt = w + (r * S + s) * K;                    // (K)
          if (blocked) {
            for (int64_t j = 0; j < kBlock; ++j) acc[j] += dyq[c0 + j] * wt[c0 + j];
          } else if (Kg == 1) {
            for (int64_t c = full; c < C; ++c) d[c] += dyq[c] * wt[c];
          } else {
            for (int64_t c = 0; c < C; ++c) {
              float sum = 0.f;
              for (int64_t j = 0; j < Kg; ++j) sum += dyq[c * Kg + j] * wt[c * Kg + j];
              d[c] += sum;
            }
          }
        }
      }
      if (blocked)
        for (int64_t j = 0; j < kBlock; ++j) d[c0 + j] = acc[j];
    }
  }
}

void backward_weight_row_impl(float* dw, const float* x, const float* dy, const Geom& g,
                              int64_t n, int64_t p) {
  const int64_t H = g.H, W = g.W, C = g.C, K = g.K, S = g.S, Q = g.Q, Kg = g.Kg, sw = g.sw;
  const float* dyp = dy + (n * g.P + p) * Q * K;  // (Q, K)
  for (int64_t r = 0; r < g.R; ++r) {
    const int64_t h = p * g.sh - g.pt + r * g.dh;
    if (h < 0 || h >= H) continue;
    const float* xh = x + (n * H + h) * W * C;  // (W, C)
    for (int64_t s = 0; s < S; ++s) {
      // Output columns whose tap s lands inside the row: 0 <= q * sw + s * dw - pl < W.
      const int64_t lo_num = g.pl - s * g.dw, hi_num = W - 1 + g.pl - s * g.dw;
      if (hi_num < 0) continue;
      const int64_t q_lo = lo_num > 0 ? (lo_num + sw - 1) / sw : 0;
      const int64_t q_hi = hi_num / sw + 1 < Q ? hi_num / sw + 1 : Q;
      float* __restrict d = dw + (r * S + s) * K;  // (K)
      int64_t k0 = 0;
      if (Kg == 1) {
        // Full blocks of channels: the sum over q stays in registers.
        for (; k0 + kBlock <= K; k0 += kBlock) {
          float acc[kBlock];
          for (int64_t j = 0; j < kBlock; ++j) acc[j] = 0.f;
          for (int64_t q = q_lo; q < q_hi; ++q) {
            const float* __restrict xt = xh + (q * sw - lo_num) * C + k0;  // (kBlock)
            const float* __restrict dyq = dyp + q * K + k0;                // (kBlock)
            for (int64_t j = 0; j < kBlock; ++j) acc[j] += xt[j] * dyq[j];
          }
          for (int64_t j = 0; j < kBlock; ++j) d[k0 + j] += acc[j];
        }
        if (k0 == K) continue;
      }
      for (int64_t q = q_lo; q < q_hi; ++q) {
        const float* __restrict xt = xh + (q * sw - lo_num) * C;  // (C)
        const float* __restrict dyq = dyp + q * K;                // (K)
        if (Kg == 1) {
          for (int64_t k = k0; k < K; ++k) d[k] += xt[k] * dyq[k];
        } else {
          for (int64_t c = 0; c < C; ++c)
            for (int64_t j = 0; j < Kg; ++j) d[c * Kg + j] += xt[c] * dyq[c * Kg + j];
        }
      }
    }
  }
}

Kernels make_kernels() {
  return Kernels{forward_row_impl, backward_input_row_impl, backward_weight_row_impl};
}

}  // namespace
}  // namespace depthwise
}  // namespace fk
