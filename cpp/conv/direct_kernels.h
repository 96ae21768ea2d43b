// direct_kernels.h: the per-ISA microkernels of the direct convolution (not a public header).
//
// Direct convolution (groups == 1): a register block of PB output pixels x NV vectors of output
// channels accumulates over the filter taps (r, s, c), broadcasting one input float per pixel
// and FMA-ing it with the filter row w[r, s, c, k0 : k0 + NV*VW] (K is contiguous in the
// (R, S, C, K) layout). No im2col: the input rows an output row needs are read from a padded
// copy (direct.cpp), so the microkernel has no bounds checks.
// direct_impl.h holds the one definition; direct_avx2.cpp and direct_avx512.cpp compile it with
// their own vector width; the scalar ISA never runs it (the GEMM path serves it).
#pragma once

#include <cstdint>

namespace fk {
namespace direct {

// One convolution as the microkernel sees it.
struct Geom {
  int64_t C, K, R, S, Q;   // input channels, output channels, taps, output columns
  int64_t sw, dh, dw;      // column stride, dilations
  int64_t ld_row;          // floats between two rows of the padded input copy (Wp * C)
  int64_t slice_bytes;     // filter slices larger than this are taken one filter row at a time
};

// y (Q, K) of one output row = bias (K) [opt] + sum over taps of xr * w, no activation.
// xr: the padded input rows of this output row, (R rows spaced dh, Wp, C), row stride ld_row,
// xr[0] is the top-left tap of output pixel q = 0. w (R, S, C, K). Requires K % vector_width == 0.
using RowFn = void (*)(float* y, const float* xr, const float* w, const float* bias,
                       const Geom& g);

// Backward-weight, for the dw rows t = (r, s, c) of the (R*S*C, K) filter matrix:
// dwp (T, K) += sum over the pixels of `rows` output rows x Q columns of x(t, pixel) * dy[pixel],
// x(t, (p, q)) = xr[p * sh * ld_row + q * sw * C + off[t]] (off[t] = r*dh*ld_row + s*dw*C + c),
// dy (rows, Q, K) contiguous. Requires K % vector_width == 0.
struct WGeom {
  int64_t T, K, C, Q, sh, sw, ld_row;
};
using WeightFn = void (*)(float* dwp, const float* xr, const float* dy, const int64_t* off,
                          const WGeom& g, int64_t rows);

struct Kernels {
  RowFn row;
  WeightFn weight;
  int64_t vector_width;  // floats per vector: K must be a multiple
};

Kernels kernels_avx2();
Kernels kernels_avx512();

}  // namespace direct
}  // namespace fk
