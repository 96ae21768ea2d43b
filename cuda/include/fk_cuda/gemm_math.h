// gemm_math.h: the per-element math of the CUDA GEMM family (gemm, dense_forward,
// dense_backward): where an element of op(A) / op(B) lives in memory, tile coordinates ->
// matrix coordinates, bounds predicates, and the fused epilogue (alpha/beta, bias, activation
// code as in fkeras/kernels.h) with the activation derivative taken from the output. The
// kernels in cuda/kernels/gemm.cu call these; fkeras._C_cuda_host binds host builds of them
// (cuda/host/gemm.cpp) so CI checks them against NumPy float64 and the CPU kernels.
#pragma once

#include <math.h>
#include <stdint.h>

#include "fk_cuda/hd.h"

namespace fk_cuda {
namespace gemm_math {

// Activation codes of the fused epilogue (equal to fk::Activation in fkeras/kernels.h).
enum : int64_t {
  kLinear = 0, kRelu = 1, kSigmoid = 2, kTanh = 3, kElu = 4, kSelu = 5, kSoftplus = 8,
  kSoftsign = 9, kHardSigmoid = 11, kExponential = 12, kLeakyRelu = 13
};
constexpr float kSeluAlpha = 1.6732632423543772f;
constexpr float kSeluScale = 1.0507009873554805f;

// Memory offset of op(A)[i, k] (op(A) is M x K, row-major with leading dimension lda).
FK_HD int64_t a_offset(int64_t i, int64_t k, bool trans_a, int64_t lda) {
  return trans_a ? k * lda + i : i * lda + k;
}
// Memory offset of op(B)[k, j] (op(B) is K x N).
FK_HD int64_t b_offset(int64_t k, int64_t j, bool trans_b, int64_t ldb) {
  return trans_b ? j * ldb + k : k * ldb + j;
}
// First row / column of tile `t` of extent `tile`.
FK_HD int64_t tile_origin(int64_t t, int64_t tile) { return t * tile; }
// Number of tiles of extent `tile` covering n (0 for n == 0).
FK_HD int64_t tile_count(int64_t n, int64_t tile) { return (n + tile - 1) / tile; }
FK_HD bool in_bounds(int64_t i, int64_t j, int64_t M, int64_t N) {
  return i >= 0 && j >= 0 && i < M && j < N;
}
// Whether 4 consecutive elements starting at offset `off` of `base` are one aligned 16-byte
// vector: `off` % 4 == 0 relative to a 16-byte aligned base.
FK_HD bool vec4_aligned(const float* base, int64_t off) {
  return ((reinterpret_cast<uintptr_t>(base + off)) & 15u) == 0;
}

// act(v) for a fused activation code; NaN propagates (relu keeps a NaN).
FK_HD float activation(float v, int64_t act, float alpha) {
  switch (act) {
    case kRelu: return v < 0.f ? 0.f : v;
    case kLeakyRelu: return v > 0.f ? v : alpha * v;
    case kHardSigmoid: {
      float x = v + 3.f;
      x = x < 0.f ? 0.f : x;
      x = x > 6.f ? 6.f : x;
      return x * (1.f / 6.f);
    }
    case kSoftsign: return v / (1.f + fabsf(v));
    case kSigmoid: {
      const float e = expf(-fabsf(v));
      return v >= 0.f ? 1.f / (1.f + e) : e / (1.f + e);
    }
    case kTanh: return tanhf(v);
    case kElu: return v > 0.f ? v : alpha * expm1f(v);
    case kSelu: return kSeluScale * (v > 0.f ? v : kSeluAlpha * expm1f(v));
    case kSoftplus: return (v > 0.f ? v : 0.f) + log1pf(expf(-fabsf(v)));
    case kExponential: return expf(v);
    default: return v;  // kLinear (other codes are rejected by the bindings)
  }
}

// act'(x) written with y = act(x).
FK_HD float derivative_from_output(float y, int64_t act, float alpha) {
  switch (act) {
    case kRelu: return y > 0.f ? 1.f : 0.f;
    case kLeakyRelu: return y > 0.f ? 1.f : alpha;
    case kSigmoid: return y * (1.f - y);
    case kTanh: return 1.f - y * y;
    case kHardSigmoid: return (y > 0.f && y < 1.f) ? 1.f / 6.f : 0.f;
    case kElu: return y > 0.f ? 1.f : y + alpha;
    case kSelu: return y > 0.f ? kSeluScale : y + kSeluScale * kSeluAlpha;
    case kSoftsign: return (1.f - fabsf(y)) * (1.f - fabsf(y));
    case kExponential: return y;
    case kSoftplus: return -expm1f(-y);
    default: return 1.f;
  }
}

// Dense backward's dz = dy * act'(y); kLinear does not read y.
FK_HD float dz_value(float dy, float y, int64_t act, float alpha) {
  return act == kLinear ? dy : dy * derivative_from_output(y, act, alpha);
}

// The value stored to C[i, j]: act(alpha * acc + beta * c_old + bias_j). beta == 0 never reads
// c_old (a NaN there does not propagate), as the CPU gemm.
FK_HD float epilogue(float acc, float c_old, float alpha, float beta, float bias, int64_t act,
                     float act_alpha) {
  float v = alpha * acc;
  if (beta != 0.f) v += beta * c_old;
  v += bias;
  return activation(v, act, act_alpha);
}

}  // namespace gemm_math
}  // namespace fk_cuda
