// gemm.cpp: GEMM driver (public gemm, gemm_strided) and the Dense kernels.
// Placeholder-quality loops: correct on every size; the packed, vectorized version replaces it.
#include "fkeras/gemm.h"

#include <cmath>
#include <vector>

#include "fkeras/kernels.h"
#include "fkeras/runtime.h"

namespace fk {

void activation_inplace(float* y, int64_t n, int64_t act, float alpha) {
  const float selu_a = 1.6732632423543772f, selu_s = 1.0507009873554805f;
  for (int64_t i = 0; i < n; ++i) {
    float x = y[i];
    switch (act) {
      case kLinear: break;
      case kRelu: x = x > 0.f ? x : 0.f; break;
      case kSigmoid: x = 1.f / (1.f + std::exp(-x)); break;
      case kTanh: x = std::tanh(x); break;
      case kElu: x = x > 0.f ? x : alpha * std::expm1(x); break;
      case kSelu: x = selu_s * (x > 0.f ? x : selu_a * std::expm1(x)); break;
      case kSoftplus: x = x > 0.f ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); break;
      case kSoftsign: x = x / (1.f + std::fabs(x)); break;
      case kHardSigmoid: x = std::fmin(std::fmax(x + 3.f, 0.f), 6.f) / 6.f; break;
      case kExponential: x = std::exp(x); break;
      case kLeakyRelu: x = x > 0.f ? x : alpha * x; break;
      default: fail("activation code ", act, " is not a fused-epilogue activation");
    }
    y[i] = x;
  }
}

void activation_grad_from_output_inplace(float* dy, const float* y, int64_t n, int64_t act,
                                         float alpha) {
  const float selu_a = 1.6732632423543772f, selu_s = 1.0507009873554805f;
  for (int64_t i = 0; i < n; ++i) {
    const float v = y[i];
    float d = 1.f;
    switch (act) {
      case kLinear: break;
      case kRelu: d = v > 0.f ? 1.f : 0.f; break;
      case kSigmoid: d = v * (1.f - v); break;
      case kTanh: d = 1.f - v * v; break;
      case kElu: d = v > 0.f ? 1.f : v + alpha; break;
      case kSelu: d = v > 0.f ? selu_s : v + selu_s * selu_a; break;
      case kSoftplus: d = -std::expm1(-v); break;
      case kSoftsign: d = (1.f - std::fabs(v)) * (1.f - std::fabs(v)); break;
      case kHardSigmoid: d = (v > 0.f && v < 1.f) ? 1.f / 6.f : 0.f; break;
      case kExponential: d = v; break;
      case kLeakyRelu: d = v > 0.f ? 1.f : alpha; break;
      default: fail("activation code ", act, " is not a fused-epilogue activation");
    }
    dy[i] *= d;
  }
}

void gemm_strided(float* C, int64_t ldc, const float* A, int64_t lda, const float* B,
                  int64_t ldb, int64_t M, int64_t N, int64_t K, bool trans_a, bool trans_b,
                  float alpha, float beta, const Epilogue& ep) {
  parallel_for(M, 16, [&](int64_t m0, int64_t m1) {
    std::vector<float> acc(static_cast<size_t>(N));
    for (int64_t i = m0; i < m1; ++i) {
      for (int64_t j = 0; j < N; ++j) acc[j] = 0.f;
      for (int64_t k = 0; k < K; ++k) {
        const float a = trans_a ? A[k * lda + i] : A[i * lda + k];
        if (trans_b) {
          for (int64_t j = 0; j < N; ++j) acc[j] += a * B[j * ldb + k];
        } else {
          const float* b = B + k * ldb;
          for (int64_t j = 0; j < N; ++j) acc[j] += a * b[j];
        }
      }
      float* c = C + i * ldc;
      for (int64_t j = 0; j < N; ++j) {
        float v = alpha * acc[j] + (beta != 0.f ? beta * c[j] : 0.f);
        c[j] = ep.bias ? v + ep.bias[j] : v;
      }
      if (ep.activation != kLinear) activation_inplace(c, N, ep.activation, ep.alpha);
    }
  });
}

void gemm(float* C, const float* A, const float* B, int64_t M, int64_t N, int64_t K,
          bool trans_a, bool trans_b, float alpha, float beta) {
  gemm_strided(C, N, A, trans_a ? M : K, B, trans_b ? K : N, M, N, K, trans_a, trans_b, alpha,
               beta);
}

void dense_forward(float* y, const float* x, const float* kernel, const float* bias, int64_t M,
                   int64_t N, int64_t K, int64_t activation, float alpha) {
  Epilogue ep;
  ep.bias = bias;
  ep.activation = activation;
  ep.alpha = alpha;
  gemm_strided(y, N, x, K, kernel, N, M, N, K, false, false, 1.f, 0.f, ep);
}

void dense_backward(float* dx, float* dkernel, float* dbias, const float* dy, const float* x,
                    const float* y, const float* kernel, int64_t M, int64_t N, int64_t K,
                    int64_t activation, float alpha) {
  const float* dz = dy;
  std::vector<float> scratch;
  if (activation != kLinear) {
    scratch.assign(dy, dy + M * N);
    activation_grad_from_output_inplace(scratch.data(), y, M * N, activation, alpha);
    dz = scratch.data();
  }
  if (dx) gemm_strided(dx, K, dz, N, kernel, N, M, K, N, false, true, 1.f, 0.f);
  if (dkernel) gemm_strided(dkernel, N, x, K, dz, N, K, N, M, true, false, 1.f, 0.f);
  if (dbias) {
    for (int64_t j = 0; j < N; ++j) dbias[j] = 0.f;
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) dbias[j] += dz[i * N + j];
  }
}

}  // namespace fk
