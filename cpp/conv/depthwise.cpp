// depthwise.cpp: depthwise convolution (groups == C) for conv2d_forward / _backward_input /
// _backward_weight, plus the portable build of the row loops (depthwise_impl.h) that the
// `scalar` ISA runs.
//
// Layouts as kernels.h: x, dx (N, H, W, C); y, dy (N, P, Q, K); w, dw (R, S, 1, K) with
// K = C * Kg. All outputs OVERWRITTEN. Forward and backward-input run in parallel over output
// rows (each written by one task); backward-weight sums per-slice partial filters (R*S*K
// floats each), then adds them up.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "conv_internal.h"
#include "depthwise_impl.h"
#include "fkeras/gemm.h"
#include "fkeras/kernels.h"
#include "fkeras/runtime.h"

namespace fk {
namespace depthwise {

Kernels kernels_scalar() { return make_kernels(); }

namespace {

Kernels active_kernels() {
  switch (cpu_isa()) {
    case Isa::kAvx512: return kernels_avx512();
    case Isa::kAvx2: return kernels_avx2();
    default: return kernels_scalar();
  }
}

Geom geom(const conv::Shape& s) {
  return Geom{s.N, s.H, s.W, s.C, s.K, s.R, s.S, s.P, s.Q, s.sh, s.sw, s.dh, s.dw, s.pt, s.pl,
              s.Kg};
}

// Rows per chunk: roughly 32K multiply-adds, so that chunks are many but not tiny.
int64_t grain(int64_t per_row) {
  return std::max<int64_t>(1, 32768 / std::max<int64_t>(1, per_row));
}

// Zero padding times a non-finite value. The row loops skip taps that fall in the padding,
// while the reference (and the im2col path) multiplies the padding's zeros: 0 * inf and
// 0 * NaN are NaN. These passes write that NaN where a non-finite weight (forward) or a
// non-finite dy (backward weight) meets the padding; otherwise they only read w, or dy at the
// border outputs, and write nothing.
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

bool tap_outside(const conv::Shape& s, int64_t p, int64_t q, int64_t r, int64_t t) {
  const int64_t h = p * s.sh - s.pt + r * s.dh, v = q * s.sw - s.pl + t * s.dw;
  return h < 0 || h >= s.H || v < 0 || v >= s.W;
}

void padding_nan_forward(float* y, const float* w, const conv::Shape& s) {
  for (int64_t r = 0; r < s.R; ++r)
    for (int64_t t = 0; t < s.S; ++t)
      for (int64_t k = 0; k < s.K; ++k) {
        if (std::isfinite(w[(r * s.S + t) * s.K + k])) continue;
        for (int64_t p = 0; p < s.P; ++p)
          for (int64_t q = 0; q < s.Q; ++q)
            if (tap_outside(s, p, q, r, t))
              for (int64_t n = 0; n < s.N; ++n)
                y[((n * s.P + p) * s.Q + q) * s.K + k] = kNaN;
      }
}

void padding_nan_backward_weight(float* dw, const float* dy, const conv::Shape& s) {
  std::vector<int64_t> taps;  // (r, t) pairs in the padding for output (p, q)
  for (int64_t p = 0; p < s.P; ++p)
    for (int64_t q = 0; q < s.Q; ++q) {
      taps.clear();
      for (int64_t r = 0; r < s.R; ++r)
        for (int64_t t = 0; t < s.S; ++t)
          if (tap_outside(s, p, q, r, t)) taps.push_back(r * s.S + t);
      if (taps.empty()) continue;
      for (int64_t n = 0; n < s.N; ++n) {
        const float* row = dy + ((n * s.P + p) * s.Q + q) * s.K;  // (K)
        if (!conv::any_non_finite(row, s.K)) continue;
        for (int64_t k = 0; k < s.K; ++k)
          if (!std::isfinite(row[k]))
            for (const int64_t rt : taps) dw[rt * s.K + k] = kNaN;
      }
    }
}

}  // namespace
}  // namespace depthwise

namespace conv {

bool any_non_finite(const float* a, int64_t n) {
  uint32_t any = 0;
  for (int64_t i = 0; i < n; ++i) {
    uint32_t bits;
    std::memcpy(&bits, a + i, sizeof bits);
    any |= static_cast<uint32_t>((bits & 0x7f800000u) == 0x7f800000u);
  }
  return any != 0;
}

void depthwise_forward(float* y, const float* x, const float* w, const float* bias,
                       const Shape& s, int64_t activation, float alpha) {
  const depthwise::Geom g = depthwise::geom(s);
  const auto row = depthwise::active_kernels().forward_row;
  parallel_for(s.N * s.P, depthwise::grain(s.Q * s.K * s.R * s.S), [&](int64_t r0, int64_t r1) {
    for (int64_t np = r0; np < r1; ++np) {
      float* yr = y + np * s.Q * s.K;  // (Q, K)
      row(yr, x, w, bias, g, np / s.P, np % s.P);
      if (activation != kLinear) activation_inplace(yr, s.Q * s.K, activation, alpha);
    }
  });
  depthwise::padding_nan_forward(y, w, s);
}

void depthwise_backward_input(float* dx, const float* dy, const float* w, const Shape& s) {
  const depthwise::Geom g = depthwise::geom(s);
  const auto row = depthwise::active_kernels().backward_input_row;
  parallel_for(s.N * s.H, depthwise::grain(s.W * s.K * s.R * s.S), [&](int64_t r0, int64_t r1) {
    for (int64_t nh = r0; nh < r1; ++nh) row(dx + nh * s.W * s.C, dy, w, g, nh / s.H, nh % s.H);
  });
}

void depthwise_backward_weight(float* dw, const float* dy, const float* x, const Shape& s) {
  const depthwise::Geom g = depthwise::geom(s);
  const auto row = depthwise::active_kernels().backward_weight_row;
  const int64_t rows = s.N * s.P, size = s.R * s.S * s.K;
  // Two slices per thread (dynamic hand-out absorbs a slow thread); each owns a partial dw.
  const int64_t nslices = std::max<int64_t>(1, std::min<int64_t>(rows, 2 * num_threads()));
  std::vector<float> partial(static_cast<size_t>(nslices * size), 0.f);  // (nslices, R, S, K)
  parallel_for(nslices, 1, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i)
      for (int64_t np = i * rows / nslices; np < (i + 1) * rows / nslices; ++np)
        row(partial.data() + i * size, x, dy, g, np / s.P, np % s.P);
  });
  for (int64_t e = 0; e < size; ++e) {
    float sum = 0.f;
    for (int64_t i = 0; i < nslices; ++i) sum += partial[i * size + e];
    dw[e] = sum;
  }
  depthwise::padding_nan_backward_weight(dw, dy, s);
}

}  // namespace conv
}  // namespace fk
