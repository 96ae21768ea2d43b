// pool_kernels.h: the per-ISA inner loops of pooling (not a public header).
//
// pool_impl.h holds one portable definition of each loop; pooling.cpp, pooling_avx2.cpp and
// pooling_avx512.cpp each compile it with their own ISA flags (the compiler vectorizes the
// loops over channels), and pooling.cpp picks one per call from fk::cpu_isa().
#pragma once

#include <cstdint>

namespace fk {
namespace pool {

// One pooling problem (kernels.h names). Windows never lie entirely in the padding.
struct Geom {
  int64_t N, H, W, C, P, Q, R, S, sh, sw, pt, pl;
};

// Row kernels: output row (n, p), all q and channels.
// y (Q, C) and idx (Q, C) of that row; x (N, H, W, C) whole input (indices are flat into it,
// plus base: the fused conv + pool pools rows of a window buffer whose offset 0 is element
// `base` of the convolution's output).
using MaxRowFn = void (*)(float* y, int64_t* idx, const float* x, const Geom& g, int64_t n,
                          int64_t p, int64_t base);
using AvgRowFn = void (*)(float* y, const float* x, const Geom& g, int64_t n, int64_t p);
// dx (N, H, W, C) for image n, channels [c0, c1): overwritten with the scatter of dy / count.
using AvgBackFn = void (*)(float* dx, const float* dy, const Geom& g, int64_t n, int64_t c0,
                           int64_t c1);

// The backward of a convolution whose output z (N, P, Q, K) was max pooled in its store
// (conv2d_forward_maxpool2d with indices; kernels.h conv2d_maxpool2d_backward): pixel rows
// m in [r0, r1) of z (m = (n*P + p)*Q + q, K floats each). Row m of dz = dy * act'(y) of its
// window's cell where the cell's index is m*K + k, else 0 (rows and columns past the last
// whole window: 0); dy, y, idx (N, Pp, Qp, K). With colsum (K): the column sums of those dz
// rows, overwritten, by the rule of fkeras/column_sums.h (bias_activation_backward's), so
// that dbias is bit-identical to the unfused pair's.
// dz == nullptr: the rows go through tmp (8, K) for the sums only.
struct ScatterGeom {
  int64_t P, Q, K, Pp, Qp, ph, pw, activation;  // activation: kLinear, kRelu, kLeakyRelu
  float alpha;
};
using ConvMaxBackFn = void (*)(float* dz, double* colsum, float* tmp, const float* dy,
                               const float* y, const int64_t* idx, const ScatterGeom& g,
                               int64_t r0, int64_t r1);

// The compact form of a max pool with strides == pool_size, 'valid' (the BN + ReLU + max-pool
// kernels of cpp/batchnorm/): each maximum's position in its window, int8 (r * S + s, the
// window scanned row-major; S * R <= 128), written by MaxPosRowFn (max_row's values, window
// order and tie rule). MaxUnpoolRowsFn: rows m in [r0, r1) of maxpool2d_backward's output
// from these positions (g: P, Q, K the un-pooled sizes; activation unused): out
// ((r1 - r0), K) from dy, pos (N, Pp, Qp, K); row m is 0.f + dy of its window's cell where
// the cell's position is m's, else 0.
using MaxPosRowFn = void (*)(float* y, int8_t* pos, const float* x, const Geom& g, int64_t n,
                             int64_t p);
using MaxUnpoolRowsFn = void (*)(float* out, const float* dy, const int8_t* pos,
                                 const ScatterGeom& g, int64_t r0, int64_t r1);

struct Kernels {
  MaxRowFn max_row;
  AvgRowFn avg_row;
  AvgBackFn avg_backward;
  AvgRowFn max_values_row;  // max_row without the indices (inference), same values
  ConvMaxBackFn conv_max_backward;
  MaxPosRowFn max_pos_row;
  MaxUnpoolRowsFn max_unpool_rows;
};

// The kernels of the running ISA (fk::cpu_isa()): AVX-512, AVX2 or the portable build.
Kernels active_kernels();

Kernels kernels_scalar();
Kernels kernels_avx2();
Kernels kernels_avx512();

}  // namespace pool
}  // namespace fk
