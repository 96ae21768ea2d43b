// gemm_elementwise.h: the fused-epilogue activations, their derivatives from the output, and
// Dense backward's dz / column-sum pass, written as plain loops that the compiler vectorizes.
//
// Included by each per-ISA kernel file (and the scalar one) so every file gets a copy compiled
// with its own -m flags: everything here lives in an anonymous namespace on purpose (a shared
// inline copy could be the AVX-512 one at link time). One loop per activation code, with the
// switch outside the loop, so the simple codes vectorize; the exp/log based ones call libm.
//
// Math (activation_math.py is the spec): ELU alpha >= 0; derivatives are taken from the
// output y, which is exact for every fused code. No error paths here (an fk::fail template
// instantiated in an AVX-512 file could be shared with the others): the portable driver checks
// the activation code first.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "fkeras/column_sums.h"
#include "fkeras/kernels.h"

namespace fk {
namespace gemm_detail {
namespace {

constexpr float kSeluAlpha = 1.6732632423543772f;
constexpr float kSeluScale = 1.0507009873554805f;

// y (n) = act(y), in place.
void activation_loop(float* __restrict y, int64_t n, int64_t act, float alpha) {
  switch (act) {
    case kLinear: return;
    case kRelu:
      for (int64_t i = 0; i < n; ++i) y[i] = y[i] < 0.f ? 0.f : y[i];  // NaN propagates
      return;
    case kLeakyRelu:
      for (int64_t i = 0; i < n; ++i) y[i] = y[i] > 0.f ? y[i] : alpha * y[i];
      return;
    case kHardSigmoid:
      for (int64_t i = 0; i < n; ++i) {
        float x = y[i] + 3.f;
        x = x < 0.f ? 0.f : x;
        x = x > 6.f ? 6.f : x;
        y[i] = x * (1.f / 6.f);
      }
      return;
    case kSoftsign:
      for (int64_t i = 0; i < n; ++i) y[i] = y[i] / (1.f + std::fabs(y[i]));
      return;
    case kSigmoid:
      for (int64_t i = 0; i < n; ++i) {
        // exp of a non-positive argument only: no overflow for large |x|.
        const float e = std::exp(-std::fabs(y[i]));
        y[i] = y[i] >= 0.f ? 1.f / (1.f + e) : e / (1.f + e);
      }
      return;
    case kTanh:
      for (int64_t i = 0; i < n; ++i) y[i] = std::tanh(y[i]);
      return;
    case kElu:
      for (int64_t i = 0; i < n; ++i) y[i] = y[i] > 0.f ? y[i] : alpha * std::expm1(y[i]);
      return;
    case kSelu:
      for (int64_t i = 0; i < n; ++i)
        y[i] = kSeluScale * (y[i] > 0.f ? y[i] : kSeluAlpha * std::expm1(y[i]));
      return;
    case kSoftplus:
      for (int64_t i = 0; i < n; ++i) {
        const float x = y[i];
        y[i] = (x > 0.f ? x : 0.f) + std::log1p(std::exp(-std::fabs(x)));
      }
      return;
    case kExponential:
      for (int64_t i = 0; i < n; ++i) y[i] = std::exp(y[i]);
      return;
    default: return;  // the portable driver rejects other codes before dispatch
  }
}

// c ? a : b as bit operations (as elementwise/vmath.h's vm_select): GCC turns the plain
// conditional of the ReLU derivative into a slower masked sequence (the dy pass ran 1.6x
// slower than activation_backward's).
inline float select_bits(bool c, float a, float b) {
  const uint32_t m = 0u - static_cast<uint32_t>(c);
  uint32_t ua, ub;
  std::memcpy(&ua, &a, sizeof ua);
  std::memcpy(&ub, &b, sizeof ub);
  const uint32_t r = (ua & m) | (ub & ~m);
  float out;
  std::memcpy(&out, &r, sizeof out);
  return out;
}

// The derivative act'(x) written as a function of y = act(x), for one element.
template <int64_t kAct>
inline float derivative_from_output(float v, float alpha) {
  if constexpr (kAct == kRelu) return select_bits(v > 0.f, 1.f, 0.f);
  if constexpr (kAct == kLeakyRelu) return select_bits(v > 0.f, 1.f, alpha);
  if constexpr (kAct == kSigmoid) return v * (1.f - v);
  if constexpr (kAct == kTanh) return 1.f - v * v;
  if constexpr (kAct == kHardSigmoid) return (v > 0.f && v < 1.f) ? 1.f / 6.f : 0.f;
  if constexpr (kAct == kElu) return v > 0.f ? 1.f : v + alpha;
  if constexpr (kAct == kSelu) return v > 0.f ? kSeluScale : v + kSeluScale * kSeluAlpha;
  if constexpr (kAct == kSoftsign) return (1.f - std::fabs(v)) * (1.f - std::fabs(v));
  if constexpr (kAct == kExponential) return v;
  if constexpr (kAct == kSoftplus) return -std::expm1(-v);
  return 1.f;
}

template <int64_t kAct>
void grad_loop(float* __restrict dy, const float* __restrict y, int64_t n, float alpha) {
  for (int64_t i = 0; i < n; ++i) dy[i] *= derivative_from_output<kAct>(y[i], alpha);
}

// dy (n) *= act'(from y (n)), in place.
void activation_grad_loop(float* dy, const float* y, int64_t n, int64_t act, float alpha) {
  switch (act) {
    case kLinear: return;
    case kRelu: return grad_loop<kRelu>(dy, y, n, alpha);
    case kLeakyRelu: return grad_loop<kLeakyRelu>(dy, y, n, alpha);
    case kSigmoid: return grad_loop<kSigmoid>(dy, y, n, alpha);
    case kTanh: return grad_loop<kTanh>(dy, y, n, alpha);
    case kHardSigmoid: return grad_loop<kHardSigmoid>(dy, y, n, alpha);
    case kElu: return grad_loop<kElu>(dy, y, n, alpha);
    case kSelu: return grad_loop<kSelu>(dy, y, n, alpha);
    case kSoftsign: return grad_loop<kSoftsign>(dy, y, n, alpha);
    case kExponential: return grad_loop<kExponential>(dy, y, n, alpha);
    case kSoftplus: return grad_loop<kSoftplus>(dy, y, n, alpha);
    default: return;  // the portable driver rejects other codes before dispatch
  }
}

// Rows [r0, r1) of (M, N) matrices: dz = dy * act'(y) (dz [opt]) and colsum (N) [opt] = the
// sum of dz over those rows (overwritten): as bias_add_backward's column_sums, rows added in
// float in groups of 8 from r0 (pairwise), each group's total and each leftover row in float64.
// act == kLinear does not read y.
template <int64_t kAct>
inline float dz_of(const float* __restrict g, const float* __restrict v, int64_t i, float alpha) {
  return kAct == kLinear ? g[i] : g[i] * derivative_from_output<kAct>(v[i], alpha);
}

// dz (n) = dy (n) * act'(y (n)), one flat loop (rows are contiguous).
template <int64_t kAct>
void dz_flat(float* __restrict dz, const float* __restrict dy, const float* __restrict y,
             int64_t n, float alpha) {
  for (int64_t e = 0; e < n; ++e) dz[e] = dz_of<kAct>(dy, y, e, alpha);
}

using colsum::add_group;  // the bias gradient's column-sum rule (fkeras/column_sums.h)

template <int64_t kAct, bool kDz, bool kSum>
void dz_colsum_rows(float* __restrict dz, double* __restrict colsum, const float* __restrict dy,
                    const float* __restrict y, int64_t r0, int64_t r1, int64_t N, float alpha) {
  if (!kSum) return dz_flat<kAct>(dz + r0 * N, dy + r0 * N, y + r0 * N, (r1 - r0) * N, alpha);
  constexpr int64_t kCols = 256;  // a group's 8 x kCols values stay in L1 for their sums
  float tmp[8 * kCols];
  for (int64_t j = 0; j < N; ++j) colsum[j] = 0.0;
  int64_t i = r0;
  for (; i + 8 <= r1; i += 8) {
    const float* g = dy + i * N;
    const float* v = y + i * N;
    if (kAct == kLinear && !kDz) {
      add_group(colsum, g, N, N);
    } else if (kDz || N <= kCols) {  // the group's dz (8, N) in one flat loop, then its sums
      float* z = kDz ? dz + i * N : tmp;
      dz_flat<kAct>(z, g, v, 8 * N, alpha);
      add_group(colsum, z, N, N);
    } else {  // wide rows, no dz: column blocks of the group through tmp (8, kCols)
      for (int64_t c0 = 0; c0 < N; c0 += kCols) {
        const int64_t w = N - c0 < kCols ? N - c0 : kCols;
        for (int t = 0; t < 8; ++t)
          dz_flat<kAct>(tmp + t * kCols, g + t * N + c0, v + t * N + c0, w, alpha);
        add_group(colsum + c0, tmp, kCols, w);
      }
    }
  }
  for (; i < r1; ++i) {
    const float* __restrict g = dy + i * N;
    const float* __restrict v = y + i * N;
    for (int64_t j = 0; j < N; ++j) {
      const float d = dz_of<kAct>(g, v, j, alpha);
      if (kDz) dz[i * N + j] = d;
      colsum[j] += static_cast<double>(d);
    }
  }
}

template <int64_t kAct>
void dz_colsum_act(float* dz, double* colsum, const float* dy, const float* y, int64_t r0,
                   int64_t r1, int64_t N, float alpha) {
  if (dz && colsum) return dz_colsum_rows<kAct, true, true>(dz, colsum, dy, y, r0, r1, N, alpha);
  if (dz) return dz_colsum_rows<kAct, true, false>(dz, colsum, dy, y, r0, r1, N, alpha);
  if (colsum) return dz_colsum_rows<kAct, false, true>(dz, colsum, dy, y, r0, r1, N, alpha);
}

void dz_colsum_loop(float* dz, double* colsum, const float* dy, const float* y, int64_t r0,
                    int64_t r1, int64_t N, int64_t act, float alpha) {
  switch (act) {
    case kLinear: return dz_colsum_act<kLinear>(dz, colsum, dy, y, r0, r1, N, alpha);
    case kRelu: return dz_colsum_act<kRelu>(dz, colsum, dy, y, r0, r1, N, alpha);
    case kLeakyRelu: return dz_colsum_act<kLeakyRelu>(dz, colsum, dy, y, r0, r1, N, alpha);
    case kSigmoid: return dz_colsum_act<kSigmoid>(dz, colsum, dy, y, r0, r1, N, alpha);
    case kTanh: return dz_colsum_act<kTanh>(dz, colsum, dy, y, r0, r1, N, alpha);
    case kHardSigmoid: return dz_colsum_act<kHardSigmoid>(dz, colsum, dy, y, r0, r1, N, alpha);
    case kElu: return dz_colsum_act<kElu>(dz, colsum, dy, y, r0, r1, N, alpha);
    case kSelu: return dz_colsum_act<kSelu>(dz, colsum, dy, y, r0, r1, N, alpha);
    case kSoftsign: return dz_colsum_act<kSoftsign>(dz, colsum, dy, y, r0, r1, N, alpha);
    case kExponential: return dz_colsum_act<kExponential>(dz, colsum, dy, y, r0, r1, N, alpha);
    case kSoftplus: return dz_colsum_act<kSoftplus>(dz, colsum, dy, y, r0, r1, N, alpha);
    default: return;  // the portable driver rejects other codes before dispatch
  }
}

}  // namespace
}  // namespace gemm_detail
}  // namespace fk
