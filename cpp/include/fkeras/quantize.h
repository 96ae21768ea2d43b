// quantize.h: int8 post-training quantization kernels (Keras 3's `quantize("int8")`).
//
// Layouts are row-major and every output is OVERWRITTEN (never accumulated):
//   quantize_int8_rows   x (M, K) float32 -> q (M, K) int8, scale (M) float32.
//                        Per row (the last axis), as Keras's abs_max_quantize(axis=-1) with
//                        value_range (-127, 127) and epsilon 1e-7, in float32:
//                          scale = 127 / (max_k |x[m, k]| + 1e-7)
//                          q = clip(round_half_even(x * scale), -127, 127)
//                        A row holding NaN gets scale NaN and q 0 for every NaN entry (the
//                        dequantized product is then NaN, never a made-up number).
//   matmul_int8          a (M, K) int8 @ b (K, N) int8 -> c (M, N) int32, exact integer sums
//                        (two's complement: a sum past the int32 range wraps, as an int32
//                        matmul does; never for K <= 131072 whatever the int8 values).
//   dense_int8_forward   y (M, N) float32 = float(quantize_rows(x) @ kernel) /
//                        (kernel_scale[n] * inputs_scale[m]), Keras's int8 Dense product before
//                        bias and activation; kernel (K, N) int8, kernel_scale (N) float32.
// Threads: rows of M over the pool (runtime.h). ISA: scalar / avx2 / avx512 builds of the same
// loops (quantize_kernels.h), picked at run time by fk::cpu_isa().
#pragma once

#include <cstdint>

namespace fk {

void quantize_int8_rows(int8_t* q, float* scale, const float* x, int64_t M, int64_t K);
void matmul_int8(int32_t* c, const int8_t* a, const int8_t* b, int64_t M, int64_t N, int64_t K);
void dense_int8_forward(float* y, const float* x, const int8_t* kernel, const float* kernel_scale,
                        int64_t M, int64_t N, int64_t K);

}  // namespace fk
