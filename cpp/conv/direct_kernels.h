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
  bool finite_input = false;  // bf16 row kernel: the input holds no Inf / NaN (see its file)
  // Row kernels (fp32 and bf16): kRelu or kLeakyRelu (alpha) applied in the register block's
  // last store (kernels.h codes; any other value: none, the caller applies it).
  int64_t activation = 0;
  float alpha = 0.f;
  // Filter rows [r_lo, r_hi) of this output row: the others read only the padded copy's zero
  // rows and are skipped (r_hi < 0: all R).
  int64_t r_lo = 0, r_hi = -1;
  int64_t rows_end() const { return r_hi < 0 ? R : r_hi; }
};

// y (Q, K) of one output row = bias (K) [opt] + sum over taps of xr * w, then g.activation when
// it is kRelu / kLeakyRelu (fp32 kernels), else no activation.
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
  int64_t R = 1, dh = 1;  // filter rows and their dilation (the narrow kernel's runs)
};
// Narrow filters (0 < K < vector_width, no column dilation): the same sum into the transposed
// gradient dwt (K, R, S*C), the x runs of each filter row read a vector at a time.
using NarrowWeightFn = void (*)(float* dwt, const float* xr, const float* dy, const WGeom& g,
                                int64_t rows);
using WeightFn = void (*)(float* dwp, const float* xr, const float* dy, const int64_t* off,
                          const WGeom& g, int64_t rows);

struct Kernels {
  RowFn row;
  WeightFn weight;
  // Narrow filters, 0 < K < vector_width, no column dilation: y (Q, K) of one output row =
  // bias + sum over taps of xr * w, with w given transposed as wt (K, R, S*C) (the dot-product
  // form; direct_impl.h). No activation.
  RowFn narrow;
  NarrowWeightFn narrow_weight;
  int64_t vector_width;  // floats per vector: K must be a multiple
};

Kernels kernels_avx2();
Kernels kernels_avx512();

// The bf16-products variant (direct_avx512_bf16.cpp, VDPBF16PS; entered only under
// gemm_bf16_active()). Same geometry; the input copies are bf16 (uint16_t) or bf16 pairs
// (uint32_t, low half first), the filter and dy packed as pairs along their reduction. Needs
// K % 16 == 0 (w's K, dy's K). See the file comment for the layouts.
struct Bf16Kernels {
  // buf (rows, Wp, C) = bf16 of the padded input rows (direct.cpp pad_rows, rounded), then
  // one zero (buf holds rows * Wp * C + 1 values).
  void (*pad_rows)(uint16_t* buf, const float* x, int64_t n, int64_t h_lo, int64_t rows,
                   int64_t w_lo, int64_t Wp, int64_t H, int64_t W, int64_t C);
  // xq (rows, Wp, C) pairs (x[col], x[col + sw]) of the padded rows; tmp: rows*(Wp+sw)*C bf16.
  void (*pair_rows)(uint32_t* xq, uint16_t* tmp, const float* x, int64_t n, int64_t h_lo,
                    int64_t rows, int64_t w_lo, int64_t Wp, int64_t H, int64_t W, int64_t C,
                    int64_t sw);
  // wp (R, taps, ceil(run / 2), K) of w (R, S, C, K); run = S*C (dw == 1) or C (taps = S).
  void (*pack_filter)(uint32_t* wp, const float* w, const Geom& g);
  // dyp (rows, ceil(Q / 2), K) pairs of adjacent pixels of dy (rows, Q, K).
  void (*pack_dy)(uint32_t* dyp, const float* dy, int64_t rows, int64_t Q, int64_t K);
  // As RowFn on the bf16 copy and the packed filter.
  void (*row)(float* y, const uint16_t* xr, const uint32_t* wp, const float* bias,
              const Geom& g);
  // As WeightFn on the pair copy xq and the packed dy of the same rows.
  void (*weight)(float* dwp, const uint32_t* xq, const uint32_t* dyp, const int64_t* off,
                 const WGeom& g, int64_t rows);
};

Bf16Kernels kernels_avx512_bf16();

}  // namespace direct
}  // namespace fk
