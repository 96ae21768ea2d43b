// direct.cpp: the direct-convolution path of conv2d_forward and conv2d_backward_input
// (groups == 1), chosen per call by direct_forward_ok / direct_backward_input_ok.
//
// Layouts as kernels.h: x, dx (N, H, W, C); y, dy (N, P, Q, K); w (R, S, C, K).
// Outputs OVERWRITTEN, each element written by one task (no reduction).
// Schedule: tasks of (image n, a run of output rows), handed out dynamically. A task copies the
// input rows its output rows read into a per-thread buffer padded with zeros on every side
// (rows (R-1)*dh + 1 + (rows-1)*sh, columns (Q-1)*sw + (S-1)*dw + 1), then runs the per-ISA row
// kernel (direct_kernels.h) per output row and the activation on the finished row.
// backward_input (stride 1) is the same kernel: dx = dy correlated with the filter flipped in
// (r, s) and transposed to (R, S, K, C), leading padding (R-1)*dh - pt, (S-1)*dw - pl.
//
// Switch: FKERAS_CONV_DIRECT=0 never takes this path, =1 takes it whenever it applies (tests
// use both), unset: where it was measured faster (see direct_forward_ok).
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "conv_internal.h"
#include "direct_kernels.h"
#include "fkeras/common.h"
#include "fkeras/gemm.h"
#include "fkeras/kernels.h"
#include "fkeras/runtime.h"

namespace fk {
namespace conv {
namespace {

bool active(direct::Kernels* out) {
  switch (cpu_isa()) {
    case Isa::kAvx512: *out = direct::kernels_avx512(); return true;
    case Isa::kAvx2: *out = direct::kernels_avx2(); return true;
    default: return false;
  }
}

// -1: unset (automatic), 0: off, 1: forced where applicable.
int mode() {
  const char* v = std::getenv("FKERAS_CONV_DIRECT");
  if (v == nullptr || *v == '\0') return -1;
  return v[0] == '0' ? 0 : 1;
}

// The direct convolution of x (N, H, W, C) with w (R, S, C, K) into y (N, P, Q, K), any
// strides, dilations and leading pads (taps outside the input read zero).
void run_direct(const direct::Kernels& kern, float* y, const float* x, const float* w,
                const float* bias, int64_t N, int64_t H, int64_t W, int64_t C, int64_t K,
                int64_t R, int64_t S, int64_t P, int64_t Q, int64_t sh, int64_t sw, int64_t dh,
                int64_t dw, int64_t pt, int64_t pl, int64_t activation, float alpha) {
  const int64_t Wp = (Q - 1) * sw + (S - 1) * dw + 1, ld = Wp * C;
  // Output rows per task: enough tasks for a dynamic hand-out (8 per thread), a padded copy of
  // at most ~64K floats (L2), else whole images (the copy's (R-1)*dh extra rows amortized).
  const int64_t threads = num_threads();
  int64_t rb = std::max<int64_t>(1, (N * P + 8 * threads - 1) / (8 * threads));
  rb = std::min(rb, P);
  while (rb > 1 && ((rb - 1) * sh + (R - 1) * dh + 1) * ld > 65536) --rb;
  const int64_t per_image = (P + rb - 1) / rb;
  const direct::Geom g{C, K, R, S, Q, sw, dh, dw, ld};
  parallel_for(N * per_image, 1, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t n = t / per_image, p0 = (t % per_image) * rb, p1 = std::min(P, p0 + rb);
      const int64_t h_lo = p0 * sh - pt, rows = (p1 - 1 - p0) * sh + (R - 1) * dh + 1;
      float* buf = scratch(1, static_cast<size_t>(rows * ld));  // (rows, Wp, C)
      // Input columns [w_lo, w_lo + Wp) of rows [h_lo, h_lo + rows), zero outside the input.
      const int64_t w_lo = -pl, c0 = std::max<int64_t>(0, -w_lo),
                    c1 = std::max<int64_t>(c0, std::min<int64_t>(Wp, W - w_lo));
      for (int64_t i = 0; i < rows; ++i) {
        float* dst = buf + i * ld;  // (Wp, C)
        const int64_t h = h_lo + i;
        if (h < 0 || h >= H || c1 == c0) {
          zero_floats(dst, ld);
          continue;
        }
        zero_floats(dst, c0 * C);
        copy_floats(dst + c0 * C, x + ((n * H + h) * W + w_lo + c0) * C, (c1 - c0) * C);
        zero_floats(dst + c1 * C, (Wp - c1) * C);
      }
      for (int64_t p = p0; p < p1; ++p) {
        float* yr = y + (n * P + p) * Q * K;  // (Q, K)
        kern.row(yr, buf + (p - p0) * sh * ld, w, bias, g);
        if (activation != kLinear) activation_inplace(yr, Q * K, activation, alpha);
      }
    }
  });
}

}  // namespace

bool direct_forward_ok(const Shape& s) {
  direct::Kernels kern;
  const int m = mode();
  if (m == 0 || s.G != 1 || !active(&kern) || s.K % kern.vector_width != 0) return false;
  if (s.M() == 0 || s.K == 0 || s.row_len() == 0) return false;
  if (m == 1) return true;
  return !s.pointwise() && s.sh == 1 && s.sw == 1 && s.dh == 1 && s.dw == 1;
}

bool direct_backward_input_ok(const Shape& s) {
  direct::Kernels kern;
  const int m = mode();
  if (m == 0 || s.G != 1 || !active(&kern) || s.C % kern.vector_width != 0) return false;
  if (s.sh != 1 || s.sw != 1 || s.pt > (s.R - 1) * s.dh || s.pl > (s.S - 1) * s.dw) return false;
  if (s.N * s.H * s.W * s.C == 0 || s.K == 0 || s.R * s.S == 0 || s.P == 0 || s.Q == 0)
    return false;
  if (m == 1) return true;
  return s.dh == 1 && s.dw == 1;
}

void direct_forward(float* y, const float* x, const float* w, const float* bias, const Shape& s,
                    int64_t activation, float alpha) {
  direct::Kernels kern;
  FK_CHECK(active(&kern), "conv2d_forward: the direct path needs AVX2 or AVX-512");
  run_direct(kern, y, x, w, bias, s.N, s.H, s.W, s.C, s.K, s.R, s.S, s.P, s.Q, s.sh, s.sw, s.dh,
             s.dw, s.pt, s.pl, activation, alpha);
}

void direct_backward_input(float* dx, const float* dy, const float* w, const Shape& s) {
  direct::Kernels kern;
  FK_CHECK(active(&kern), "conv2d_backward_input: the direct path needs AVX2 or AVX-512");
  // wt[r, s, k, c] = w[R-1-r, S-1-s, c, k]: (R, S, K, C), small (one filter).
  std::vector<float> wt(static_cast<size_t>(s.R * s.S * s.K * s.C));
  for (int64_t r = 0; r < s.R; ++r)
    for (int64_t t = 0; t < s.S; ++t) {
      const float* src = w + ((s.R - 1 - r) * s.S + (s.S - 1 - t)) * s.C * s.K;  // (C, K)
      float* dst = wt.data() + (r * s.S + t) * s.K * s.C;                        // (K, C)
      for (int64_t c = 0; c < s.C; ++c)
        for (int64_t k = 0; k < s.K; ++k) dst[k * s.C + c] = src[c * s.K + k];
    }
  run_direct(kern, dx, dy, wt.data(), nullptr, s.N, s.P, s.Q, s.K, s.C, s.R, s.S, s.H, s.W, 1, 1,
             s.dh, s.dw, (s.R - 1) * s.dh - s.pt, (s.S - 1) * s.dw - s.pl, kLinear, 0.f);
}

}  // namespace conv
}  // namespace fk
