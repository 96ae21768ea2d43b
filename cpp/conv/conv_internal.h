// conv_internal.h: what the conv2d forward and backward files share (not a public header).
//
// A convolution is run as GEMMs over blocks of output pixels: the pixels are flattened to
// m = (n * P + p) * Q + q in [0, M = N * P * Q), a block of rows [m0, m1) is gathered
// ("im2col") into a per-thread buffer of bounded size, row layout (r, s, c) with c within the
// group, which is exactly the row order of the filter viewed as a (R * S * C/groups, K) matrix.
// Hence y[m0:m1, group g] = cols (rows, R*S*Cg) @ w[:, g*Kg : (g+1)*Kg] with row stride K.
// No buffer ever holds a whole batch: block sizes come from a cache budget (block_rows).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

namespace fk {
namespace conv {

// Sizes and attributes of one convolution (kernels.h names), with the per-group sizes.
struct Shape {
  int64_t N, H, W, C, K, R, S, P, Q;
  int64_t sh, sw, dh, dw, pt, pl;  // strides, dilations, leading padding
  int64_t G, Cg, Kg;                // groups, channels and filters per group

  int64_t M() const { return N * P * Q; }       // output pixels
  int64_t row_len() const { return R * S * Cg; }  // one im2col row (one group)
  // 1x1, stride 1, no padding, output grid == input grid: the NHWC data already is the GEMM
  // operand (rows of C floats), no gather needed.
  bool pointwise() const {
    return R == 1 && S == 1 && sh == 1 && sw == 1 && pt == 0 && pl == 0 && P == H && Q == W;
  }
};

// Validates the arguments (FK_CHECK: sizes >= 0, strides and dilations >= 1, pads >= 0,
// groups >= 1 dividing C and K) and returns the shape.
Shape make_shape(const char* kernel, int64_t N, int64_t H, int64_t W, int64_t C, int64_t K,
                 int64_t R, int64_t S, int64_t P, int64_t Q, int64_t stride_h, int64_t stride_w,
                 int64_t dil_h, int64_t dil_w, int64_t pad_top, int64_t pad_left,
                 int64_t groups);

// Depthwise convolutions (groups == C > 1: one input channel per group) run as direct loops
// over channels (depthwise.cpp), not GEMMs; same arguments as the public kernels.
inline bool is_depthwise(const Shape& s) { return s.G > 1 && s.Cg == 1; }
void depthwise_forward(float* y, const float* x, const float* w, const float* bias,
                       const Shape& s, int64_t activation, float alpha);
void depthwise_backward_input(float* dx, const float* dy, const float* w, const Shape& s);
void depthwise_backward_weight(float* dw, const float* dy, const float* x, const Shape& s);

// The direct convolution (direct.cpp, groups == 1, AVX2/AVX-512 only): whether it serves this
// shape (FKERAS_CONV_DIRECT and the measured choice), and the kernels themselves.
bool direct_forward_ok(const Shape& s);
// Forward with 0 < K < the vector width (no column dilation): the dot-product row kernel.
bool direct_forward_narrow_ok(const Shape& s);
// Backward-weight with narrow filters (the forward's rule): the transposed dot-product kernel.
bool direct_backward_weight_narrow_ok(const Shape& s);
bool direct_backward_input_ok(const Shape& s);  // stride 1 only
bool direct_backward_weight_ok(const Shape& s);
void direct_backward_weight(float* dw, const float* dy, const float* x, const Shape& s);
void direct_forward(float* y, const float* x, const float* w, const float* bias, const Shape& s,
                    int64_t activation, float alpha);
void direct_backward_input(float* dx, const float* dy, const float* w, const Shape& s);
// direct_forward with a max pooling of its output in the same pass: y (N, P / pool_h,
// Q / pool_w, K), windows pool_h x pool_w at stride (pool_h, pool_w), 'valid' (see
// conv2d_forward_maxpool2d); the convolution's output is never written out. indices [opt]:
// as conv2d_forward_maxpool2d's.
void direct_forward_maxpool(float* y, int64_t* indices, const float* x, const float* w,
                            const float* bias, const Shape& s, int64_t activation, float alpha,
                            int64_t pool_h, int64_t pool_w);

// A per-thread, 64-byte aligned scratch buffer of at least n floats (contents undefined).
// slots 0, 1 and 2 are independent buffers. Grows on demand and is kept for the next call: a cache
// bounded by the block budget, never state that a kernel reads across calls.
float* scratch(int slot, size_t n);

// Rows per block for GEMMs whose gathered rows are `row_floats` long, over `total_rows` rows:
// a block stays within an L2-sized budget, and there are enough blocks to keep every thread
// busy (several per thread, handed out dynamically) when the problem is big enough.
int64_t block_rows(int64_t total_rows, int64_t row_floats);

// Runs body(b) for b in [0, nblocks): in parallel over blocks (the GEMMs inside then run
// serially) when there are enough blocks for every thread, else serially so that each GEMM
// can use the threads itself (N = 1 with a small image, for instance).
void run_blocks(int64_t nblocks, const std::function<void(int64_t)>& body);

// Gathers the im2col rows of output pixels [m0, m1) for group g:
// cols (m1 - m0, R*S*Cg) from x (N, H, W, C); taps outside the input read zero.
void im2col(float* cols, const float* x, const Shape& s, int64_t m0, int64_t m1, int64_t g);

// Whether a (n) holds an infinity or NaN: an all-ones exponent, tested on the bits with an
// integer OR-reduction that the compiler vectorizes. Kernels that skip the zero padding use it
// to give 0 * inf = 0 * NaN = NaN where the padding meets a non-finite value, as the reference.
bool any_non_finite(const float* a, int64_t n);

// dst[0:n] = src[0:n] (a short loop for the few-channel case, memcpy otherwise) / = 0.
void copy_floats(float* dst, const float* src, int64_t n);
void zero_floats(float* dst, int64_t n);

}  // namespace conv
}  // namespace fk
