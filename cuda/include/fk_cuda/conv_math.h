// conv_math.h: index maps of the CUDA convolution and pooling kernels (NHWC activations,
// (R, S, C/groups, K) filters, as fkeras._C): the implicit-GEMM view of conv2d
//   rows  = (n, p, q) output positions (N*P*Q), cols = k output channels (K),
//   depth = (r, s, c) filter taps of one group (R*S*C/groups),
// input row h = p * stride + r * dil - pad (zero outside [0, H)), and the inverse map used by
// the input gradient. Compiled for the device (cuda/kernels/conv.cu) and for the host
// (cuda/host/conv.cpp, tests/cuda/test_conv_math_host.py).
#pragma once

#include <stdint.h>

#include "fk_cuda/hd.h"

namespace fk_cuda {
namespace conv_math {

struct Geom {
  int64_t N, H, W, C, K, R, S, P, Q, stride_h, stride_w, dil_h, dil_w, pad_top, pad_left, groups;
};

struct Pos3 { int64_t a, b, c; };

// GEMM row -> (n, p, q); (n, p, q) -> row.
FK_HD Pos3 row_to_npq(int64_t row, const Geom& g) {
  const int64_t q = row % g.Q, t = row / g.Q;
  return {t / g.P, t % g.P, q};
}
FK_HD int64_t npq_to_row(int64_t n, int64_t p, int64_t q, const Geom& g) {
  return (n * g.P + p) * g.Q + q;
}
// GEMM depth index -> (r, s, c) with c within the group (C / groups channels).
FK_HD Pos3 depth_to_rsc(int64_t kk, const Geom& g) {
  const int64_t cg = g.C / g.groups;
  const int64_t c = kk % cg, t = kk / cg;
  return {t / g.S, t % g.S, c};
}
FK_HD int64_t depth_size(const Geom& g) { return g.R * g.S * (g.C / g.groups); }
// Group of output channel k.
FK_HD int64_t group_of(int64_t k, const Geom& g) { return k / (g.K / g.groups); }
// Input coordinate read by output coordinate o at tap t along one axis.
FK_HD int64_t in_coord(int64_t o, int64_t t, int64_t stride, int64_t dil, int64_t pad) {
  return o * stride + t * dil - pad;
}
FK_HD bool in_range(int64_t v, int64_t n) { return v >= 0 && v < n; }
// Inverse along one axis: the output coordinate o with in_coord(o, t) == i, if any.
FK_HD bool out_coord(int64_t i, int64_t t, int64_t stride, int64_t dil, int64_t pad, int64_t O,
                     int64_t* o) {
  const int64_t num = i + pad - t * dil;
  if (num < 0 || num % stride != 0) return false;
  *o = num / stride;
  return *o < O;
}
FK_HD int64_t x_offset(int64_t n, int64_t h, int64_t w, int64_t c, const Geom& g) {
  return ((n * g.H + h) * g.W + w) * g.C + c;
}
FK_HD int64_t y_offset(int64_t n, int64_t p, int64_t q, int64_t k, const Geom& g) {
  return ((n * g.P + p) * g.Q + q) * g.K + k;
}
// Filter offset of tap (r, s), in-group channel c, output channel k.
FK_HD int64_t w_offset(int64_t r, int64_t s, int64_t c, int64_t k, const Geom& g) {
  return ((r * g.S + s) * (g.C / g.groups) + c) * g.K + k;
}
// Implicit-GEMM operand A[row, kk] of the forward conv for output channel group grp: the input
// element, or nothing (zero padding) when out of range. Returns the offset or -1.
FK_HD int64_t a_offset(int64_t row, int64_t kk, int64_t grp, const Geom& g) {
  const Pos3 o = row_to_npq(row, g);
  const Pos3 t = depth_to_rsc(kk, g);
  const int64_t h = in_coord(o.b, t.a, g.stride_h, g.dil_h, g.pad_top);
  const int64_t w = in_coord(o.c, t.b, g.stride_w, g.dil_w, g.pad_left);
  if (!in_range(h, g.H) || !in_range(w, g.W)) return -1;
  return x_offset(o.a, h, w, grp * (g.C / g.groups) + t.c, g);
}

// Pooling window along one axis: taps [t0, t1) in range for output coordinate o.
FK_HD void window(int64_t o, int64_t R, int64_t stride, int64_t pad, int64_t H, int64_t* t0,
                  int64_t* t1) {
  const int64_t start = o * stride - pad;
  *t0 = start < 0 ? -start : 0;
  *t1 = start + R > H ? H - start : R;
}

}  // namespace conv_math
}  // namespace fk_cuda
