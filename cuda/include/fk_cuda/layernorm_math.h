// layernorm_math.h: the per-row and per-element math of the CUDA layer-norm kernels
// (cuda/kernels/layernorm.cu), FK_HD so that fkeras._C_cuda_host (cuda/host/layernorm.cpp) runs
// the very same code on the CPU for tests/cuda/test_layernorm_math_host.py.
//
// The formulas are cpp/layernorm/layernorm.cpp's, with the same float64 sums and the same
// float32 roundings, so the GPU and fkeras._C normalise each row with the same coefficients:
//   forward: m_f = float(sum(x) / D); s1 = sum(x - m_f), s2 = sum((x - m_f)^2) (float64, the
//            corrected two-pass variance var = s2 / D - (s1 / D)^2, never E[x^2] - E[x]^2:
//            m_f is within rounding of the mean, so nothing cancels); rstd = 1 / sqrt(var + eps);
//            y = fma(x - m, s, t) with (m, s, t) = (m_f, rstd, -(s1 / D) rstd), or (0, rstd, 0)
//            for rms_scaling; then y = fma(y, gamma, beta) when either is given.
//   backward: dz = dy * gamma (or dy); S_dz, S_d, S_dzd = sums of dz, x - m_f, dz (x - m_f) in
//            float64; dx = a (dz + fma(b, x - m_f, c)) with a = rstd and b, c below; for the
//            parameter gradients z = fma(x - m_f, rstd, t) (rms: x * rstd) is recomputed, and
//            dgamma = sum_rows dy z, dbeta = sum_rows dy, in float64.
// Empty rows (D == 0): mean 0, rstd = 1 / sqrt(eps). NaN / inf in a row make its outputs NaN.
#pragma once

#include <math.h>

#include <cstdint>

#include "fk_cuda/hd.h"

namespace fk_cuda {
namespace ln {

// Threads per row of the row kernels: a warp for rows of up to kWarpRowMax values (8 rows per
// 256-thread block), the whole 256-thread block above. Shared with the host emulation.
constexpr int kBlock = 256;
constexpr int kWarpRowMax = 1024;

FK_HD int threads_per_row(int64_t D) { return D <= kWarpRowMax ? 32 : kBlock; }

// The saved mean: the float64 row sum over D, rounded once.
FK_HD float row_mean(double sum, int64_t D) {
  return static_cast<float>(sum / static_cast<double>(D));
}

// Forward coefficients of one row: saved mean / rstd and y = fma(x - m, s, t).
struct RowCoeffs {
  float mean, rstd, m, s, t;
};

FK_HD RowCoeffs forward_coeffs(float m_f, double s1, double s2, int64_t D, double eps,
                               bool rms_scaling) {
  const double n = static_cast<double>(D);
  const double md = s1 / n;
  double var = s2 / n - md * md;
  if (var < 0.0) var = 0.0;  // rounding only; a NaN passes through
  const double rstd = 1.0 / sqrt(var + eps);
  RowCoeffs k;
  k.mean = m_f;
  k.rstd = static_cast<float>(rstd);
  k.s = k.rstd;
  k.m = rms_scaling ? 0.f : m_f;
  k.t = rms_scaling ? 0.f : static_cast<float>(-md * rstd);
  return k;
}

// The saved rstd of an empty row (D == 0).
FK_HD float empty_rstd(double eps) { return static_cast<float>(1.0 / sqrt(eps)); }

// One element of y; gamma / beta are 1 / 0 when absent, `affine` when either is given.
FK_HD float forward_elem(float x, const RowCoeffs& k, float gamma, float beta, bool affine) {
  const float z = fmaf(x - k.m, k.s, k.t);
  return affine ? fmaf(z, gamma, beta) : z;
}

// Backward coefficients of one row from its float64 sums (cpp/layernorm/layernorm.cpp):
// dx = a (dz + fma(b, x - m_f, c)); z = fma(x - zm, a, t) for the parameter gradients.
struct BackCoeffs {
  float a, b, c, zm, t;
};

FK_HD BackCoeffs backward_coeffs(double s_dz, double s_d, double s_dzd, int64_t D, float m_f,
                                 float rstd, bool rms_scaling) {
  const double n = static_cast<double>(D);
  const double rs = static_cast<double>(rstd);
  const double md = s_d / n;
  const double sum_dzx = rms_scaling ? s_dzd + static_cast<double>(m_f) * s_dz : s_dzd - md * s_dz;
  const double k = rs * rs * sum_dzx / n;
  const double c = rms_scaling ? k * md : k * md - s_dz / n;
  BackCoeffs r;
  r.a = rstd;
  r.b = static_cast<float>(-k);
  r.c = static_cast<float>(c);
  r.zm = rms_scaling ? 0.f : m_f;
  r.t = rms_scaling ? 0.f : static_cast<float>(-md * rs);
  return r;
}

// dz of one element: dy * gamma (fma with a zero addend, as the CPU's block kernel).
FK_HD float dz_elem(float dy, float gamma) { return fmaf(dy, gamma, 0.f); }

FK_HD float dx_elem(float dz, float x, float m_f, const BackCoeffs& k) {
  return k.a * (dz + fmaf(k.b, x - m_f, k.c));
}

// The normalised value z of one element, recomputed for dgamma.
FK_HD float z_elem(float x, const BackCoeffs& k) { return fmaf(x - k.zm, k.a, k.t); }

// Column-sum geometry of the parameter gradients: rows cut into `col_chunks` chunks of
// `col_chunk_len` rows (one grid row of blocks each), every chunk's float64 partials added in
// chunk order by a second kernel: the result depends on (rows, D) only.
constexpr int kColThreads = 256;

FK_HD int64_t col_chunks(int64_t rows, int64_t D) {
  if (rows <= 0) return 1;
  const int64_t col_blocks = (D + kColThreads - 1) / kColThreads;
  int64_t want = 1024 / (col_blocks > 0 ? col_blocks : 1);  // ~1024 blocks in all
  if (want < 1) want = 1;
  const int64_t by_size = (rows + 15) / 16;                   // >= 16 rows per chunk
  int64_t k = want < by_size ? want : by_size;
  if (k > 65535) k = 65535;
  return k < 1 ? 1 : k;
}

FK_HD int64_t col_chunk_len(int64_t rows, int64_t chunks) { return (rows + chunks - 1) / chunks; }

}  // namespace ln
}  // namespace fk_cuda
