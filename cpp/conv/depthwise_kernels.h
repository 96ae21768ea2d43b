// depthwise_kernels.h: the per-ISA row loops of depthwise convolution (not a public header).
//
// Depthwise: groups == C, so each group has one input channel and Kg = K / C filters; output
// channel k reads input channel k / Kg. A GEMM per group would have one column and a reduction
// of R*S: far too small, so these are direct loops, vectorized over channels.
// depthwise_impl.h holds the one portable definition; depthwise.cpp, depthwise_avx2.cpp and
// depthwise_avx512.cpp compile it with their own flags, and depthwise.cpp picks one per call.
#pragma once

#include <cstdint>

namespace fk {
namespace depthwise {

// Sizes and attributes (kernels.h names); Kg = K / C.
struct Geom {
  int64_t N, H, W, C, K, R, S, P, Q, sh, sw, dh, dw, pt, pl, Kg;
};

struct Kernels {
  // y row (n, p): (Q, K) = conv + bias (K) [opt], before the activation. x (N, H, W, C),
  // w (R, S, 1, K).
  void (*forward_row)(float* y, const float* x, const float* w, const float* bias,
                      const Geom& g, int64_t n, int64_t p);
  // dx row (n, h): (W, C), overwritten, from dy (N, P, Q, K) and w.
  void (*backward_input_row)(float* dx, const float* dy, const float* w, const Geom& g,
                             int64_t n, int64_t h);
  // dw (R, S, 1, K) += the contribution of output row (n, p), from x and dy.
  void (*backward_weight_row)(float* dw, const float* x, const float* dy, const Geom& g,
                              int64_t n, int64_t p);
};

Kernels kernels_scalar();
Kernels kernels_avx2();
Kernels kernels_avx512();

}  // namespace depthwise
}  // namespace fk
