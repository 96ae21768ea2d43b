// batchnorm_isa.h: the per-ISA block kernels behind cpp/batchnorm/batchnorm.cpp (private).
//
// batchnorm.cpp plans the work (tiles, per-tile float64 partial sums, the per-channel math) and
// calls one of three tables of block kernels: scalar (batchnorm.cpp, portable flags),
// avx2 (batchnorm_avx2.cpp) and avx512 (batchnorm_avx512.cpp). The three are the same template
// code (batchnorm_kernels.h) instantiated on a different vector type.
//
// Two shapes of block, both over row-major float32 data:
// - rows: a (rows, cols) tile with row stride ld, one value per column (channels-last: the
//   columns are the channels; vectors run across columns). Sums are per column.
// - plane: `rows` contiguous runs of `len` floats, run r at x + r * stride, all of one channel
//   (channels-first: the runs are H*W planes; vectors run along each run). Sums are scalars.
//
// Statistics and backward reductions accumulate in float64: each float32 product of two
// float32 values is exact in float64, so the sums are exact up to the float64 additions.
// Reductions OVERWRITE their outputs; the apply kernels overwrite y / dx. The relu variants
// (batchnorm_relu_*) fuse a following ReLU: the forward clamps, the backward gates dy by the
// mask it recomputes from x, so neither y nor a separate activation pass is needed.
#pragma once

#include <cstdint>

namespace fk {
namespace bn {

struct BlockKernels {
  // s1 (cols) += sum_r (x - shift), s2 (cols) += sum_r (x - shift)^2, in float64.
  void (*rows_stats)(const float* x, int64_t rows, int64_t cols, int64_t ld, const float* shift,
                     double* s1, double* s2);
  // sdy += sum dy, sd += sum (x - m), sdyd += sum dy * (x - m), per column, float64.
  void (*rows_reduce)(const float* dy, const float* x, int64_t rows, int64_t cols, int64_t ld,
                      const float* m, double* sdy, double* sd, double* sdyd);
  // y = (x - m) * s + t, per column coefficients (cols).
  void (*rows_forward)(float* y, const float* x, int64_t rows, int64_t cols, int64_t ld,
                       const float* m, const float* s, const float* t);
  // dx = a * (dy + (b * (x - m) + c)), per column coefficients (cols).
  void (*rows_backward)(float* dx, const float* dy, const float* x, int64_t rows, int64_t cols,
                        int64_t ld, const float* m, const float* a, const float* b,
                        const float* c);
  // The same four over runs of one channel; sums go to out[0..1] / out[0..2].
  void (*plane_stats)(const float* x, int64_t rows, int64_t len, int64_t stride, float shift,
                      double* out);
  void (*plane_reduce)(const float* dy, const float* x, int64_t rows, int64_t len,
                       int64_t stride, float m, double* out);
  void (*plane_forward)(float* y, const float* x, int64_t rows, int64_t len, int64_t stride,
                        float m, float s, float t);
  void (*plane_backward)(float* dx, const float* dy, const float* x, int64_t rows, int64_t len,
                         int64_t stride, float m, float a, float b, float c);

  // BN + ReLU. forward: max((x - m) * s + t, 0), NaN kept. reduce / backward: as above with
  // dy replaced by g = dy * [(x - m) * s + t > 0], the forward's mask recomputed with its
  // float32 operations (an infinite or NaN dy stays NaN where the mask is closed, as
  // dy * relu'(x) does in the unfused pair).
  void (*rows_reduce_relu)(const float* dy, const float* x, int64_t rows, int64_t cols,
                           int64_t ld, const float* m, const float* s, const float* t,
                           double* sdy, double* sd, double* sdyd);
  void (*rows_forward_relu)(float* y, const float* x, int64_t rows, int64_t cols, int64_t ld,
                            const float* m, const float* s, const float* t);
  void (*rows_backward_relu)(float* dx, const float* dy, const float* x, int64_t rows,
                             int64_t cols, int64_t ld, const float* m, const float* a,
                             const float* b, const float* c, const float* s, const float* t);
  void (*plane_reduce_relu)(const float* dy, const float* x, int64_t rows, int64_t len,
                            int64_t stride, float m, float s, float t, double* out);
  void (*plane_forward_relu)(float* y, const float* x, int64_t rows, int64_t len,
                             int64_t stride, float m, float s, float t);
  void (*plane_backward_relu)(float* dx, const float* dy, const float* x, int64_t rows,
                              int64_t len, int64_t stride, float m, float a, float b, float c,
                              float s, float t);
};

extern const BlockKernels kScalarKernels;
extern const BlockKernels kAvx2Kernels;
extern const BlockKernels kAvx512Kernels;

}  // namespace bn
}  // namespace fk
