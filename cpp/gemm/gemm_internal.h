// gemm_internal.h: what the portable GEMM driver (gemm.cpp) and the per-ISA kernel files
// (gemm_kernel_avx512.cpp, gemm_kernel_avx2.cpp, gemm_kernel_scalar.cpp) share.
//
// Work split: the driver validates, handles the degenerate cases (M, N or K == 0, alpha == 0),
// plans a grid of C blocks and hands the blocks to fk::parallel_for. Each ISA file computes one
// C block completely (all of K, beta, the epilogue) with its own packing and microkernels, so a
// block is independent of every other: no shared packed buffer, no barrier inside a region, and
// a descheduled thread only delays the block it holds.
//
// Only plain structs and declarations here: this header is included by translation units
// compiled with different -m flags, so it must not define code (an inline function compiled with
// AVX-512 in one file could be the copy the linker keeps for the scalar path).
#pragma once

#include <cstdint>

namespace fk {
namespace gemm_detail {

// One GEMM call, after the driver's argument handling.
struct Problem {
  float* C;           // (M, N), row stride ldc
  int64_t ldc;
  const float* A;     // (M, K) row stride lda, or (K, M) when ta
  int64_t lda;
  const float* B;     // (K, N) row stride ldb, or (N, K) when tb
  int64_t ldb;
  int64_t M, N, K;
  bool ta, tb;
  float alpha, beta;  // beta == 0: C is never read
  const float* bias;  // (N) [opt], added after alpha/beta
  int64_t act;        // fused activation code (kernels.h), applied last
  float act_alpha;
};

// A block of C: rows [i0, i1), columns [j0, j1), computed over all of K.
struct Block {
  int64_t i0, i1, j0, j1;
};

// B packed ahead of the block, all of K, for columns [col0, col0 + width) ([opt]): for the
// reduction block starting at k0 (of kc <= KC), the panel starting at column j is at
// b + k0 * cols + (j - col0) * kc, (kc, its stride); cols >= width rounded up to NR.
struct PackedB {
  const float* b;  // aggregate, no initializers: PackedB{} is all zero and defines no code
  int64_t cols, col0;
};

// The kernels of one instruction set.
struct IsaOps {
  int mr, nr;      // microkernel tile (rows, columns)
  int64_t kc;      // reduction block: an MR x KC panel of A stays in L1
  int64_t nc;      // column block: a KC x NC packed panel of B stays in L2
  // Computes one block. B is read from `packed` when given; otherwise pack_a / pack_b copy an
  // operand into panel order first, or the microkernel reads it in place (B only when !tb).
  // work_b: KC x round_up(min(NC, block columns), NR) floats, 64-byte aligned, when pack_b.
  void (*block)(const Problem& p, const Block& b, bool pack_a, bool pack_b, float* work_b,
                const PackedB& packed);
  // Packs the B panels of columns j0..j0+nc of the reduction block k0..k0+kc into dst
  // (kc x the panel strides; the same panels the block loop walks for a block ending at j0+nc).
  void (*pack_b)(float* dst, const Problem& p, int64_t k0, int64_t kc, int64_t j0, int64_t nc);
  // y (n) = act(y), in place (the fused-epilogue codes only).
  void (*activation)(float* y, int64_t n, int64_t act, float alpha);
  // dy (n) *= act'(from y (n)), in place.
  void (*activation_grad)(float* dy, const float* y, int64_t n, int64_t act, float alpha);
  // Dense backward's elementwise pass over rows [r0, r1) of (M, N) matrices:
  // dz = dy * act'(y) (dz [opt]) and colsum (N) [opt] = the sum of dz over those rows
  // (float64, overwritten).
  void (*dz_colsum)(float* dz, double* colsum, const float* dy, const float* y, int64_t r0,
                    int64_t r1, int64_t N, int64_t act, float alpha);
  // Columns [j0, j1) of a one-row product (M == 1, !tb), the whole epilogue included, with the
  // same arithmetic per element as `block` (gemm_row.h); null: one-row products use `block`.
  void (*row)(const Problem& p, int64_t j0, int64_t j1);
  int64_t row_group;  // columns per group of `row` (its natural split between threads)
  // Every block packs its A panels, whatever it is told (bf16: A is rounded to bf16 pairs in
  // the packing): the cost model counts that packing in every block of a column.
  bool always_packs_a = false;
};

const IsaOps& ops_scalar();  // each defined in its own kernel file
const IsaOps& ops_avx2();
const IsaOps& ops_avx512();
const IsaOps& ops_avx512_bf16();  // bf16 operands, fp32 accumulation (runtime.h set_gemm_bf16)
const IsaOps& current_ops();  // the one fk::cpu_isa() and the bf16 flag select (gemm.cpp)
void check_fused(int64_t act);
// Benchmarks: `iters` rounds of 24 independent fp32 FMAs or VDPBF16PS on registers; returns the
// flops done and stores a sum of the results in *sink (peak_avx512_bf16.cpp).
double peak_loop_avx512(bool bf16, int64_t iters, float* sink);  // throws fk::Error unless act is a fused-epilogue code

}  // namespace gemm_detail
}  // namespace fk
