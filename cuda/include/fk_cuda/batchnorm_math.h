// batchnorm_math.h: the per-element and per-channel math of the CUDA batch-norm kernels
// (cuda/kernels/batchnorm.cu), FK_HD so that fkeras._C_cuda_host (cuda/host/batchnorm.cpp)
// runs the very same code on the CPU for tests/cuda/test_bnrnn_math_host.py.
//
// Statistics are Welford's running (count, mean, M2) in float64, merged pairwise with Chan,
// Golub & LeVeque's formula (never E[x^2] - E[x]^2). A plain float64 sum rides along: where the
// data hold an infinity Welford's mean is inf - inf = NaN, and the mean is then the plain one,
// +/-inf as the CPU kernel's (cpp/batchnorm/batchnorm.cpp) in IEEE arithmetic.
// The coefficient formulas below reproduce batchnorm.cpp's exactly (same float64 expressions,
// same float32 roundings), so the GPU and the CPU normalise with the same m, s, t per channel.
#pragma once

#include <math.h>

#include <cstdint>

#include "fk_cuda/hd.h"

namespace fk_cuda {
namespace bn {

// Running statistics of a set of samples: count n, mean, M2 = sum (x - mean)^2, plain sum.
struct Welford {
  double n, mean, m2, sum;
};

FK_HD Welford welford_empty() { return Welford{0.0, 0.0, 0.0, 0.0}; }

FK_HD void welford_add(Welford& w, double x) {
  w.n += 1.0;
  const double d = x - w.mean;
  w.mean += d / w.n;
  w.m2 += d * (x - w.mean);
  w.sum += x;
}

// The statistics of the union of a's and b's samples (Chan et al. 1983). Empty sides are
// exact (no 0/0).
FK_HD Welford welford_merge(const Welford& a, const Welford& b) {
  if (b.n == 0.0) return a;
  if (a.n == 0.0) return b;
  Welford r;
  r.n = a.n + b.n;
  const double d = b.mean - a.mean, fb = b.n / r.n;
  r.mean = a.mean + d * fb;
  r.m2 = a.m2 + b.m2 + d * d * a.n * fb;
  r.sum = a.sum + b.sum;
  return r;
}

// The float64 mean (the plain mean where Welford's is not finite) and biased variance.
FK_HD double welford_mean(const Welford& w) {
  if (w.n == 0.0) return 0.0;
  return isfinite(w.mean) ? w.mean : w.sum / w.n;
}
FK_HD double welford_var(const Welford& w) {
  if (w.n == 0.0) return 0.0;
  const double v = w.m2 / w.n;
  return v > 0.0 ? v : (v == v ? 0.0 : v);
}

// Per-channel results of the training forward: saved mean / var / inv_std, and y = (x - m) * s
// + t. m is the float32 saved mean, so x - m is exact near the mean; the float64 remainder
// mean - m folds into t (skipped when the scale is not finite: inf * 0 would make every y NaN).
struct TrainCoeffs {
  float mean, var, inv_std, m, s, t;
};

FK_HD TrainCoeffs train_coeffs(double mean64, double var64, double gamma, double beta,
                               float epsilon) {
  TrainCoeffs k;
  const double inv = 1.0 / sqrt(var64 + static_cast<double>(epsilon));
  k.mean = static_cast<float>(mean64);
  k.var = static_cast<float>(var64);
  k.inv_std = static_cast<float>(inv);
  const double scale = gamma * inv;
  k.m = k.mean;
  k.s = static_cast<float>(scale);
  const double remainder = isfinite(scale) ? scale * (mean64 - static_cast<double>(k.m)) : 0.0;
  k.t = static_cast<float>(beta - remainder);
  return k;
}

// Inference: m = mean, s = gamma / sqrt(var + eps), t = beta (batchnorm.cpp's rounding).
FK_HD void infer_coeffs(float var, double gamma, float epsilon, float* s) {
  const double inv = 1.0 / sqrt(static_cast<double>(var) + static_cast<double>(epsilon));
  *s = static_cast<float>(gamma * inv);
}

// One element of the normalisation: (x - m) * s + t (as the CPU's fma).
FK_HD float normalize(float x, float m, float s, float t) { return fmaf(x - m, s, t); }

// Backward, per channel. The reductions (over the channel's n elements, float64):
//   sum_dy = sum dy;  delta = mean(x - m);  dot = sum dy * ((x - m) - delta)  (centred, so it
//   is +/-inf, never inf - inf, for an infinite dy);
// give dgamma = inv * dot, dbeta = sum_dy and dx = a * (dy + b * (x - m) + c) with
//   a = gamma * inv, b = -inv * dgamma / n, c = -sum_dy / n - b * delta  (batchnorm.cpp's).
struct BackwardCoeffs {
  float dgamma, dbeta, a, b, c;
};

FK_HD BackwardCoeffs backward_coeffs(double sum_dy, double delta, double dot, double n,
                                     double inv, double gamma) {
  BackwardCoeffs k;
  const double dg = inv * dot;
  k.dgamma = static_cast<float>(dg);
  k.dbeta = static_cast<float>(sum_dy);
  const double A = gamma * inv, B = -inv * dg / n;
  k.a = static_cast<float>(A);
  k.b = static_cast<float>(B);
  k.c = static_cast<float>(-sum_dy / n - (isfinite(B) ? B * delta : 0.0));
  return k;
}

// One element of dx: a * (dy + b * (x - m) + c), the factor a last (an infinite gamma gives
// +/-inf, not inf - inf).
FK_HD float backward_dx(float dy, float x, float m, float a, float b, float c) {
  return a * (dy + fmaf(b, x - m, c));
}

}  // namespace bn
}  // namespace fk_cuda

namespace fk_cuda {
namespace bn {

// Launch geometry of the statistics passes, shared with the host tests: a channel's n elements
// are cut into `stats_chunks` contiguous chunks of `chunk_len` (one block each), so that C *
// chunks blocks fill the GPU; every chunk is reduced by a fixed-order tree, and the chunks are
// merged in index order, so results never depend on scheduling.
constexpr int kStatsThreads = 256;

FK_HD int64_t stats_chunks(int64_t n, int64_t C) {
  if (n <= 0) return 1;
  const int64_t by_size = (n + 4 * kStatsThreads - 1) / (4 * kStatsThreads);  // >= 4 per thread
  int64_t want = (2048 + C - 1) / (C > 0 ? C : 1);                             // ~2048 blocks
  if (want < 1) want = 1;
  int64_t k = by_size < want ? by_size : want;
  if (k > 65535) k = 65535;
  return k < 1 ? 1 : k;
}

FK_HD int64_t chunk_len(int64_t n, int64_t chunks) { return (n + chunks - 1) / chunks; }

// Element j (in [0, n)) of channel c in the (outer, C, inner) view.
FK_HD int64_t channel_offset(int64_t j, int64_t c, int64_t C, int64_t inner) {
  const int64_t o = j / inner, i = j - o * inner;
  return (o * C + c) * inner + i;
}

}  // namespace bn
}  // namespace fk_cuda
