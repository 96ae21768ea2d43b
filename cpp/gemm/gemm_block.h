// gemm_block.h: the loops around the microkernel for one block of C (the Goto/BLIS macro-kernel),
// shared by the per-ISA kernel files through a traits class. Anonymous namespace: each file
// gets its own copy compiled with its own -m flags.
//
// For a block rows [i0, i1) x columns [j0, j1) of C:
//   for each column block jc of at most NC columns:
//     for each reduction block k0 of at most KC:
//       pack op(B)[k0:k0+kc, jc:jc+nc] into KC x NR panels (work_b; L2 resident)
//       for each MR-row panel i:
//         pack op(A)[i:i+MR, k0:k0+kc] into a KC x MR panel (a_buf; L1 resident)
//         for each NR-column panel j: microkernel, C tile (MR x NR) += A panel @ B panel
// B packed ahead by the caller (PackedB, all of K) is read from there instead; an operand that
// is not worth packing is read in place.
// The first reduction block applies beta (beta == 0 never reads C); the last adds the bias and
// the activation on the tile right after the microkernel stored it, while it is in L1.
//
// Traits provide: kMR, kNR, kKC, kNC; panel(rem) -> (width, stride) of the next B panel when
// rem columns are left (at most NR wide; the stride is what pack_b leaves between its rows, and
// every panel but the last has stride == width, so the panel at column j starts at j * kc);
// pack_a(dst, p, i, mr, k0, kc) (dst[k * MR + r]); pack_b(dst, p, k0, kc, j, nc) (the panels);
// tile(mr, nr, kc, a, a_rs, a_ks, packed_a, b, b_ks, packed_b, c, ldc, store): C tile update
// where op(A) element (r, k) is a[r * a_rs + k * a_ks] and op(B) element (k, j) is
// b[k * b_ks + j]; an operand that is not packed must not be read past its edge.
#pragma once

#include <cstdint>

#include "fkeras/kernels.h"
#include "gemm_elementwise.h"
#include "gemm_internal.h"

namespace fk {
namespace gemm_detail {
namespace {

// What the microkernel does when it writes its tile back.
struct TileStore {
  float alpha, beta;   // C = alpha * acc + beta * C; beta == 0 does not read C
  const float* bias;   // (tile columns) [opt]: added after
  int inreg;           // 0: no activation here, 1: relu, 2: leaky relu (slope)
  float slope;
};

inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

struct PanelShape {
  int width, stride;
};

template <class T>
void compute_block(const Problem& p, const Block& blk, bool pack_a, bool pack_b, float* work_b,
                   const PackedB& pre) {
  constexpr int MR = T::kMR, NR = T::kNR;
  alignas(64) float a_buf[MR * T::kKC];  // op(A) panel, (kc, MR)
  const int inreg = p.act == kRelu ? 1 : p.act == kLeakyRelu ? 2 : 0;
  const bool act_pass = p.act != kLinear && inreg == 0;
  pack_b = pack_b || pre.b;  // packed ahead is packed too
  for (int64_t jc = blk.j0; jc < blk.j1;) {
    int64_t nc = min64(T::kNC, blk.j1 - jc);
    if (blk.j1 - jc - nc > 0 && blk.j1 - jc - nc <= 16) nc -= NR;  // keep the edge split whole
    for (int64_t k0 = 0; k0 < p.K; k0 += T::kKC) {
      const int64_t kc = min64(T::kKC, p.K - k0);
      const bool first = k0 == 0, last = k0 + kc == p.K;
      TileStore st{p.alpha, first ? p.beta : 1.f, nullptr, last ? inreg : 0, p.act_alpha};
      const float* b_panels = pre.b ? pre.b + k0 * pre.cols + (jc - pre.col0) * kc : work_b;
      if (pack_b && !pre.b) T::pack_b(work_b, p, k0, kc, jc, nc);
      for (int64_t i = blk.i0; i < blk.i1; i += MR) {
        const int mr = static_cast<int>(min64(MR, blk.i1 - i));
        const float* a;
        int64_t a_rs, a_ks;
        if (pack_a) {
          T::pack_a(a_buf, p, i, mr, k0, kc);
          a = a_buf, a_rs = 1, a_ks = MR;
        } else if (p.ta) {
          a = p.A + k0 * p.lda + i, a_rs = 1, a_ks = p.lda;
        } else {
          a = p.A + i * p.lda + k0, a_rs = p.lda, a_ks = 1;
        }
        for (int64_t j = 0; j < nc;) {
          const PanelShape ps = T::panel(nc - j);
          const int nr = ps.width;
          const float* b = pack_b ? b_panels + j * kc : p.B + k0 * p.ldb + jc + j;
          float* c = p.C + i * p.ldc + jc + j;
          st.bias = (last && p.bias) ? p.bias + jc + j : nullptr;
          T::tile(mr, nr, kc, a, a_rs, a_ks, pack_a, b, pack_b ? ps.stride : p.ldb, pack_b, c,
                  p.ldc, st);
          if (last && act_pass)
            for (int r = 0; r < mr; ++r) activation_loop(c + r * p.ldc, nr, p.act, p.act_alpha);
          j += nr;
        }
      }
    }
    jc += nc;
  }
}

}  // namespace
}  // namespace gemm_detail
}  // namespace fk
