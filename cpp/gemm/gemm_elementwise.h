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

// The derivative act'(x) written as a function of y = act(x), for one element.
template <int64_t kAct>
inline float derivative_from_output(float v, float alpha) {
  if constexpr (kAct == kRelu) return v > 0.f ? 1.f : 0.f;
  if constexpr (kAct == kLeakyRelu) return v > 0.f ? 1.f : alpha;
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
// sum of dz over those rows (float64, overwritten). act == kLinear does not read y.
template <int64_t kAct, bool kDz, bool kSum>
void dz_colsum_rows(float* __restrict dz, double* __restrict colsum, const float* __restrict dy,
                    const float* __restrict y, int64_t r0, int64_t r1, int64_t N, float alpha) {
  if (kSum)
    for (int64_t j = 0; j < N; ++j) colsum[j] = 0.0;
  for (int64_t i = r0; i < r1; ++i) {
    const float* __restrict g = dy + i * N;
    const float* __restrict v = y + i * N;
    for (int64_t j = 0; j < N; ++j) {
      const float d = kAct == kLinear ? g[j] : g[j] * derivative_from_output<kAct>(v[j], alpha);
      if (kDz) dz[i * N + j] = d;
      if (kSum) colsum[j] += static_cast<double>(d);
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
