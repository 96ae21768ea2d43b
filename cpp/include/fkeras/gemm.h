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
#include <memory>

namespace fk {

struct Epilogue {
  const float* bias = nullptr;  // (N) [opt]
  int64_t activation = 0;       // kLinear
  float alpha = 0.f;            // ELU alpha / LeakyReLU slope
};

void gemm_strided(float* C, int64_t ldc, const float* A, int64_t lda, const float* B,
                  int64_t ldb, int64_t M, int64_t N, int64_t K, bool trans_a, bool trans_b,
                  float alpha, float beta, const Epilogue& epilogue = Epilogue());

// op(B) (K, N) packed once, in the current ISA's panel layout, for many products that share it
// (the recurrent kernels' per-step GEMMs reuse their weights for every step). Valid while the
// ISA and the bf16 mode (runtime.h: gemm_bf16_active()) are unchanged (checked); N at most gemm_prepack_max_n() (a wider B is kept by pointer and
// packed per call instead, so any size works).
struct GemmPackedB {
  std::unique_ptr<float[]> panels;  // (K, cols) panels [opt]: null when B is kept by pointer
  const float* B = nullptr;         // the source, for the unpacked fallback
  int64_t ldb = 0, K = 0, N = 0, cols = 0;
  bool trans_b = false;
  int isa = -1;
  bool bf16 = false;  // panels in the bf16 K-pair layout (packed with gemm_bf16_active())
};
int64_t gemm_prepack_max_n();
void gemm_pack_b(GemmPackedB& out, const float* B, int64_t ldb, int64_t K, int64_t N,
                 bool trans_b);
// C (M, N; ldc) = epilogue(alpha * op(A) @ B + beta * C) with B from gemm_pack_b. Splits rows
// over the threads outside a parallel region; one block inside one.
void gemm_prepacked(float* C, int64_t ldc, const float* A, int64_t lda, const GemmPackedB& B,
                    int64_t M, bool trans_a, float alpha, float beta,
                    const Epilogue& epilogue = Epilogue());

// Benchmarks only: runs a register-only loop of `iters` x 24 AVX-512 multiply-adds (fp32 FMA, or
// VDPBF16PS when bf16) on the calling thread and returns the flops done (FMA: 2 per lane,
// VDPBF16PS: 4 per lane). Throws fk::Error when the CPU lacks the instruction.
double gemm_peak_loop(bool bf16, int64_t iters);

// Applies a fused-epilogue activation in place to n floats (shared by the GEMM epilogue, the
// conv epilogue and dense_backward's derivative), and multiplies dy by act'(from y) in place.
void activation_inplace(float* y, int64_t n, int64_t activation, float alpha);
void activation_grad_from_output_inplace(float* dy, const float* y, int64_t n,
                                         int64_t activation, float alpha);

}  // namespace fk
