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

// One block of B channels [k0, k0 + B) of PX output pixels from q0 (multiplier 1): the
// accumulators stay in registers across the taps, and each filter vector serves PX pixels.
// PX > 1 only for pixels whose taps all lie inside the row (no column test).
template <int64_t B, int PX>
void forward_block(float* __restrict yq, const float* x, const float* w, const float* bias,
                   const Geom& g, int64_t n, int64_t h0, int64_t w0, int64_t k0) {
  const int64_t H = g.H, W = g.W, C = g.C, K = g.K;
  float acc[PX][B];
  for (int i = 0; i < PX; ++i)
    for (int64_t j = 0; j < B; ++j) acc[i][j] = bias ? bias[k0 + j] : 0.f;
  for (int64_t r = 0; r < g.R; ++r) {
    const int64_t h = h0 + r * g.dh;
    if (h < 0 || h >= H) continue;
    for (int64_t s = 0; s < g.S; ++s) {
      const int64_t v = w0 + s * g.dw;
      if (PX == 1 && (v < 0 || v >= W)) continue;
      const float* __restrict wt = w + (r * g.S + s) * K + k0;  // (B)
#pragma GCC unroll 4
      for (int i = 0; i < PX; ++i) {
        const float* __restrict xt = x + ((n * H + h) * W + v + i * g.sw) * C + k0;  // (B)
        for (int64_t j = 0; j < B; ++j) acc[i][j] += xt[j] * wt[j];
      }
    }
  }
  for (int i = 0; i < PX; ++i)
    for (int64_t j = 0; j < B; ++j) yq[i * K + k0 + j] = acc[i][j];
}

// The channel blocks of PX pixels from q0 (multiplier 1); returns the first channel left.
template <int PX>
int64_t forward_blocks(float* yq, const float* x, const float* w, const float* bias,
                       const Geom& g, int64_t n, int64_t h0, int64_t w0) {
  const int64_t K = g.K;
  int64_t k0 = 0;
  for (; k0 + kBlock <= K; k0 += kBlock)
    forward_block<kBlock, PX>(yq, x, w, bias, g, n, h0, w0, k0);
  if (k0 + 32 <= K) forward_block<32, PX>(yq, x, w, bias, g, n, h0, w0, k0), k0 += 32;
  if (k0 + 16 <= K) forward_block<16, PX>(yq, x, w, bias, g, n, h0, w0, k0), k0 += 16;
  if (k0 + 8 <= K) forward_block<8, PX>(yq, x, w, bias, g, n, h0, w0, k0), k0 += 8;
  return k0;
}

// Channels [k0, K) of one output pixel (all of them when Kg > 1), accumulated in y.
void forward_rest(float* __restrict yq, const float* x, const float* w, const float* bias,
                  const Geom& g, int64_t n, int64_t h0, int64_t w0, int64_t k0) {
  const int64_t H = g.H, W = g.W, C = g.C, K = g.K, Kg = g.Kg;
  for (int64_t k = k0; k < K; ++k) yq[k] = bias ? bias[k] : 0.f;
  if (k0 == K) return;
  for (int64_t r = 0; r < g.R; ++r) {
    const int64_t h = h0 + r * g.dh;
    if (h < 0 || h >= H) continue;
    for (int64_t s = 0; s < g.S; ++s) {
      const int64_t v = w0 + s * g.dw;
      if (v < 0 || v >= W) continue;
      const float* __restrict xt = x + ((n * H + h) * W + v) * C;  // (C)
      const float* __restrict wt = w + (r * g.S + s) * K;          // (K)
      if (Kg == 1) {
        for (int64_t k = k0; k < K; ++k) yq[k] += xt[k] * wt[k];
      } else {
        for (int64_t c = 0; c < C; ++c)
          for (int64_t j = 0; j < Kg; ++j) yq[c * Kg + j] += xt[c] * wt[c * Kg + j];
      }
    }
  }
}

void forward_row_impl(float* y, const float* x, const float* w, const float* bias, const Geom& g,
                      int64_t n, int64_t p) {
  const int64_t W = g.W, K = g.K, Q = g.Q;
  const int64_t h0 = p * g.sh - g.pt;
  // Multiplier 1: channel blocks of 64, then one of 32, 16 and 8 each (per channel the same
  // sum in the same order as forward_rest's loop), kPx pixels at a time where all their taps
  // lie inside the row; the channels left over go through forward_rest.
  constexpr int kPx = 4;
  const int64_t span = (g.S - 1) * g.dw;  // a pixel's taps cover [w0, w0 + span]
  int64_t q = 0;
  while (q < Q) {
    const int64_t w0 = q * g.sw - g.pl;
    const bool inside = g.Kg == 1 && q + kPx <= Q && w0 >= 0 &&
                        w0 + (kPx - 1) * g.sw + span < W;
    const int px = inside ? kPx : 1;
    int64_t k0 = 0;
    if (g.Kg == 1)
      k0 = inside ? forward_blocks<kPx>(y + q * K, x, w, bias, g, n, h0, w0)
                  : forward_blocks<1>(y + q * K, x, w, bias, g, n, h0, w0);
    for (int i = 0; i < px; ++i)
      forward_rest(y + (q + i) * K, x, w, bias, g, n, h0, w0 + i * g.sw, k0);
    q += px;
  }
}

// Whether output row p = tp / sh (tp = h + pt - r * dh) is read by this tap (the stride divides
// it and it is inside); tp < 0 ends the taps (decreasing in r, in s for columns).
inline bool tap_reads(int64_t tp, int64_t stride, int64_t size) {
  return !((stride > 1 && tp % stride != 0) || tp / stride >= size);
}

// One block of B channels [c0, c0 + B) of dx pixel (h, v) (multiplier 1), in registers.
template <int64_t B>
void input_block(float* __restrict d, const float* dy, const float* w, const Geom& g, int64_t n,
                 int64_t h, int64_t v, int64_t c0) {
  const int64_t K = g.K, P = g.P, Q = g.Q;
  float acc[B];
  for (int64_t j = 0; j < B; ++j) acc[j] = 0.f;
  for (int64_t r = 0; r < g.R; ++r) {
    const int64_t tp = h + g.pt - r * g.dh;  // = p * sh for the output row this tap reads
    if (tp < 0) break;
    if (!tap_reads(tp, g.sh, P)) continue;
    for (int64_t s = 0; s < g.S; ++s) {
      const int64_t tq = v + g.pl - s * g.dw;
      if (tq < 0) break;
      if (!tap_reads(tq, g.sw, Q)) continue;
      const float* __restrict dyq = dy + ((n * P + tp / g.sh) * Q + tq / g.sw) * K + c0;  // (B)
      const float* __restrict wt = w + (r * g.S + s) * K + c0;                             // (B)
      for (int64_t j = 0; j < B; ++j) acc[j] += dyq[j] * wt[j];
    }
  }
  for (int64_t j = 0; j < B; ++j) d[c0 + j] = acc[j];
}

void backward_input_row_impl(float* dx, const float* dy, const float* w, const Geom& g,
                             int64_t n, int64_t h) {
  const int64_t C = g.C, K = g.K, R = g.R, S = g.S, P = g.P, Q = g.Q, Kg = g.Kg;
  for (int64_t v = 0; v < g.W; ++v) {
    float* __restrict d = dx + v * C;  // (C)
    // Multiplier 1: blocks of 64 channels, then one of 32, 16 and 8 each, with register
    // accumulators; the rest (or every channel when Kg > 1) accumulates in dx itself, the
    // same sums in the same order.
    int64_t c0 = 0;
    if (Kg == 1) {
      for (; c0 + kBlock <= C; c0 += kBlock) input_block<kBlock>(d, dy, w, g, n, h, v, c0);
      if (c0 + 32 <= C) input_block<32>(d, dy, w, g, n, h, v, c0), c0 += 32;
      if (c0 + 16 <= C) input_block<16>(d, dy, w, g, n, h, v, c0), c0 += 16;
      if (c0 + 8 <= C) input_block<8>(d, dy, w, g, n, h, v, c0), c0 += 8;
      if (c0 == C) continue;
    }
    for (int64_t c = c0; c < C; ++c) d[c] = 0.f;
    for (int64_t r = 0; r < R; ++r) {
      const int64_t tp = h + g.pt - r * g.dh;
      if (tp < 0) break;
      if (!tap_reads(tp, g.sh, P)) continue;
      for (int64_t s = 0; s < S; ++s) {
        const int64_t tq = v + g.pl - s * g.dw;
        if (tq < 0) break;
        if (!tap_reads(tq, g.sw, Q)) continue;
        const float* __restrict dyq = dy + ((n * P + tp / g.sh) * Q + tq / g.sw) * K;  // (K)
        const float* __restrict wt = w + (r * S + s) * K;                              // (K)
        if (Kg == 1) {
          for (int64_t c = c0; c < C; ++c) d[c] += dyq[c] * wt[c];
        } else {
          for (int64_t c = 0; c < C; ++c) {
            float sum = 0.f;
            for (int64_t j = 0; j < Kg; ++j) sum += dyq[c * Kg + j] * wt[c * Kg + j];
            d[c] += sum;
          }
        }
      }
    }
  }
}

// One filter tap's columns [q_lo, q_hi) of an output row, for backward-weight's blocks.
struct WeightSpan {
  const float* xh;   // the input row (W, C) of the tap's filter row
  const float* dyp;  // the output row's dy (Q, K)
  float* d;          // dw of the tap (K)
  int64_t C, K, sw, lo_num, q_lo, q_hi;
};

template <int64_t B>
void weight_block(const WeightSpan& sp, int64_t k0) {
  float acc[B];
  for (int64_t j = 0; j < B; ++j) acc[j] = 0.f;
  for (int64_t q = sp.q_lo; q < sp.q_hi; ++q) {
    const float* __restrict xt = sp.xh + (q * sp.sw - sp.lo_num) * sp.C + k0;  // (B)
    const float* __restrict dyq = sp.dyp + q * sp.K + k0;                      // (B)
    for (int64_t j = 0; j < B; ++j) acc[j] += xt[j] * dyq[j];
  }
  for (int64_t j = 0; j < B; ++j) sp.d[k0 + j] += acc[j];
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
        // Blocks of 64 channels, then one of 32, 16 and 8 each: the sum over q stays in
        // registers.
        const WeightSpan sp{xh, dyp, d, C, K, sw, lo_num, q_lo, q_hi};
        for (; k0 + kBlock <= K; k0 += kBlock) weight_block<kBlock>(sp, k0);
        if (k0 + 32 <= K) weight_block<32>(sp, k0), k0 += 32;
        if (k0 + 16 <= K) weight_block<16>(sp, k0), k0 += 16;
        if (k0 + 8 <= K) weight_block<8>(sp, k0), k0 += 8;
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
