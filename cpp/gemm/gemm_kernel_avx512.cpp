// gemm_kernel_avx512.cpp: the AVX-512 GEMM kernels: f32 8x48 microkernel (and every smaller
// edge tile), the packing routines, and the elementwise helpers, compiled with -mavx512f etc.
//
// Microkernel 8x48: 24 zmm accumulators (8 rows x 3 vectors of 16 columns), 3 zmm for the B
// row and 1 for the broadcast A element: 28 of 32 registers. Per k it issues 24 FMAs against
// 3 vector loads and 8 broadcasts, so the two FMA ports, not the two load ports, set the pace.
// Edge tiles are the same template with fewer rows (MR 1..8) or vectors (1..3), the last vector
// masked, so no padding work is wasted on rows and at most 15 columns on the right edge.
//
// Packing (see gemm_block.h for the loops): op(A) panels are (kc, 8), op(B) panels (kc, 48),
// both k-major so the microkernel streams them; transposed operands go through in-register
// 8x16 / 16x16 transposes. Blocking: KC = 256 (A panel 8 KB in L1), NC = 1008 columns
// (a B block of 1 MB in the 2 MB L2 of the target Xeons).
// GCC 12's own intrinsics headers trip -Wmaybe-uninitialized (GCC bug 105593: their
// deliberately undefined vectors); silence it for those headers only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

#include "gemm_block.h"
#include "gemm_transpose_avx512.h"
#include "gemm_row.h"

namespace fk {
namespace gemm_detail {
namespace {

struct Avx512 {
  static constexpr int kMR = 8, kNR = 48;
  static constexpr int64_t kKC = 256, kNC = 1008;

  // A right edge of 48 + 1..16 columns becomes two panels of 32 and 17..32 (two 2-vector tiles)
  // rather than 48 + a 1-vector tile, whose 8 accumulators cannot keep both FMA ports busy.
  static PanelShape panel(int64_t rem) {
    const int w = rem > 64 ? 48 : rem > 48 ? 32 : static_cast<int>(rem);
    return {w, w > 32 ? 48 : w > 16 ? 32 : 16};
  }
  static void pack_a(float* dst, const Problem& p, int64_t i, int mr, int64_t k0, int64_t kc);
  static void pack_b(float* dst, const Problem& p, int64_t k0, int64_t kc, int64_t j0,
                     int64_t nc);
  static void tile(int mr, int nr, int64_t kc, const float* a, int64_t a_rs, int64_t a_ks,
                   bool packed_a, const float* b, int64_t b_ks, bool packed_b, float* c,
                   int64_t ldc, const TileStore& st);
};

inline __mmask16 lanes(int64_t n) {
  return n >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << n) - 1u);
}

// ---- microkernel ------------------------------------------------------------------------------
// c (MR, NV * 16; row stride ldc) = store(a (MR, kc) @ b (kc, NV * 16)); the last vector of
// every row uses `mask`. kPacked: a is a packed panel, element (r, k) at a[k * 8 + r].
template <int MR, int NV, bool kPacked>
void micro(int64_t kc, const float* a, int64_t a_rs, int64_t a_ks, const float* b, int64_t b_ks,
           float* c, int64_t ldc, __mmask16 mask, const TileStore& st) {
  __m512 acc[MR][NV];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_setzero_ps();
  const float* ar[MR];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
    ar[r] = a + r * a_rs;
    // The C tile is read (beta) or written at the end: start fetching its lines now.
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v)
      _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc + 16 * v), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc + 16 * NV - 1), _MM_HINT_T0);
  }
  int64_t ka = 0;
#pragma GCC unroll 2
  for (int64_t k = 0; k < kc; ++k) {
    __m512 bv[NV];
#pragma GCC unroll 3
    for (int v = 0; v < NV - 1; ++v) bv[v] = _mm512_loadu_ps(b + 16 * v);
    bv[NV - 1] = _mm512_maskz_loadu_ps(mask, b + 16 * (NV - 1));
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const __m512 av = _mm512_set1_ps(kPacked ? a[k * 8 + r] : ar[r][ka]);
#pragma GCC unroll 3
      for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_fmadd_ps(av, bv[v], acc[r][v]);
    }
    b += b_ks;
    ka += a_ks;
  }
  if (st.alpha == 1.f && st.beta == 0.f && !st.bias && st.inreg == 0) {  // the plain product
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 3
      for (int v = 0; v < NV; ++v)
        _mm512_mask_storeu_ps(c + r * ldc + 16 * v, v == NV - 1 ? mask : lanes(16), acc[r][v]);
    return;
  }
  const __m512 alpha = _mm512_set1_ps(st.alpha), beta = _mm512_set1_ps(st.beta);
  const __m512 zero = _mm512_setzero_ps(), slope = _mm512_set1_ps(st.slope);
  __m512 bias[NV];
#pragma GCC unroll 3
  for (int v = 0; v < NV; ++v)
    bias[v] = st.bias ? _mm512_maskz_loadu_ps(v == NV - 1 ? mask : lanes(16), st.bias + 16 * v)
                      : zero;
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
    float* cr = c + r * ldc;
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v) {
      const __mmask16 m = v == NV - 1 ? mask : lanes(16);
      __m512 x = _mm512_mul_ps(acc[r][v], alpha);
      if (st.beta != 0.f) x = _mm512_fmadd_ps(beta, _mm512_maskz_loadu_ps(m, cr + 16 * v), x);
      x = _mm512_add_ps(x, bias[v]);
      if (st.inreg == 1) {
        // Keep x unless x < 0 (unordered compare: a NaN is kept, so NaN propagates).
        x = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(x, zero, _CMP_NLT_UQ), x);
      } else if (st.inreg == 2) {
        x = _mm512_mask_mul_ps(x, _mm512_cmp_ps_mask(x, zero, _CMP_LE_OQ), x, slope);
      }
      _mm512_mask_storeu_ps(cr + 16 * v, m, x);
    }
  }
}

using MicroFn = void (*)(int64_t, const float*, int64_t, int64_t, const float*, int64_t, float*,
                         int64_t, __mmask16, const TileStore&);

// Built at compile time (constexpr): no static initializer runs AVX-512 code at load time.
template <bool kPacked>
struct MicroTable {
  MicroFn fn[8][3] = {};
  template <int MR, int NV>
  constexpr void set() {
    fn[MR - 1][NV - 1] = &micro<MR, NV, kPacked>;
    if constexpr (NV < 3) set<MR, NV + 1>();
    else if constexpr (MR < 8) set<MR + 1, 1>();
  }
  constexpr MicroTable() { set<1, 1>(); }
};

constexpr MicroTable<true> kPackedTable;
constexpr MicroTable<false> kDirectTable;

void Avx512::tile(int mr, int nr, int64_t kc, const float* a, int64_t a_rs, int64_t a_ks,
                  bool packed_a, const float* b, int64_t b_ks, bool /*packed_b*/, float* c,
                  int64_t ldc, const TileStore& st) {
  // B loads are always masked: free with AVX-512, and safe whether b is packed or not.
  const int nv = (nr + 15) / 16;
  const __mmask16 mask = lanes(nr - 16 * (nv - 1));
  const MicroFn fn = packed_a ? kPackedTable.fn[mr - 1][nv - 1] : kDirectTable.fn[mr - 1][nv - 1];
  fn(kc, a, a_rs, a_ks, b, b_ks, c, ldc, mask, st);
}

// ---- packing ----------------------------------------------------------------------------------
// dst (kc, 8): dst[k * 8 + r] = op(A)(i + r, k0 + k) for r < mr (rows mr..7 are left as they
// are: the microkernel for mr rows never reads them).
void Avx512::pack_a(float* dst, const Problem& p, int64_t i, int mr, int64_t k0, int64_t kc) {
  if (p.ta) {  // A (K, M): the 8 rows of the panel are contiguous in each row of A
    const float* src = p.A + k0 * p.lda + i;
    const __mmask16 m = lanes(mr);
    for (int64_t k = 0; k < kc; ++k)
      _mm256_mask_storeu_ps(dst + 8 * k, static_cast<__mmask8>(m),
                            _mm256_maskz_loadu_ps(static_cast<__mmask8>(m), src + k * p.lda));
    return;
  }
  // A (M, K): transpose 8 rows x 16 columns at a time; rows >= mr read as zero.
  const float* src = p.A + i * p.lda + k0;
  int64_t k = 0;
  for (; k + 16 <= kc; k += 16) {
    __m512 r[16];
#pragma GCC unroll 8
    for (int q = 0; q < 8; ++q)
      r[q] = q < mr ? _mm512_loadu_ps(src + q * p.lda + k) : _mm512_setzero_ps();
#pragma GCC unroll 8
    for (int q = 8; q < 16; ++q) r[q] = _mm512_setzero_ps();
    transpose16(r);  // r[c] lanes 0..7: rows 0..7 at column k + c
#pragma GCC unroll 8
    for (int c = 0; c < 16; c += 2)
      _mm512_storeu_ps(dst + 8 * (k + c), _mm512_shuffle_f32x4(r[c], r[c + 1], 0x44));
  }
  for (; k < kc; ++k)
    for (int q = 0; q < mr; ++q) dst[8 * k + q] = src[q * p.lda + k];
}

// dst: the panels of panel() for columns j0 .. j0 + nc, each (kc, stride); lanes past a
// panel's width are zero or not written (the microkernel's masked loads never read them).
void Avx512::pack_b(float* dst_base, const Problem& p, int64_t k0, int64_t kc, int64_t j0,
                    int64_t nc) {
  for (int64_t jp = 0; jp < nc;) {
    const PanelShape ps = panel(nc - jp);
    const int64_t w = ps.width, stride = ps.stride;
    float* dst = dst_base + jp * kc;
    const int64_t j = j0 + jp;  // the panel's first column in op(B)
    jp += w;
    if (!p.tb) {  // B (K, N): rows of the panel are contiguous
      const float* src = p.B + k0 * p.ldb + j;
      if (w == kNR) {
        for (int64_t k = 0; k < kc; ++k) {
          const float* s = src + k * p.ldb;
          float* d = dst + k * kNR;
          _mm512_storeu_ps(d, _mm512_loadu_ps(s));
          _mm512_storeu_ps(d + 16, _mm512_loadu_ps(s + 16));
          _mm512_storeu_ps(d + 32, _mm512_loadu_ps(s + 32));
        }
      } else {
        const __mmask16 m0 = lanes(w), m1 = lanes(w > 16 ? w - 16 : 0),
                        m2 = lanes(w > 32 ? w - 32 : 0);
        for (int64_t k = 0; k < kc; ++k) {
          const float* s = src + k * p.ldb;
          float* d = dst + k * stride;
          _mm512_storeu_ps(d, _mm512_maskz_loadu_ps(m0, s));
          if (stride > 16) _mm512_storeu_ps(d + 16, _mm512_maskz_loadu_ps(m1, s + 16));
          if (stride > 32) _mm512_storeu_ps(d + 32, _mm512_maskz_loadu_ps(m2, s + 32));
        }
      }
      continue;
    }
    // B (N, K): each panel column is a row of B; transpose 16 x 16 blocks.
    const float* src = p.B + j * p.ldb + k0;
    for (int64_t k = 0; k < kc; k += 16) {
      const int64_t kw = min64(16, kc - k);
      const __mmask16 km = lanes(kw);
      for (int g = 0; 16 * g < w; ++g) {
        __m512 r[16];
#pragma GCC unroll 16
        for (int q = 0; q < 16; ++q) {
          const int64_t col = 16 * g + q;
          r[q] = col < w ? _mm512_maskz_loadu_ps(km, src + col * p.ldb + k) : _mm512_setzero_ps();
        }
        transpose16(r);
        if (kw == 16) {
#pragma GCC unroll 16
          for (int t = 0; t < 16; ++t) _mm512_storeu_ps(dst + (k + t) * stride + 16 * g, r[t]);
        } else {
          for (int t = 0; t < kw; ++t) _mm512_storeu_ps(dst + (k + t) * stride + 16 * g, r[t]);
        }
      }
    }
  }
}

void block(const Problem& p, const Block& b, bool pack_a, bool pack_b, float* work_b,
           const PackedB& pre) {
  compute_block<Avx512>(p, b, pack_a, pack_b, work_b, pre);
}

// ---- one row of C (gemm_row.h) ----------------------------------------------------------------
struct Vec512 {
  static constexpr int kW = 16;
  static constexpr bool kPlainStore = true;
  using reg = __m512;
  static reg zero() { return _mm512_setzero_ps(); }
  static reg load(const float* p) { return _mm512_loadu_ps(p); }
  static reg load_masked(const float* p, int64_t n) { return _mm512_maskz_loadu_ps(lanes(n), p); }
  static void store(float* p, reg x) { _mm512_storeu_ps(p, x); }
  static void store_masked(float* p, reg x, int64_t n) { _mm512_mask_storeu_ps(p, lanes(n), x); }
  static reg set1(float f) { return _mm512_set1_ps(f); }
  static reg fma(reg a, reg b, reg c) { return _mm512_fmadd_ps(a, b, c); }
  static reg mul(reg a, reg b) { return _mm512_mul_ps(a, b); }
  static reg add(reg a, reg b) { return _mm512_add_ps(a, b); }
  static reg inreg(reg x, int code, reg slope) {  // the microkernel's instructions
    const reg z = _mm512_setzero_ps();
    if (code == 1) return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(x, z, _CMP_NLT_UQ), x);
    if (code == 2) return _mm512_mask_mul_ps(x, _mm512_cmp_ps_mask(x, z, _CMP_LE_OQ), x, slope);
    return x;
  }
};

void row(const Problem& p, int64_t j0, int64_t j1) { gemm_row<Vec512>(p, j0, j1, Avx512::kKC); }

constexpr IsaOps kOps{Avx512::kMR,
                      Avx512::kNR,
                      Avx512::kKC,
                      Avx512::kNC,
                      &block,
                      &Avx512::pack_b,
                      &activation_loop,
                      &activation_grad_loop,
                      &dz_colsum_loop,
                      &row,
                      8 * Vec512::kW};

}  // namespace

const IsaOps& ops_avx512() { return kOps; }

}  // namespace gemm_detail
}  // namespace fk
