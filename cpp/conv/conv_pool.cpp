// conv_pool.cpp: conv2d_maxpool2d_backward (kernels.h), the backward of a convolution whose
// output was max pooled in its store (conv2d_forward_maxpool2d with indices), up to the
// convolution's own products.
//
// One pass writes dz (the convolution output's shape) and the bias gradient: each pixel row of
// dz gathers its window's cell (cotangent, output, index) and keeps the value in the one
// channel slot the index names, zeros elsewhere (a gather, not a scatter: no write depends on
// an index, so a bad index cannot write out of bounds). The rows are taken in the chunks and
// summed by the rule of fkeras/column_sums.h, as bias_activation_backward's, so dbias is
// bit-identical to the unfused pair's (maxpool2d_backward, then bias_activation_backward).
#include <vector>

#include "fkeras/column_sums.h"
#include "fkeras/common.h"
#include "fkeras/kernels.h"
#include "fkeras/runtime.h"
#include "pool_kernels.h"

namespace fk {

void conv2d_maxpool2d_backward(float* dz, float* dbias, const float* dy, const float* y,
                               const int64_t* indices, int64_t N, int64_t P, int64_t Q,
                               int64_t K, int64_t pool_h, int64_t pool_w, int64_t activation,
                               float alpha) {
  FK_CHECK(N >= 0 && P >= 0 && Q >= 0 && K >= 0, "conv2d_maxpool2d_backward: sizes must be ",
           ">= 0");
  FK_CHECK(pool_h >= 1 && pool_w >= 1, "conv2d_maxpool2d_backward: pool sizes must be >= 1, ",
           "received (", pool_h, ", ", pool_w, ")");
  FK_CHECK(activation == kLinear || activation == kRelu || activation == kLeakyRelu,
           "conv2d_maxpool2d_backward: activation must be linear, relu or leaky_relu, ",
           "received code ", activation);
  const int64_t M = N * P * Q;
  if (dbias && M == 0)
    for (int64_t j = 0; j < K; ++j) dbias[j] = 0.f;
  if (!(dz || dbias) || M == 0 || K == 0) return;
  const pool::ScatterGeom g{P, Q, K, P / pool_h, Q / pool_w, pool_h, pool_w, activation, alpha};
  const pool::ConvMaxBackFn rows_fn = pool::active_kernels().conv_max_backward;
  // bias_activation_backward's chunks and sums (fkeras/column_sums.h).
  const colsum::Chunks ch = colsum::chunks(M, K);
  std::vector<double> partial(dbias ? static_cast<size_t>(ch.blocks * K) : 0);  // (blocks, K)
  parallel_for(ch.blocks, 1, [&](int64_t b0, int64_t b1) {
    std::vector<float> tmp(dz ? 0 : static_cast<size_t>(8 * K));  // (8, K): sums without dz
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t r0 = b * ch.rows, r1 = r0 + ch.rows < M ? r0 + ch.rows : M;
      rows_fn(dz, dbias ? partial.data() + b * K : nullptr, tmp.data(), dy, y, indices, g, r0,
              r1);
    }
  });
  if (dbias) colsum::finish(dbias, partial.data(), ch.blocks, K);
}

}  // namespace fk
