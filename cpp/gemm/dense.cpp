// dense.cpp: the Dense kernels (kernels.h) on top of the packed GEMM.
//
// dense_forward: y (M, N) = act(x (M, K) @ kernel (K, N) + bias (N) [opt]), one GEMM whose
//   epilogue adds the bias and applies the activation on each C tile while it is in L1.
// dense_backward: dz = dy * act'(y) (from the output), then
//   dx (M, K) [opt] = dz @ kernel^T, dkernel (K, N) [opt] = x^T @ dz, dbias (N) [opt] = sum_i dz.
//   One threaded elementwise pass (bias_activation_backward, also the conv2d op's) writes dz
//   (only when a GEMM needs it and act != linear) and the per-row-chunk column sums for dbias
//   (groups of 8 rows in float, their totals in float64); the chunks depend only on (M, N), so
//   dbias is the same for every thread count. All outputs are overwritten.
#include "fkeras/column_sums.h"
#include "fkeras/gemm.h"
#include "fkeras/kernels.h"
#include "fkeras/runtime.h"
#include "gemm_internal.h"
#include "gemm_scratch.h"

namespace fk {
namespace {

thread_local gemm_detail::Scratch<float> t_dz;        // (M, N)
thread_local gemm_detail::Scratch<double> t_partial;  // (row blocks, N)

// dz (M, N) [opt] and dbias (N) [opt] from dy and y, in the row chunks of fkeras/column_sums.h
// (by size only); each chunk's column sums as bias_add_backward's (whose grid this is from 2^20 elements while N <= 2048, so the conv2d op's
// bias gradient is bit-identical to its unfused form there), the chunks added in order.
void dz_and_dbias(float* dz, float* dbias, const float* dy, const float* y, int64_t M, int64_t N,
                  int64_t act, float alpha) {
  const auto& ops = gemm_detail::current_ops();
  const colsum::Chunks ch = colsum::chunks(M, N);
  double* partial = dbias ? t_partial.get(static_cast<size_t>(ch.blocks * N)) : nullptr;
  parallel_for(ch.blocks, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t r0 = b * ch.rows, r1 = r0 + ch.rows < M ? r0 + ch.rows : M;
      ops.dz_colsum(dz, partial ? partial + b * N : nullptr, dy, y, r0, r1, N, act, alpha);
    }
  });
  if (dbias) colsum::finish(dbias, partial, ch.blocks, N);
}

}  // namespace

void bias_activation_backward(float* dz, float* dbias, const float* dy, const float* y,
                              int64_t M, int64_t N, int64_t activation, float alpha) {
  gemm_detail::check_fused(activation);
  FK_CHECK(M >= 0 && N >= 0, "bias_activation_backward: negative size M=", M, " N=", N);
  if (dbias && M == 0) {
    for (int64_t j = 0; j < N; ++j) dbias[j] = 0.f;
  } else if ((dz || dbias) && M > 0 && N > 0) {
    dz_and_dbias(dz, dbias, dy, y, M, N, activation, alpha);
  }
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
  gemm_detail::check_fused(activation);
  FK_CHECK(M >= 0 && N >= 0 && K >= 0, "dense_backward: negative size M=", M, " N=", N,
           " K=", K);
  const bool need_dz = (dx || dkernel) && activation != kLinear && M > 0 && N > 0;
  float* dz = need_dz ? t_dz.get(static_cast<size_t>(M * N)) : nullptr;
  if (need_dz || dbias) bias_activation_backward(dz, dbias, dy, y, M, N, activation, alpha);
  const float* g = need_dz ? dz : dy;  // (M, N)
  if (dx) gemm_strided(dx, K, g, N, kernel, N, M, K, N, false, true, 1.f, 0.f);
  if (dkernel) gemm_strided(dkernel, N, x, K, g, N, K, N, M, true, false, 1.f, 0.f);
}

}  // namespace fk
