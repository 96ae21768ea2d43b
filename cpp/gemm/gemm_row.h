// gemm_row.h: one row of C (M == 1, B not transposed): the GEMV loop, shared by the per-ISA
// kernel files through a vector-traits class. Anonymous namespace: each file gets its own copy
// compiled with its own -m flags.
//
// C (1, N) [j0, j1) = epilogue(alpha * a (1, K) @ B (K, N) + beta * C), a[k] = A[k * a_ks].
// Why not the blocked GEMM: a 1-row tile has only as many accumulators as vectors in its panel
// (1..3), it packs A and re-reads the C tile per reduction block for a single row. Here the
// columns go by groups of up to 8 vectors (8 independent FMA chains, one contiguous run of
// each row of B per k), which is what a memory-bound product wants.
//
// The arithmetic is the blocked GEMM's, element for element: each C element sums its k terms
// in order with one FMA each, in reduction blocks of T::kKC that start from zero; a block's sum
// is stored as alpha * acc (+ beta * C on the first block, + C after it) (+ bias on the last)
// exactly as the microkernel stores its tile, then the activation. So a row of a batch gets
// the same bits whether it is computed alone or with others.
//
// V provides: kW (floats per vector), kPlainStore (whether the microkernel stores a plain
// product as it is, rather than `alpha * acc + 0`, which turns -0 into +0), reg, zero(),
// load(p), load_masked(p, n), store(p, x), store_masked(p, x, n), set1(f), fma(a, b, c), mul,
// add, and inreg(x, code, slope) (the microkernel's in-register relu / leaky relu, with the
// same instructions).
#pragma once

#include <cstdint>

#include "gemm_block.h"

namespace fk {
namespace gemm_detail {
namespace {

template <class V, int NV>
void row_group(const Problem& p, int64_t a_ks, int64_t j, int64_t n, int64_t kc_max) {
  using R = typename V::reg;
  const int inreg = p.act == kRelu ? 1 : p.act == kLeakyRelu ? 2 : 0;
  const int64_t tail = n - V::kW * (NV - 1);  // 1..kW columns in the last vector
  float* c = p.C + j;
  for (int64_t k0 = 0; k0 < p.K; k0 += kc_max) {
    const int64_t kc = p.K - k0 < kc_max ? p.K - k0 : kc_max;
    const bool first = k0 == 0, last = k0 + kc == p.K;
    R acc[NV];
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) acc[v] = V::zero();
    const float* a = p.A + k0 * a_ks;
    const float* b = p.B + k0 * p.ldb + j;
    for (int64_t k = 0; k < kc; ++k) {
      const R av = V::set1(a[k * a_ks]);
#pragma GCC unroll 8
      for (int v = 0; v < NV - 1; ++v) acc[v] = V::fma(av, V::load(b + V::kW * v), acc[v]);
      acc[NV - 1] = V::fma(av, V::load_masked(b + V::kW * (NV - 1), tail), acc[NV - 1]);
      b += p.ldb;
    }
    const float beta = first ? p.beta : 1.f;
    const bool bias = last && p.bias;
    const int in = last ? inreg : 0;
    if (V::kPlainStore && p.alpha == 1.f && beta == 0.f && !bias && in == 0) {
#pragma GCC unroll 8
      for (int v = 0; v < NV - 1; ++v) V::store(c + V::kW * v, acc[v]);
      V::store_masked(c + V::kW * (NV - 1), acc[NV - 1], tail);
      continue;
    }
    const R alpha = V::set1(p.alpha), vbeta = V::set1(beta), slope = V::set1(p.act_alpha);
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) {
      const int64_t w = v == NV - 1 ? tail : V::kW;
      R x = V::mul(acc[v], alpha);
      if (beta != 0.f) x = V::fma(vbeta, V::load_masked(c + V::kW * v, w), x);
      x = V::add(x, bias ? V::load_masked(p.bias + j + V::kW * v, w) : V::zero());
      x = V::inreg(x, in, slope);
      V::store_masked(c + V::kW * v, x, w);
    }
  }
  if (p.act != kLinear && inreg == 0) activation_loop(c, n, p.act, p.act_alpha);
}

// Columns [j0, j1) of the single row of C, by groups of at most 8 vectors.
template <class V>
void gemm_row(const Problem& p, int64_t j0, int64_t j1, int64_t kc_max) {
  const int64_t a_ks = p.ta ? p.lda : 1;
  for (int64_t j = j0; j < j1;) {
    const int64_t n = j1 - j < 8 * V::kW ? j1 - j : 8 * V::kW;
    switch ((n + V::kW - 1) / V::kW) {
      case 1: row_group<V, 1>(p, a_ks, j, n, kc_max); break;
      case 2: row_group<V, 2>(p, a_ks, j, n, kc_max); break;
      case 3: row_group<V, 3>(p, a_ks, j, n, kc_max); break;
      case 4: row_group<V, 4>(p, a_ks, j, n, kc_max); break;
      case 5: row_group<V, 5>(p, a_ks, j, n, kc_max); break;
      case 6: row_group<V, 6>(p, a_ks, j, n, kc_max); break;
      case 7: row_group<V, 7>(p, a_ks, j, n, kc_max); break;
      default: row_group<V, 8>(p, a_ks, j, n, kc_max); break;
    }
    j += n;
  }
}

}  // namespace
}  // namespace gemm_detail
}  // namespace fk
