// direct_avx512_bf16.cpp: the direct convolution with bf16 products (the mixed_bfloat16 policy,
// runtime.h gemm_bf16_active()): operands rounded to bf16 by VCVTNEPS2BF16 (nearest even, NaN
// kept, denormals read as zero, as the bf16 GEMM), products accumulated in fp32 by VDPBF16PS.
// Compiled with the AVX-512 flags plus -mavx512bf16; direct.cpp enters it only under the flag.
// Plain functions on raw pointers (no std templates: nothing here may be merged into code that
// runs on CPUs without these instructions).
//
// VDPBF16PS adds two products per fp32 lane, so the reduction runs over PAIRS:
// - forward (and backward-input, the same kernel): pairs of consecutive taps of a filter row's
//   run (S*C adjacent values without column dilation, else C per tap). The input is a padded
//   bf16 copy (rows, Wp, C): one 32-bit broadcast reads the pair of a pixel; the filter is
//   packed as (R, taps, ceil(run / 2), K) pairs. An odd run's last pair has a zero filter
//   partner; its input half is the copy's next value (the copy ends with one zero), or, when
//   the input holds Inf or NaN (Geom::finite_input false), zero (a 16-bit load): no 0 * Inf.
// - backward-weight: pairs of adjacent output pixels (q, q+1) of a row. dy is packed as
//   (rows, ceil(Q / 2), K) pairs (partner of an odd Q's last pixel: zero); the input copy is
//   (rows, Wp, C) pairs (x[col], x[col + sw]): the pair of filter row t for pixels (q, q+1) is
//   the one at the fp32 copy's offset of (t, q). An odd Q's last pair keeps the low half only.
// Register blocks as direct_impl.h (32 zmm: PB pixels or RB filter rows x NV vectors), but the
// pixels of a row (the filter rows) are split into balanced blocks (Split), no overlapped or
// short tail blocks.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

#include <cstdint>
#include <cstring>

#include "direct_kernels.h"
#include "fkeras/kernels.h"

namespace fk {
namespace direct {
namespace {

constexpr int kNvMax = 4;

inline __mmask16 lanes(int64_t n) {
  return n >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << n) - 1u);
}

inline __m256i to_bf16(__m512 v) { return reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(v)); }

inline uint32_t load_u32(const uint16_t* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

inline __m512bh bcast(uint32_t v) {
  return reinterpret_cast<__m512bh>(_mm512_set1_epi32(static_cast<int>(v)));
}

// 16 pairs: lane j holds (r0[j], r1[j]), r0 in the low half.
inline __m512i pairs_across(__m512 r0, __m512 r1) {
  const __m512i idx = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9,
                                       24, 8, 23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1,
                                       16, 0);
  return _mm512_permutexvar_epi16(idx, reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(r1, r0)));
}

// dst[0:n] = bf16(src[0:n]).
void round_run(uint16_t* dst, const float* src, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), to_bf16(_mm512_loadu_ps(src + i)));
  if (i < n) {
    const __mmask16 m = lanes(n - i);
    _mm256_mask_storeu_epi16(dst + i, m, to_bf16(_mm512_maskz_loadu_ps(m, src + i)));
  }
}

void zero_run(uint16_t* dst, int64_t n) {
  if (n > 0) std::memset(dst, 0, static_cast<size_t>(n) * sizeof(uint16_t));
}

// buf (rows, Wp, C) = bf16 of columns [w_lo, w_lo + Wp) of rows [h_lo, h_lo + rows) of image n
// of x (N, H, W, C), zero outside the input (direct.cpp pad_rows, rounded), then one zero.
void pad_rows_impl(uint16_t* buf, const float* x, int64_t n, int64_t h_lo, int64_t rows,
                   int64_t w_lo, int64_t Wp, int64_t H, int64_t W, int64_t C) {
  const int64_t ld = Wp * C;
  int64_t c0 = -w_lo < 0 ? 0 : -w_lo;
  int64_t c1 = W - w_lo < Wp ? W - w_lo : Wp;
  if (c1 < c0) c1 = c0;
  for (int64_t i = 0; i < rows; ++i) {
    uint16_t* dst = buf + i * ld;
    const int64_t h = h_lo + i;
    if (h < 0 || h >= H || c1 == c0) {
      zero_run(dst, ld);
      continue;
    }
    zero_run(dst, c0 * C);
    round_run(dst + c0 * C, x + ((n * H + h) * W + w_lo + c0) * C, (c1 - c0) * C);
    zero_run(dst + c1 * C, (Wp - c1) * C);
  }
  buf[rows * ld] = 0;
}

// xq (rows, Wp, C) pairs (x[.., col, c], x[.., col + sw, c]) of the padded rows; tmp holds
// rows x (Wp + sw) x C bf16.
void pair_rows_impl(uint32_t* xq, uint16_t* tmp, const float* x, int64_t n, int64_t h_lo,
                    int64_t rows, int64_t w_lo, int64_t Wp, int64_t H, int64_t W, int64_t C,
                    int64_t sw) {
  const int64_t ldt = (Wp + sw) * C, ld = Wp * C;
  pad_rows_impl(tmp, x, n, h_lo, rows, w_lo, Wp + sw, H, W, C);
  for (int64_t i = 0; i < rows; ++i) {
    const uint16_t* lo = tmp + i * ldt;
    const uint16_t* hi = lo + sw * C;
    uint32_t* dst = xq + i * ld;
    int64_t e = 0;
    for (; e < ld; e += 16) {
      const __mmask16 m = lanes(ld - e);
      const __m512i a = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, lo + e));
      const __m512i b = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, hi + e));
      _mm512_mask_storeu_epi32(dst + e, m, _mm512_or_si512(a, _mm512_slli_epi32(b, 16)));
    }
  }
}

// wp (R, taps, ceil(run / 2), K) pairs of w (R, S, C, K) (see the file comment).
void pack_filter_impl(uint32_t* wp, const float* w, const Geom& g) {
  const int64_t taps = g.dw == 1 ? 1 : g.S, run = g.dw == 1 ? g.S * g.C : g.C;
  const int64_t runp = (run + 1) / 2, K = g.K;
  for (int64_t r = 0; r < g.R; ++r)
    for (int64_t s = 0; s < taps; ++s) {
      const float* base = w + (r * g.S + s) * g.C * K;  // (run, K)
      uint32_t* dst = wp + (r * taps + s) * runp * K;
      for (int64_t cp = 0; cp < runp; ++cp) {
        const bool half = 2 * cp + 1 >= run;
        for (int64_t k = 0; k < K; k += 16) {
          const __mmask16 m = lanes(K - k);
          const __m512 lo = _mm512_maskz_loadu_ps(m, base + 2 * cp * K + k);
          const __m512 hi = half ? _mm512_setzero_ps()
                                 : _mm512_maskz_loadu_ps(m, base + (2 * cp + 1) * K + k);
          _mm512_mask_storeu_epi32(dst + cp * K + k, m, pairs_across(lo, hi));
        }
      }
    }
}

// dyp (rows, ceil(Q / 2), K) pairs of adjacent pixels of dy (rows, Q, K).
void pack_dy_impl(uint32_t* dyp, const float* dy, int64_t rows, int64_t Q, int64_t K) {
  const int64_t Qp = (Q + 1) / 2;
  for (int64_t p = 0; p < rows; ++p)
    for (int64_t qp = 0; qp < Qp; ++qp) {
      const float* lo = dy + (p * Q + 2 * qp) * K;
      const bool half = 2 * qp + 1 >= Q;
      uint32_t* dst = dyp + (p * Qp + qp) * K;
      for (int64_t k = 0; k < K; k += 16) {
        const __mmask16 m = lanes(K - k);
        const __m512 a = _mm512_maskz_loadu_ps(m, lo + k);
        const __m512 b = half ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(m, lo + K + k);
        _mm512_mask_storeu_epi32(dst + k, m, pairs_across(a, b));
      }
    }
}

// ---- forward row -----------------------------------------------------------------------------
// y[q0 : q0+PB, k0 : k0 + 16 NV] (+)= sum over r in [r0, r1) and the pairs of each tap run;
// from bias (or 0) when `first`, else from y.
template <int NV, int PB>
void block(float* __restrict y, const uint16_t* __restrict xr, const uint32_t* __restrict wp,
           const float* __restrict bias, const Geom& g, int64_t q0, int64_t k0, int64_t r0,
           int64_t r1, bool first) {
  __m512 acc[PB][NV];
  const int64_t K = g.K, xs = g.sw * g.C;
  float* __restrict yb = y + q0 * K + k0;
  if (first) {
    // The output lines are fetched for writing now, as the fp32 kernel does (direct_impl.h).
    // With the relu below in the same store, the benchmark CNN's first layer (64x28x28 1->32,
    // relu, 1 thread, process CPU time) went from 0.30-0.32 to 0.21 ms (fp32: 0.20-0.22).
#pragma GCC unroll 24
    for (int i = 0; i < PB; ++i)
#pragma GCC unroll 4
      for (int j = 0; j < NV; ++j) __builtin_prefetch(yb + i * K + 16 * j, 1, 3);
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j) {
      const __m512 b = bias ? _mm512_loadu_ps(bias + k0 + 16 * j) : _mm512_setzero_ps();
#pragma GCC unroll 24
      for (int i = 0; i < PB; ++i) acc[i][j] = b;
    }
  } else {
#pragma GCC unroll 24
    for (int i = 0; i < PB; ++i)
#pragma GCC unroll 4
      for (int j = 0; j < NV; ++j) acc[i][j] = _mm512_loadu_ps(yb + i * K + 16 * j);
  }
  const int64_t taps = g.dw == 1 ? 1 : g.S, run = g.dw == 1 ? g.S * g.C : g.C;
  const int64_t full = run / 2, runp = (run + 1) / 2;
  for (int64_t r = r0; r < r1; ++r) {
    for (int64_t s = 0; s < taps; ++s) {
      const uint16_t* __restrict xb = xr + r * g.dh * g.ld_row + (q0 * g.sw + s * g.dw) * g.C;
      const uint32_t* __restrict wb = wp + (r * taps + s) * runp * K + k0;
      for (int64_t cp = 0; cp < full; ++cp) {
        __m512bh wv[NV];
#pragma GCC unroll 4
        for (int j = 0; j < NV; ++j)
          wv[j] = reinterpret_cast<__m512bh>(_mm512_loadu_si512(wb + cp * K + 16 * j));
#pragma GCC unroll 24
        for (int i = 0; i < PB; ++i) {
          const __m512bh xv = bcast(load_u32(xb + i * xs + 2 * cp));
#pragma GCC unroll 4
          for (int j = 0; j < NV; ++j) acc[i][j] = _mm512_dpbf16_ps(acc[i][j], xv, wv[j]);
        }
      }
      if (run & 1) {  // the last tap: its filter partner is zero
        __m512bh wv[NV];
#pragma GCC unroll 4
        for (int j = 0; j < NV; ++j)
          wv[j] = reinterpret_cast<__m512bh>(_mm512_loadu_si512(wb + full * K + 16 * j));
#pragma GCC unroll 24
        for (int i = 0; i < PB; ++i) {
          // A finite input: the pair's high half (the next value of the copy, finite, or the
          // zero after the copy) times zero adds zero. Else read the low half alone (16-bit
          // load, zero-extended; measured 2x slower at C = 1 than the 32-bit broadcast).
          const __m512bh xv = g.finite_input ? bcast(load_u32(xb + i * xs + 2 * full))
                                             : bcast(xb[i * xs + 2 * full]);
#pragma GCC unroll 4
          for (int j = 0; j < NV; ++j) acc[i][j] = _mm512_dpbf16_ps(acc[i][j], xv, wv[j]);
        }
      }
    }
  }
  // The last pass stores g.activation of the sums when it is kRelu / kLeakyRelu, as the fp32
  // kernel: the same comparisons (NaN kept), so the values are those of activation_inplace.
  if (r1 == g.rows_end() && g.activation == kRelu) {
    const __m512 zero = _mm512_setzero_ps();
#pragma GCC unroll 24
    for (int i = 0; i < PB; ++i)
#pragma GCC unroll 4
      for (int j = 0; j < NV; ++j)
        acc[i][j] = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(acc[i][j], zero, _CMP_LT_OQ),
                                         acc[i][j], zero);
  } else if (r1 == g.rows_end() && g.activation == kLeakyRelu) {
    const __m512 zero = _mm512_setzero_ps(), a = _mm512_set1_ps(g.alpha);
#pragma GCC unroll 24
    for (int i = 0; i < PB; ++i)
#pragma GCC unroll 4
      for (int j = 0; j < NV; ++j)
        acc[i][j] = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(acc[i][j], zero, _CMP_GT_OQ),
                                         _mm512_mul_ps(a, acc[i][j]), acc[i][j]);
  }
#pragma GCC unroll 24
  for (int i = 0; i < PB; ++i)
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j) _mm512_storeu_ps(yb + i * K + 16 * j, acc[i][j]);
}

// Blocks of at most kMaxBlock[NV - 1] pixels (forward) or filter rows (backward-weight): the
// NV * B accumulators, the NV vectors of the other operand and a broadcast fill the 32 zmm
// registers (NV = 1 stops at 24).
constexpr int kMaxBlock[kNvMax] = {24, 14, 9, 6};

// n items in the fewest blocks of at most `most`, balanced: sizes differ by at most one (a
// short tail block would run its few accumulator chains at the dpbf16 latency, not its
// throughput: measured 2.5x slower at C = 1's 9 filter rows as 8 + 1).
struct Split {
  int64_t blocks, base, extra;  // the first `extra` blocks have base + 1 items
  Split(int64_t n, int64_t most)
      : blocks((n + most - 1) / most), base(n / blocks), extra(n % blocks) {}
  int64_t start(int64_t i) const { return i * base + (i < extra ? i : extra); }
  int64_t size(int64_t i) const { return base + (i < extra ? 1 : 0); }
};

using BlockFn = void (*)(float*, const uint16_t*, const uint32_t*, const float*, const Geom&,
                         int64_t, int64_t, int64_t, int64_t, bool);

// fn[b - 1] = block<NV, b>, built at compile time (no static initializer runs AVX-512 code).
template <int NV>
struct BlockTable {
  BlockFn fn[kMaxBlock[NV - 1]] = {};
  template <int B>
  constexpr void fill() {
    if constexpr (B >= 1) {
      fn[B - 1] = &block<NV, B>;
      fill<B - 1>();
    }
  }
  constexpr BlockTable() { fill<kMaxBlock[NV - 1]>(); }
};

// All columns of the row for channels [k0, k0 + 16 NV), in balanced pixel blocks; when the
// packed filter slice outgrows g.slice_bytes, the filter rows one at a time over all blocks
// (partial sums through y, which stays in L1), as direct_impl.h's columns.
template <int NV>
void columns(float* y, const uint16_t* xr, const uint32_t* wp, const float* bias, const Geom& g,
             int64_t k0) {
  static constexpr BlockTable<NV> table;
  const int64_t taps = g.dw == 1 ? 1 : g.S, run = g.dw == 1 ? g.S * g.C : g.C;
  const int64_t slice_bytes = g.R * taps * ((run + 1) / 2) * NV * 64;
  const int64_t rstep = (slice_bytes > g.slice_bytes && g.R > 1) ? 1 : g.R;
  const Split split(g.Q, kMaxBlock[NV - 1]);
  const int64_t r_end = g.rows_end();
  for (int64_t r0 = g.r_lo; r0 < r_end; r0 += rstep)
    for (int64_t i = 0; i < split.blocks; ++i)
      table.fn[split.size(i) - 1](y, xr, wp, bias, g, split.start(i), k0, r0,
                                  r0 + rstep < r_end ? r0 + rstep : r_end, r0 == g.r_lo);
}

void row_impl(float* y, const uint16_t* xr, const uint32_t* wp, const float* bias,
              const Geom& g) {
  const int64_t nv = g.K / 16;
  int64_t v = 0;
  for (; v + kNvMax <= nv; v += kNvMax) columns<kNvMax>(y, xr, wp, bias, g, v * 16);
  switch (nv - v) {
    case 1: columns<1>(y, xr, wp, bias, g, v * 16); break;
    case 2: columns<2>(y, xr, wp, bias, g, v * 16); break;
    case 3: columns<3>(y, xr, wp, bias, g, v * 16); break;
    default: break;
  }
}

// ---- backward-weight -------------------------------------------------------------------------
// dwp[t0 : t0+RB, k0 : k0 + 16 NV] += sum over the pixel pairs of `rows` output rows.
template <int NV, int RB>
void wblock(float* __restrict dwp, const uint32_t* __restrict xq, const uint32_t* __restrict dyp,
            const int64_t* __restrict off, const WGeom& g, int64_t rows, int64_t t0,
            int64_t k0) {
  __m512 acc[RB][NV];
  int64_t o[RB];
  const int64_t K = g.K, Q = g.Q, Qp = (Q + 1) / 2, full = Q / 2, xs2 = 2 * g.sw * g.C;
#pragma GCC unroll 24
  for (int i = 0; i < RB; ++i) {
    o[i] = off[t0 + i];
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j) acc[i][j] = _mm512_loadu_ps(dwp + (t0 + i) * K + k0 + 16 * j);
  }
  for (int64_t p = 0; p < rows; ++p) {
    const uint32_t* __restrict xp = xq + p * g.sh * g.ld_row;
    const uint32_t* __restrict dp = dyp + p * Qp * K + k0;
    for (int64_t qp = 0; qp < Qp; ++qp) {
      const uint32_t keep = qp < full ? 0xFFFFFFFFu : 0xFFFFu;  // odd Q: the last pixel alone
      const uint32_t* __restrict xqp = xp + qp * xs2;
      __m512bh d[NV];
#pragma GCC unroll 4
      for (int j = 0; j < NV; ++j)
        d[j] = reinterpret_cast<__m512bh>(_mm512_loadu_si512(dp + qp * K + 16 * j));
#pragma GCC unroll 24
      for (int i = 0; i < RB; ++i) {
        const __m512bh xv = bcast(xqp[o[i]] & keep);
#pragma GCC unroll 4
        for (int j = 0; j < NV; ++j) acc[i][j] = _mm512_dpbf16_ps(acc[i][j], xv, d[j]);
      }
    }
  }
#pragma GCC unroll 24
  for (int i = 0; i < RB; ++i)
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j) _mm512_storeu_ps(dwp + (t0 + i) * K + k0 + 16 * j, acc[i][j]);
}

using WBlockFn = void (*)(float*, const uint32_t*, const uint32_t*, const int64_t*,
                          const WGeom&, int64_t, int64_t, int64_t);

template <int NV>
struct WBlockTable {
  WBlockFn fn[kMaxBlock[NV - 1]] = {};
  template <int B>
  constexpr void fill() {
    if constexpr (B >= 1) {
      fn[B - 1] = &wblock<NV, B>;
      fill<B - 1>();
    }
  }
  constexpr WBlockTable() { fill<kMaxBlock[NV - 1]>(); }
};

// All filter rows for channels [k0, k0 + 16 NV), in balanced blocks of rows.
template <int NV>
void wrows(float* dwp, const uint32_t* xq, const uint32_t* dyp, const int64_t* off,
           const WGeom& g, int64_t rows, int64_t k0) {
  static constexpr WBlockTable<NV> table;
  const Split split(g.T, kMaxBlock[NV - 1]);
  for (int64_t i = 0; i < split.blocks; ++i)
    table.fn[split.size(i) - 1](dwp, xq, dyp, off, g, rows, split.start(i), k0);
}

void weight_impl(float* dwp, const uint32_t* xq, const uint32_t* dyp, const int64_t* off,
                 const WGeom& g, int64_t rows) {
  const int64_t nv = g.K / 16;
  int64_t v = 0;
  for (; v + kNvMax <= nv; v += kNvMax) wrows<kNvMax>(dwp, xq, dyp, off, g, rows, v * 16);
  switch (nv - v) {
    case 1: wrows<1>(dwp, xq, dyp, off, g, rows, v * 16); break;
    case 2: wrows<2>(dwp, xq, dyp, off, g, rows, v * 16); break;
    case 3: wrows<3>(dwp, xq, dyp, off, g, rows, v * 16); break;
    default: break;
  }
}

}  // namespace

Bf16Kernels kernels_avx512_bf16() {
  return Bf16Kernels{pad_rows_impl, pair_rows_impl, pack_filter_impl, pack_dy_impl, row_impl,
                     weight_impl};
}

}  // namespace direct
}  // namespace fk
