// gemm_kernel_scalar.cpp: the portable GEMM kernels (what FKERAS_CPU_ISA=scalar runs, and the
// fallback on CPUs without AVX2): a 4x8 microkernel in plain C++ over a fixed-size accumulator
// array (the compiler keeps it in 8 SSE2 registers), a generic loop for edge tiles, and
// plain-loop packing. Same panel layouts and loops as the AVX files (gemm_block.h).
#include "gemm_block.h"

namespace fk {
namespace gemm_detail {
namespace {

struct Portable {
  static constexpr int kMR = 4, kNR = 8;
  static constexpr int64_t kKC = 256, kNC = 1024;

  // dst (kc, 4): dst[k * 4 + r] = op(A)(i + r, k0 + k), r < mr.
  static PanelShape panel(int64_t rem) {
    const int w = rem > kNR ? kNR : static_cast<int>(rem);
    return {w, kNR};
  }
  static void pack_a(float* dst, const Problem& p, int64_t i, int mr, int64_t k0, int64_t kc) {
    for (int r = 0; r < mr; ++r) {
      for (int64_t k = 0; k < kc; ++k) {
        dst[k * kMR + r] = p.ta ? p.A[(k0 + k) * p.lda + i + r] : p.A[(i + r) * p.lda + k0 + k];
      }
    }
  }

  // dst: panels of (kc, 8), panel q holding columns j0 + 8 q ..; only the first nc - 8 q
  // columns of the last panel are written.
  static void pack_b(float* dst, const Problem& p, int64_t k0, int64_t kc, int64_t j0,
                     int64_t nc) {
    for (int64_t jp = 0; jp < nc; jp += kNR, dst += kNR * kc) {
      const int64_t w = min64(kNR, nc - jp);
      for (int64_t k = 0; k < kc; ++k) {
        for (int64_t j = 0; j < w; ++j) {
          const int64_t col = j0 + jp + j, row = k0 + k;
          dst[k * kNR + j] = p.tb ? p.B[col * p.ldb + row] : p.B[row * p.ldb + col];
        }
      }
    }
  }

  // GCC's loop vectorizer would vectorize across k here (gathers and spills, 3x slower); the
  // unrolled body is left to the straight-line vectorizer. Other compilers ignore this.
#if defined(__GNUC__) && !defined(__clang__)
  __attribute__((optimize("no-tree-loop-vectorize")))
#endif
  static void tile(int mr, int nr, int64_t kc, const float* a, int64_t a_rs, int64_t a_ks,
                   bool /*packed_a*/, const float* b, int64_t b_ks, bool /*packed_b*/, float* c,
                   int64_t ldc,
                   const TileStore& st) {
    float acc[kMR][kNR] = {};
    if (mr == kMR && nr == kNR) {
      for (int64_t k = 0; k < kc; ++k) {
        const float* bk = b + k * b_ks;
        float bv[kNR];
#pragma GCC unroll 8
        for (int j = 0; j < kNR; ++j) bv[j] = bk[j];
#pragma GCC unroll 4
        for (int r = 0; r < kMR; ++r) {
          const float av = a[r * a_rs + k * a_ks];
#pragma GCC unroll 8
          for (int j = 0; j < kNR; ++j) acc[r][j] += av * bv[j];
        }
      }
    } else {
      for (int64_t k = 0; k < kc; ++k) {
        const float* bk = b + k * b_ks;
        for (int r = 0; r < mr; ++r) {
          const float av = a[r * a_rs + k * a_ks];
          for (int j = 0; j < nr; ++j) acc[r][j] += av * bk[j];
        }
      }
    }
    for (int r = 0; r < mr; ++r) {
      float* cr = c + r * ldc;
      for (int j = 0; j < nr; ++j) {
        float x = st.alpha * acc[r][j];
        if (st.beta != 0.f) x += st.beta * cr[j];
        if (st.bias) x += st.bias[j];
        if (st.inreg == 1) x = x < 0.f ? 0.f : x;
        if (st.inreg == 2) x = x > 0.f ? x : st.slope * x;
        cr[j] = x;
      }
    }
  }
};

void block(const Problem& p, const Block& b, bool pack_a, bool pack_b, float* work_b,
           const PackedB& pre) {
  compute_block<Portable>(p, b, pack_a, pack_b, work_b, pre);
}

// One row of C: the blocked loop itself (the portable tile has no register limit to work
// around).
void row(const Problem& p, int64_t j0, int64_t j1) {
  compute_block<Portable>(p, Block{0, 1, j0, j1}, false, false, nullptr, PackedB{});
}

constexpr IsaOps kOps{Portable::kMR,
                      Portable::kNR,
                      Portable::kKC,
                      Portable::kNC,
                      &block,
                      &Portable::pack_b,
                      &activation_loop,
                      &activation_grad_loop,
                      &dz_colsum_loop,
                      &row,
                      Portable::kNR};

}  // namespace

const IsaOps& ops_scalar() { return kOps; }

}  // namespace gemm_detail
}  // namespace fk
