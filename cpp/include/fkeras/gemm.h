// gemm.h: the internal GEMM entry point that other kernel families (conv, rnn, dense) build on.
//
// C (M, N; row stride ldc) = epilogue(alpha * op(A) @ op(B) + beta * C)
//   op(A) is (M, K): A (M, K; row stride lda), or A (K, M; row stride lda) when trans_a.
//   op(B) is (K, N): B (K, N; row stride ldb), or B (N, K; row stride ldb) when trans_b.
//   beta == 0: C is not read (NaN in C does not leak).
//   epilogue: + bias[j] (bias [opt], length N), then the activation code (kernels.h; fused
//   codes only) with its alpha.
// Multithreaded through fk::parallel_for (serial when called inside a parallel region), so
// callers may call it per block from their own parallel loops.
#pragma once

#include <cstdint>

namespace fk {

struct Epilogue {
  const float* bias = nullptr;  // (N) [opt]
  int64_t activation = 0;       // kLinear
  float alpha = 0.f;            // ELU alpha / LeakyReLU slope
};

void gemm_strided(float* C, int64_t ldc, const float* A, int64_t lda, const float* B,
                  int64_t ldb, int64_t M, int64_t N, int64_t K, bool trans_a, bool trans_b,
                  float alpha, float beta, const Epilogue& epilogue = Epilogue());

// Applies a fused-epilogue activation in place to n floats (shared by the GEMM epilogue, the
// conv epilogue and dense_backward's derivative), and multiplies dy by act'(from y) in place.
void activation_inplace(float* y, int64_t n, int64_t activation, float alpha);
void activation_grad_from_output_inplace(float* dy, const float* y, int64_t n,
                                         int64_t activation, float alpha);

}  // namespace fk
