// conv2d.cpp: conv2d_forward and the helpers shared with conv2d_backward.cpp (im2col by
// blocks, per-thread scratch, block sizing).
//
// Layouts: x (N, H, W, C), w (R, S, C/groups, K) viewed as (R*S*Cg, K), bias (K) [opt],
// y (N, P, Q, K) viewed as (M = N*P*Q, K). y is OVERWRITTEN with act(conv + bias); the bias and
// the activation are the GEMM epilogue, so y is written once.
// Math: y[n,p,q,k] = sum_{r,s,c} x[n, p*sh + r*dh - pt, q*sw + s*dw - pl, g*Cg + c] *
//                    w[r, s, c, k],  g = k / Kg (zero outside the input).
// Schedule: blocks of output-pixel rows (see conv_internal.h); per block and group one im2col
// gather into a per-thread buffer and one GEMM straight into y. 1x1 stride-1 convolutions are a
// single GEMM on the NHWC data; depthwise ones (groups == C) go to depthwise.cpp.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "conv_internal.h"
#include "fkeras/common.h"
#include "fkeras/gemm.h"
#include "fkeras/kernels.h"
#include "fkeras/runtime.h"

namespace fk {
namespace conv {

Shape make_shape(const char* kernel, int64_t N, int64_t H, int64_t W, int64_t C, int64_t K,
                 int64_t R, int64_t S, int64_t P, int64_t Q, int64_t stride_h, int64_t stride_w,
                 int64_t dil_h, int64_t dil_w, int64_t pad_top, int64_t pad_left,
                 int64_t groups) {
  FK_CHECK(N >= 0 && H >= 0 && W >= 0 && C >= 0 && K >= 0 && R >= 0 && S >= 0 && P >= 0 &&
               Q >= 0,
           kernel, ": sizes must be >= 0");
  FK_CHECK(stride_h >= 1 && stride_w >= 1 && dil_h >= 1 && dil_w >= 1, kernel,
           ": strides and dilations must be >= 1, received strides (", stride_h, ", ", stride_w,
           "), dilations (", dil_h, ", ", dil_w, ")");
  FK_CHECK(pad_top >= 0 && pad_left >= 0, kernel, ": padding must be >= 0, received (", pad_top,
           ", ", pad_left, ")");
  FK_CHECK(groups >= 1 && C % groups == 0 && K % groups == 0, kernel,
           ": groups must be >= 1 and divide C and K, received groups=", groups, ", C=", C,
           ", K=", K);
  return Shape{N,     H,       W,        C,     K,          R,          S,
               P,     Q,       stride_h, stride_w, dil_h,   dil_w,      pad_top,
               pad_left, groups, C / groups, K / groups};
}

namespace {
struct AlignedFree {
  void operator()(float* p) const { std::free(p); }
};
struct Scratch {
  std::unique_ptr<float, AlignedFree> data;
  size_t size = 0;
};
}  // namespace

float* scratch(int slot, size_t n) {
  thread_local Scratch bufs[3];
  Scratch& b = bufs[slot];
  if (b.size < n) {
    const size_t bytes = (n * sizeof(float) + 63) / 64 * 64;
    float* p = static_cast<float*>(std::aligned_alloc(64, bytes));
    FK_CHECK(p != nullptr, "conv2d: out of memory for a ", bytes, "-byte scratch buffer");
    b.data.reset(p);
    b.size = n;
  }
  return b.data.get();
}

int64_t block_rows(int64_t total_rows, int64_t row_floats) {
  // Why these numbers: a 96K-float (384 KB) block and the GEMM's packed panels fit the L2 of
  // current x86 cores; each GEMM call packs the filter once, which costs about as much as a few
  // rows of arithmetic, so fewer than ~64 rows per call would waste a noticeable share; 4 blocks
  // per thread let the dynamic hand-out absorb a slow thread.
  const int64_t kBudgetFloats = 96 * 1024, kMinRows = 64, kMaxRows = 1024;
  int64_t rows = kBudgetFloats / std::max<int64_t>(row_floats, 1);
  rows = std::min(std::max(rows, kMinRows), kMaxRows);
  const int64_t threads = num_threads();
  const int64_t fair = (total_rows + 4 * threads - 1) / (4 * threads);
  rows = std::min(rows, std::max(fair, kMinRows));
  return std::max<int64_t>(1, std::min(rows, total_rows));
}

void run_blocks(int64_t nblocks, const std::function<void(int64_t)>& body) {
  if (nblocks >= 2 * static_cast<int64_t>(num_threads())) {
    parallel_for(nblocks, 1, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) body(b);
    });
  } else {
    for (int64_t b = 0; b < nblocks; ++b) body(b);
  }
}

void copy_floats(float* dst, const float* src, int64_t n) {
  if (n < 16) {
    for (int64_t i = 0; i < n; ++i) dst[i] = src[i];
  } else {
    std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
  }
}

void zero_floats(float* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = 0.f;
}

void im2col(float* cols, const float* x, const Shape& s, int64_t m0, int64_t m1, int64_t g) {
  const int64_t L = s.row_len(), SCg = s.S * s.Cg;
  // One contiguous run of S*C floats per filter row when the taps of a row are adjacent
  // columns holding all channels (groups == 1, no column dilation) and all inside the input.
  const bool runs = s.G == 1 && s.dw == 1;
  int64_t n = m0 / (s.P * s.Q), p = (m0 / s.Q) % s.P, q = m0 % s.Q;
  for (int64_t m = m0; m < m1; ++m) {
    float* row = cols + (m - m0) * L;                       // (R, S, Cg)
    const float* xn = x + n * s.H * s.W * s.C + g * s.Cg;  // (H, W, C) of image n, group g
    const int64_t h0 = p * s.sh - s.pt, w0 = q * s.sw - s.pl;
    for (int64_t r = 0; r < s.R; ++r) {
      float* dst = row + r * SCg;
      const int64_t h = h0 + r * s.dh;
      if (h < 0 || h >= s.H) {
        zero_floats(dst, SCg);
        continue;
      }
      const float* xr = xn + h * s.W * s.C;  // (W, C)
      if (runs && w0 >= 0 && w0 + s.S <= s.W) {
        copy_floats(dst, xr + w0 * s.C, SCg);
        continue;
      }
      for (int64_t t = 0; t < s.S; ++t) {
        const int64_t w = w0 + t * s.dw;
        if (w < 0 || w >= s.W) {
          zero_floats(dst + t * s.Cg, s.Cg);
        } else {
          copy_floats(dst + t * s.Cg, xr + w * s.C, s.Cg);
        }
      }
    }
    if (++q == s.Q) {
      q = 0;
      if (++p == s.P) {
        p = 0;
        ++n;
      }
    }
  }
}

}  // namespace conv

void conv2d_forward(float* y, const float* x, const float* w, const float* bias, int64_t N,
                    int64_t H, int64_t W, int64_t C, int64_t K, int64_t R, int64_t S, int64_t P,
                    int64_t Q, int64_t stride_h, int64_t stride_w, int64_t dil_h, int64_t dil_w,
                    int64_t pad_top, int64_t pad_left, int64_t groups, int64_t activation,
                    float alpha) {
  const conv::Shape s = conv::make_shape("conv2d_forward", N, H, W, C, K, R, S, P, Q, stride_h,
                                         stride_w, dil_h, dil_w, pad_top, pad_left, groups);
  const int64_t M = s.M(), L = s.row_len();
  if (M == 0 || K == 0) return;
  auto epilogue = [&](int64_t g) {
    Epilogue ep;
    ep.bias = bias ? bias + g * s.Kg : nullptr;
    ep.activation = activation;
    ep.alpha = alpha;
    return ep;
  };
  if (L == 0) {  // no taps or no channels: y = act(bias)
    parallel_for(M, 256, [&](int64_t m0, int64_t m1) {
      for (int64_t m = m0; m < m1; ++m) {
        float* ym = y + m * K;  // (K)
        for (int64_t k = 0; k < K; ++k) ym[k] = bias ? bias[k] : 0.f;
        activation_inplace(ym, K, activation, alpha);
      }
    });
    return;
  }
  if (conv::is_depthwise(s)) {
    conv::depthwise_forward(y, x, w, bias, s, activation, alpha);
    return;
  }
  if (conv::direct_forward_ok(s) || conv::direct_forward_narrow_ok(s)) {
    conv::direct_forward(y, x, w, bias, s, activation, alpha);
    return;
  }
  if (s.pointwise()) {  // y (M, K) = x (M, C) @ w (C, K), per group
    for (int64_t g = 0; g < s.G; ++g)
      gemm_strided(y + g * s.Kg, K, x + g * s.Cg, C, w + g * s.Kg, K, M, s.Kg, s.Cg, false,
                   false, 1.f, 0.f, epilogue(g));
    return;
  }
  const int64_t rows = conv::block_rows(M, L), nblocks = (M + rows - 1) / rows;
  // One group: the filter is packed once for every block (a deep layer's blocks are ~85 rows
  // of a 1152-long reduction, and each GEMM call would pack all of it again).
  GemmPackedB packed;
  const bool prepack = s.G == 1 && nblocks > 1;
  if (prepack) gemm_pack_b(packed, w, K, L, K, false);
  conv::run_blocks(nblocks, [&](int64_t b) {
    const int64_t m0 = b * rows, m1 = std::min(M, m0 + rows);
    float* cols = conv::scratch(0, static_cast<size_t>(rows * L));  // (rows, L)
    for (int64_t g = 0; g < s.G; ++g) {
      conv::im2col(cols, x, s, m0, m1, g);
      if (prepack) {
        gemm_prepacked(y + m0 * K, K, cols, L, packed, m1 - m0, false, 1.f, 0.f, epilogue(0));
      } else {
        gemm_strided(y + m0 * K + g * s.Kg, K, cols, L, w + g * s.Kg, K, m1 - m0, s.Kg, L,
                     false, false, 1.f, 0.f, epilogue(g));
      }
    }
  });
}

void conv2d_forward_maxpool2d(float* y, const float* x, const float* w, const float* bias,
                              int64_t N, int64_t H, int64_t W, int64_t C, int64_t K, int64_t R,
                              int64_t S, int64_t P, int64_t Q, int64_t stride_h,
                              int64_t stride_w, int64_t dil_h, int64_t dil_w, int64_t pad_top,
                              int64_t pad_left, int64_t groups, int64_t activation, float alpha,
                              int64_t pool_h, int64_t pool_w, int64_t* indices) {
  const conv::Shape s = conv::make_shape("conv2d_forward_maxpool2d", N, H, W, C, K, R, S, P, Q,
                                         stride_h, stride_w, dil_h, dil_w, pad_top, pad_left,
                                         groups);
  FK_CHECK(pool_h >= 1 && pool_w >= 1, "conv2d_forward_maxpool2d: pool sizes must be >= 1, ",
           "received (", pool_h, ", ", pool_w, ")");
  const int64_t Pp = P / pool_h, Qp = Q / pool_w;
  if (N == 0 || K == 0 || Pp == 0 || Qp == 0) return;
  if (s.row_len() > 0 && !conv::is_depthwise(s) && conv::direct_forward_ok(s)) {
    conv::direct_forward_maxpool(y, indices, x, w, bias, s, activation, alpha, pool_h, pool_w);
    return;
  }
  // Other paths: the convolution into a temporary, then the pooling (values, [indices]).
  std::unique_ptr<float[]> tmp(new float[static_cast<size_t>(N * P * Q * K)]);
  conv2d_forward(tmp.get(), x, w, bias, N, H, W, C, K, R, S, P, Q, stride_h, stride_w, dil_h,
                 dil_w, pad_top, pad_left, groups, activation, alpha);
  maxpool2d_forward(y, indices, tmp.get(), N, P, Q, K, Pp, Qp, pool_h, pool_w, pool_h, pool_w,
                    0, 0);
}

}  // namespace fk
