// direct_impl.h: the direct-convolution row kernel, included by direct_avx2.cpp and
// direct_avx512.cpp only (see direct_kernels.h), each defining FK_DIRECT_VW (floats per vector)
// and FK_DIRECT_REGS (vector registers) first. Written with GCC vector extensions so one text
// serves both ISAs; everything is in an anonymous namespace (each includer its own copy).
//
// Register block: PB pixels x NV vectors, PB * NV accumulators; blocks of NV = NVMAX vectors
// first, then one narrower block for the rest of K. Columns are covered by the fewest blocks of
// at most PBMAX pixels, of balanced sizes (see columns).
#pragma once

#include <cstdint>
#include <utility>

#include "direct_kernels.h"
#include "fkeras/kernels.h"

namespace fk {
namespace direct {
namespace {

constexpr int kVW = FK_DIRECT_VW;
typedef float vf __attribute__((vector_size(kVW * 4)));
typedef float vfu __attribute__((vector_size(kVW * 4), aligned(4), may_alias));

inline vf load(const float* p) { return *reinterpret_cast<const vfu*>(p); }
inline void store(float* p, vf v) { *reinterpret_cast<vfu*>(p) = v; }

// Pixels per block for NV vectors of channels: the accumulators plus the NV filter vectors
// (plus one broadcast register without AVX-512's embedded broadcast) fit the register file.
template <int NV>
constexpr int pb_max() {
  return FK_DIRECT_REGS == 32 ? 24 / NV : (15 - NV) / NV;
}
constexpr int kNvMax = FK_DIRECT_REGS == 32 ? 4 : 2;

// y[q0 : q0+PB, k0 : k0 + NV*kVW] (+)= sum over r in [r0, r1), all (s, c) of x * w; starting
// from bias (or 0) when `first`, else from y; the last pass (r1 == R) stores g.activation of
// the sums when it is kRelu / kLeakyRelu (one pass over y, the values still in registers).
template <int NV, int PB>
void block(float* __restrict y, const float* __restrict xr, const float* __restrict w,
           const float* __restrict bias, const Geom& g, int64_t q0, int64_t k0, int64_t r0,
           int64_t r1, bool first) {
  vf acc[PB][NV];
  const int64_t C = g.C, K = g.K, xs = g.sw * C;
  float* __restrict yb = y + q0 * K + k0;  // (PB, K) from k0
  if (first) {
    // The block's output lines are usually not in cache (a batch's output outgrows L2): fetch
    // them for writing now, so that the stores after the reduction do not wait on them
    // (measured: CNN layer 2, 64x26x26 32->64, 1 thread: 6.2-6.6 -> 5.5-5.8 ms; prefetching
    // the next block's lines too was no better).
#pragma GCC unroll 32
    for (int i = 0; i < PB; ++i)
#pragma GCC unroll 4
      for (int j = 0; j < NV; ++j) __builtin_prefetch(yb + i * K + j * kVW, 1, 3);
    for (int j = 0; j < NV; ++j) {
      const vf b = bias ? load(bias + k0 + j * kVW) : vf{};
#pragma GCC unroll 32
      for (int i = 0; i < PB; ++i) acc[i][j] = b;
    }
  } else {
#pragma GCC unroll 32
    for (int i = 0; i < PB; ++i)
#pragma GCC unroll 4
      for (int j = 0; j < NV; ++j) acc[i][j] = load(yb + i * K + j * kVW);
  }
  // Without column dilation the taps (s, c) of a filter row are S*C adjacent floats of the
  // input row and S*C adjacent rows of w: one loop of S*C instead of S loops of C.
  const int64_t taps = g.dw == 1 ? 1 : g.S, run = g.dw == 1 ? g.S * C : C;
  for (int64_t r = r0; r < r1; ++r) {
    for (int64_t s = 0; s < taps; ++s) {
      const float* __restrict xb = xr + r * g.dh * g.ld_row + (q0 * g.sw + s * g.dw) * C;
      const float* __restrict wb = w + (r * g.S + s) * C * K + k0;  // (run, K) from k0
      for (int64_t c = 0; c < run; ++c) {
        vf wv[NV];
#pragma GCC unroll 4
        for (int j = 0; j < NV; ++j) wv[j] = load(wb + c * K + j * kVW);
#pragma GCC unroll 32
        for (int i = 0; i < PB; ++i) {
          const float xv = xb[i * xs + c];
#pragma GCC unroll 4
          for (int j = 0; j < NV; ++j) acc[i][j] += xv * wv[j];
        }
      }
    }
  }
  if (r1 == g.rows_end() && g.activation == kRelu) {
    const vf zero{};
#pragma GCC unroll 32
    for (int i = 0; i < PB; ++i)
#pragma GCC unroll 4
      for (int j = 0; j < NV; ++j) acc[i][j] = acc[i][j] < zero ? zero : acc[i][j];  // NaN kept
  } else if (r1 == g.rows_end() && g.activation == kLeakyRelu) {
    const vf zero{};
    const float a = g.alpha;
#pragma GCC unroll 32
    for (int i = 0; i < PB; ++i)
#pragma GCC unroll 4
      for (int j = 0; j < NV; ++j) acc[i][j] = acc[i][j] > zero ? acc[i][j] : a * acc[i][j];
  }
#pragma GCC unroll 32
  for (int i = 0; i < PB; ++i)
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j) store(yb + i * K + j * kVW, acc[i][j]);
}

// block<NV, pb> for a run-time pb in [1, P] (one instantiation per size).
template <int NV, int P>
void block_of(int64_t pb, float* y, const float* xr, const float* w, const float* bias,
              const Geom& g, int64_t q0, int64_t k0, int64_t r0, int64_t r1, bool first) {
  if constexpr (P > 1) {
    if (pb < P) {
      block_of<NV, P - 1>(pb, y, xr, w, bias, g, q0, k0, r0, r1, first);
      return;
    }
  }
  block<NV, P>(y, xr, w, bias, g, q0, k0, r0, r1, first);
}

// All columns of the row for channels [k0, k0 + NV*kVW). When the filter slice these channels
// read (R*S*C*NV vectors) outgrows L1, the filter rows r are taken one at a time over all
// column blocks (the partial sums go through y, which stays in L1), so that the slice of one
// filter row is reused from L1 by every column block. The Q columns are split into the fewest
// blocks of at most PB pixels, of balanced sizes (Q = 26, PB = 12: 9 + 9 + 8, not
// 12 + 12 + 2, whose 2-pixel block has too few accumulator chains to keep the FMA units busy).
template <int NV>
void columns(float* y, const float* xr, const float* w, const float* bias, const Geom& g,
             int64_t k0) {
  constexpr int PB = pb_max<NV>();
  const int64_t Q = g.Q;
  if (Q <= 0) return;
  const int64_t slice_bytes = g.R * g.S * g.C * NV * kVW * 4;
  const int64_t rstep = (slice_bytes > g.slice_bytes && g.R > 1) ? 1 : g.R;
  const int64_t nb = (Q + PB - 1) / PB, small = Q / nb, big = nb - Q % nb;  // big: # of `small`
  const int64_t r_end = g.rows_end();
  for (int64_t r0 = g.r_lo; r0 < r_end; r0 += rstep) {
    const int64_t r1 = r0 + rstep < r_end ? r0 + rstep : r_end;
    const bool first = r0 == g.r_lo;
    int64_t q0 = 0;
    for (int64_t b = 0; b < nb; ++b) {
      const int64_t pb = b < big ? small : small + 1;
      if (pb == PB) {
        block<NV, PB>(y, xr, w, bias, g, q0, k0, r0, r1, first);
      } else {
        block_of<NV, PB>(pb, y, xr, w, bias, g, q0, k0, r0, r1, first);
      }
      q0 += pb;
    }
  }
}

void row_impl(float* y, const float* xr, const float* w, const float* bias, const Geom& g) {
  const int64_t nv = g.K / kVW;
  int64_t v = 0;
  for (; v + kNvMax <= nv; v += kNvMax) columns<kNvMax>(y, xr, w, bias, g, v * kVW);
  switch (nv - v) {
    case 1: columns<1>(y, xr, w, bias, g, v * kVW); break;
    case 2: columns<(kNvMax >= 3 ? 2 : 1)>(y, xr, w, bias, g, v * kVW); break;
    case 3: columns<(kNvMax >= 4 ? 3 : 1)>(y, xr, w, bias, g, v * kVW); break;
    default: break;
  }
}

// ---- narrow filters (K < kVW): the dot-product form ---------------------------------------
// A block of PB pixels x K filters: y[q, k] = bias[k] + sum over r of dot(the pixel's run of
// S*C input floats in filter row r, wt[k, r]), the run and wt[k, r] read a vector at a time (PB
// * K accumulators), the run's last S*C mod kVW floats one at a time (never past the run: the
// floats after it are the next pixels' input, and Inf * 0 would be NaN), then each
// accumulator's lanes added. wt (K, R, S*C): w transposed (direct.cpp). Requires dw == 1.
template <int K>
constexpr int narrow_pb() {
  constexpr int most = (FK_DIRECT_REGS - 2 - K) / K;
  return most < 1 ? 1 : (most > 8 ? 8 : most);
}

// The lanes of v added as a tree: halves added until 4 lanes remain (log2 kVW vector adds).
typedef float vf8 __attribute__((vector_size(32)));
typedef float vf4 __attribute__((vector_size(16)));

inline float lanes_sum4(vf4 v) {
  const vf4 t = v + __builtin_shufflevector(v, v, 2, 3, 0, 1);
  return t[0] + t[1];
}

inline float lanes_sum8(vf8 v) {
  return lanes_sum4(__builtin_shufflevector(v, v, 0, 1, 2, 3) +
                    __builtin_shufflevector(v, v, 4, 5, 6, 7));
}

inline float lanes_sum(vf v) {
#if FK_DIRECT_VW == 16
  return lanes_sum8(__builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7) +
                    __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15));
#elif FK_DIRECT_VW == 8
  return lanes_sum8(v);
#else
#error "direct_impl.h: vectors of 8 or 16 floats"
#endif
}

template <int K, int PB>
void narrow_block(float* __restrict y, const float* __restrict xr, const float* __restrict wt,
                  const float* __restrict bias, const Geom& g, int64_t q0) {
  const int64_t run = g.S * g.C, xs = g.sw * g.C, ws = g.R * run, whole = run / kVW * kVW;
  vf acc[PB][K];
  float tail[PB][K];
#pragma GCC unroll 8
  for (int i = 0; i < PB; ++i)
#pragma GCC unroll 16
    for (int k = 0; k < K; ++k) acc[i][k] = vf{}, tail[i][k] = 0.f;
  for (int64_t r = g.r_lo; r < g.rows_end(); ++r) {
    const float* __restrict xb = xr + r * g.dh * g.ld_row + q0 * xs;
    const float* __restrict wb = wt + r * run;
    for (int64_t e = 0; e < whole; e += kVW) {
      vf wv[K];
#pragma GCC unroll 16
      for (int k = 0; k < K; ++k) wv[k] = load(wb + k * ws + e);
#pragma GCC unroll 8
      for (int i = 0; i < PB; ++i) {
        const vf xv = load(xb + i * xs + e);
#pragma GCC unroll 16
        for (int k = 0; k < K; ++k) acc[i][k] += xv * wv[k];
      }
    }
    for (int64_t e = whole; e < run; ++e)
#pragma GCC unroll 8
      for (int i = 0; i < PB; ++i)
#pragma GCC unroll 16
        for (int k = 0; k < K; ++k) tail[i][k] += xb[i * xs + e] * wb[k * ws + e];
  }
#pragma GCC unroll 8
  for (int i = 0; i < PB; ++i)
#pragma GCC unroll 16
    for (int k = 0; k < K; ++k)
      y[(q0 + i) * K + k] = (bias ? bias[k] : 0.f) + (lanes_sum(acc[i][k]) + tail[i][k]);
}

template <int K>
void narrow_row(float* y, const float* xr, const float* wt, const float* bias, const Geom& g) {
  constexpr int PB = narrow_pb<K>();
  int64_t q = 0;
  for (; q + PB <= g.Q; q += PB) narrow_block<K, PB>(y, xr, wt, bias, g, q);
  for (; q < g.Q; ++q) narrow_block<K, 1>(y, xr, wt, bias, g, q);
}

// narrow_row<K> for K in [1, kVW) (kNarrow[K - 1]), built at compile time.
template <int... Ks>
struct NarrowTable {
  RowFn fn[sizeof...(Ks)] = {&narrow_row<Ks + 1>...};
};
template <int... Ks>
constexpr NarrowTable<Ks...> narrow_table(std::integer_sequence<int, Ks...>) {
  return NarrowTable<Ks...>{};
}

void narrow_impl(float* y, const float* xr, const float* wt, const float* bias, const Geom& g) {
  static constexpr auto table = narrow_table(std::make_integer_sequence<int, kVW - 1>{});
  table.fn[g.K - 1](y, xr, wt, bias, g);
}

// Backward-weight of narrow filters (K < kVW): the transposed filter gradient dwt (K, R, S*C)
// += sum over the pixels of `rows` output rows of dy[pixel, k] * the pixel's run in filter row
// r, NV vectors of one (k, r) run per sweep over the pixels (a broadcast of dy, NV loads and
// FMAs per pixel); the run's last S*C mod kVW floats one at a time.
constexpr int kNarrowWMax = FK_DIRECT_REGS == 32 ? 12 : 6;

template <int NV>
void narrow_wblock(float* __restrict dwt, const float* __restrict xr, const float* __restrict dy,
                   const WGeom& g, int64_t rows, int64_t k, int64_t xoff) {
  vf acc[NV];
#pragma GCC unroll 12
  for (int j = 0; j < NV; ++j) acc[j] = load(dwt + j * kVW);
  const int64_t K = g.K, Q = g.Q, xs = g.sw * g.C;
  for (int64_t p = 0; p < rows; ++p) {
    const float* __restrict xp = xr + p * g.sh * g.ld_row + xoff;
    const float* __restrict dp = dy + p * Q * K + k;
    for (int64_t q = 0; q < Q; ++q) {
      const float d = dp[q * K];
      const float* __restrict xq = xp + q * xs;
#pragma GCC unroll 12
      for (int j = 0; j < NV; ++j) acc[j] += d * load(xq + j * kVW);
    }
  }
#pragma GCC unroll 12
  for (int j = 0; j < NV; ++j) store(dwt + j * kVW, acc[j]);
}

using NarrowWFn = void (*)(float*, const float*, const float*, const WGeom&, int64_t, int64_t,
                           int64_t);

template <int... Ns>
struct NarrowWTable {
  NarrowWFn fn[sizeof...(Ns)] = {&narrow_wblock<Ns + 1>...};
};
template <int... Ns>
constexpr NarrowWTable<Ns...> narrow_w_table(std::integer_sequence<int, Ns...>) {
  return NarrowWTable<Ns...>{};
}

void narrow_weight_impl(float* dwt, const float* xr, const float* dy, const WGeom& g,
                        int64_t rows) {
  static constexpr auto table = narrow_w_table(std::make_integer_sequence<int, kNarrowWMax>{});
  const int64_t run = g.T / g.R, whole = run / kVW * kVW, K = g.K, Q = g.Q, xs = g.sw * g.C;
  for (int64_t k = 0; k < K; ++k)
    for (int64_t r = 0; r < g.R; ++r) {
      float* base = dwt + (k * g.R + r) * run;
      const int64_t xoff = r * g.dh * g.ld_row;
      for (int64_t e = 0; e < whole; e += kNarrowWMax * kVW) {
        const int64_t nv = (whole - e) / kVW < kNarrowWMax ? (whole - e) / kVW : kNarrowWMax;
        table.fn[nv - 1](base + e, xr, dy, g, rows, k, xoff + e);
      }
      for (int64_t e = whole; e < run; ++e) {
        float a = base[e];
        for (int64_t p = 0; p < rows; ++p) {
          const float* xp = xr + p * g.sh * g.ld_row + xoff + e;
          const float* dp = dy + p * Q * K + k;
          for (int64_t q = 0; q < Q; ++q) a += dp[q * K] * xp[q * xs];
        }
        base[e] = a;
      }
    }
}

// dwp[t0 : t0+RB, k0 : k0 + NV*kVW] += sum over the pixels of x(t, pixel) * dy[pixel] (see
// WGeom): RB filter rows x NV vectors of accumulators, over every pixel of the rows.
template <int NV, int RB>
void wblock(float* __restrict dwp, const float* __restrict xr, const float* __restrict dy,
            const int64_t* __restrict off, const WGeom& g, int64_t rows, int64_t t0,
            int64_t k0) {
  vf acc[RB][NV];
  int64_t o[RB];
  const int64_t K = g.K, Q = g.Q, xs = g.sw * g.C;
#pragma GCC unroll 32
  for (int i = 0; i < RB; ++i) {
    o[i] = off[t0 + i];
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j) acc[i][j] = load(dwp + (t0 + i) * K + k0 + j * kVW);
  }
  for (int64_t p = 0; p < rows; ++p) {
    const float* __restrict xp = xr + p * g.sh * g.ld_row;  // pixel (p, 0)
    const float* __restrict dp = dy + p * Q * K + k0;       // (Q, K) from k0
    for (int64_t q = 0; q < Q; ++q) {
      const float* __restrict xq = xp + q * xs;
      vf d[NV];
#pragma GCC unroll 4
      for (int j = 0; j < NV; ++j) d[j] = load(dp + q * K + j * kVW);
#pragma GCC unroll 32
      for (int i = 0; i < RB; ++i) {
        const float xv = xq[o[i]];
#pragma GCC unroll 4
        for (int j = 0; j < NV; ++j) acc[i][j] += xv * d[j];
      }
    }
  }
#pragma GCC unroll 32
  for (int i = 0; i < RB; ++i)
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j) store(dwp + (t0 + i) * K + k0 + j * kVW, acc[i][j]);
}

// All filter rows for channels [k0, k0 + NV*kVW): blocks of as many rows as the forward's
// pixels (same register budget), then smaller blocks for the rest (accumulating: no overlap).
template <int NV>
void wrows(float* dwp, const float* xr, const float* dy, const int64_t* off, const WGeom& g,
           int64_t rows, int64_t k0) {
  constexpr int RB = pb_max<NV>();
  const int64_t T = g.T;
  int64_t t0 = 0;
  for (; t0 + RB <= T; t0 += RB) wblock<NV, RB>(dwp, xr, dy, off, g, rows, t0, k0);
  for (; t0 + 8 <= T; t0 += 8) wblock<NV, (RB >= 8 ? 8 : 1)>(dwp, xr, dy, off, g, rows, t0, k0);
  for (; t0 + 4 <= T; t0 += 4) wblock<NV, (RB >= 4 ? 4 : 1)>(dwp, xr, dy, off, g, rows, t0, k0);
  for (; t0 + 2 <= T; t0 += 2) wblock<NV, 2>(dwp, xr, dy, off, g, rows, t0, k0);
  for (; t0 < T; ++t0) wblock<NV, 1>(dwp, xr, dy, off, g, rows, t0, k0);
}

void weight_impl(float* dwp, const float* xr, const float* dy, const int64_t* off,
                 const WGeom& g, int64_t rows) {
  const int64_t nv = g.K / kVW;
  int64_t v = 0;
  for (; v + kNvMax <= nv; v += kNvMax) wrows<kNvMax>(dwp, xr, dy, off, g, rows, v * kVW);
  switch (nv - v) {
    case 1: wrows<1>(dwp, xr, dy, off, g, rows, v * kVW); break;
    case 2: wrows<(kNvMax >= 3 ? 2 : 1)>(dwp, xr, dy, off, g, rows, v * kVW); break;
    case 3: wrows<(kNvMax >= 4 ? 3 : 1)>(dwp, xr, dy, off, g, rows, v * kVW); break;
    default: break;
  }
}

Kernels make_kernels() {
  return Kernels{row_impl, weight_impl, narrow_impl, narrow_weight_impl, kVW};
}

}  // namespace
}  // namespace direct
}  // namespace fk
