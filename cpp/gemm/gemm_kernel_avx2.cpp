// gemm_kernel_avx2.cpp: the AVX2+FMA GEMM kernels: f32 6x16 microkernel (and every smaller edge
// tile), the packing routines, and the elementwise helpers, compiled with -mavx2 -mfma.
//
// Microkernel 6x16: 12 ymm accumulators (6 rows x 2 vectors of 8 columns), 2 for the B row, 1
// for the broadcast A element: 15 of 16 registers; 12 FMAs per 2 loads + 6 broadcasts per k.
// Edge tiles are the same template with fewer rows (1..6) or vectors (1..2), the last vector
// masked (vmaskmov), so nothing is read past the edge of an unpacked operand.
//
// Packing (loops in gemm_block.h): op(A) panels (kc, 6), op(B) panels (kc, 16), k-major;
// transposed operands through in-register 8x8 transposes. KC = 256, NC = 1024.
// GCC 12's own intrinsics headers trip -Wmaybe-uninitialized (GCC bug 105593: their
// deliberately undefined vectors); silence it for those headers only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

#include "gemm_block.h"
#include "gemm_row.h"

namespace fk {
namespace gemm_detail {
namespace {

struct Avx2 {
  static constexpr int kMR = 6, kNR = 16;
  static constexpr int64_t kKC = 256, kNC = 1024;

  static PanelShape panel(int64_t rem) {
    const int w = rem > kNR ? kNR : static_cast<int>(rem);
    return {w, kNR};
  }
  static void pack_a(float* dst, const Problem& p, int64_t i, int mr, int64_t k0, int64_t kc);
  static void pack_b(float* dst, const Problem& p, int64_t k0, int64_t kc, int64_t j0,
                     int64_t nc);
  static void tile(int mr, int nr, int64_t kc, const float* a, int64_t a_rs, int64_t a_ks,
                   bool packed_a, const float* b, int64_t b_ks, bool packed_b, float* c,
                   int64_t ldc, const TileStore& st);
};

// A vmaskmov mask with the first n (0..8) lanes set.
inline __m256i lanes8(int64_t n) {
  const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n < 8 ? n : 8)), idx);
}

// ---- microkernel ------------------------------------------------------------------------------
// c (MR, NV * 8; row stride ldc) = store(a (MR, kc) @ b (kc, NV * 8)); the last vector of every
// row uses `mask`. kPacked: a is a packed panel, element (r, k) at a[k * 6 + r]. kMaskB: b is
// read in place and its last vector is partial, so it is loaded masked (vmaskmov costs more
// than a plain load, and packed panels have room past the edge, in lanes never stored).
template <int MR, int NV, bool kPacked, bool kMaskB>
void micro(int64_t kc, const float* a, int64_t a_rs, int64_t a_ks, const float* b, int64_t b_ks,
           float* c, int64_t ldc, __m256i mask, const TileStore& st) {
  __m256 acc[MR][NV];
#pragma GCC unroll 6
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) acc[r][v] = _mm256_setzero_ps();
  const float* ar[MR];
#pragma GCC unroll 6
  for (int r = 0; r < MR; ++r) ar[r] = a + r * a_rs;
  int64_t ka = 0;
#pragma GCC unroll 2
  for (int64_t k = 0; k < kc; ++k) {
    __m256 bv[NV];
    if (NV == 2) bv[0] = _mm256_loadu_ps(b);
    bv[NV - 1] = kMaskB ? _mm256_maskload_ps(b + 8 * (NV - 1), mask)
                        : _mm256_loadu_ps(b + 8 * (NV - 1));
#pragma GCC unroll 6
    for (int r = 0; r < MR; ++r) {
      const __m256 av = _mm256_broadcast_ss(kPacked ? a + k * 6 + r : ar[r] + ka);
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v) acc[r][v] = _mm256_fmadd_ps(av, bv[v], acc[r][v]);
    }
    b += b_ks;
    ka += a_ks;
  }
  const __m256 alpha = _mm256_set1_ps(st.alpha), beta = _mm256_set1_ps(st.beta);
  const __m256 zero = _mm256_setzero_ps(), slope = _mm256_set1_ps(st.slope);
  const __m256i full = _mm256_set1_epi32(-1);
  __m256 bias[NV];
#pragma GCC unroll 2
  for (int v = 0; v < NV; ++v)
    bias[v] = st.bias ? _mm256_maskload_ps(st.bias + 8 * v, v == NV - 1 ? mask : full) : zero;
#pragma GCC unroll 6
  for (int r = 0; r < MR; ++r) {
    float* cr = c + r * ldc;
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) {
      const __m256i m = v == NV - 1 ? mask : full;
      __m256 x = _mm256_mul_ps(acc[r][v], alpha);
      if (st.beta != 0.f) x = _mm256_fmadd_ps(beta, _mm256_maskload_ps(cr + 8 * v, m), x);
      x = _mm256_add_ps(x, bias[v]);
      if (st.inreg == 1) {
        x = _mm256_max_ps(zero, x);  // max(0, NaN) is NaN: NaN propagates
      } else if (st.inreg == 2) {
        x = _mm256_blendv_ps(x, _mm256_mul_ps(x, slope), _mm256_cmp_ps(x, zero, _CMP_LE_OQ));
      }
      _mm256_maskstore_ps(cr + 8 * v, m, x);
    }
  }
}

using MicroFn = void (*)(int64_t, const float*, int64_t, int64_t, const float*, int64_t, float*,
                         int64_t, __m256i, const TileStore&);

// Built at compile time (constexpr): no static initializer runs AVX2 code at load time.
struct MicroTable {
  MicroFn fn[2][2][6][2] = {};  // [packed A][masked B loads][rows - 1][vectors - 1]
  template <bool kPackedA, bool kMaskB, int MR, int NV>
  constexpr void set() {
    fn[kPackedA][kMaskB][MR - 1][NV - 1] = &micro<MR, NV, kPackedA, kMaskB>;
    if constexpr (NV < 2) set<kPackedA, kMaskB, MR, NV + 1>();
    else if constexpr (MR < 6) set<kPackedA, kMaskB, MR + 1, 1>();
  }
  constexpr MicroTable() {
    set<false, false, 1, 1>();
    set<false, true, 1, 1>();
    set<true, false, 1, 1>();
    set<true, true, 1, 1>();
  }
};

constexpr MicroTable kTable;

void Avx2::tile(int mr, int nr, int64_t kc, const float* a, int64_t a_rs, int64_t a_ks,
                bool packed_a, const float* b, int64_t b_ks, bool packed_b, float* c,
                int64_t ldc, const TileStore& st) {
  const int nv = (nr + 7) / 8;
  const __m256i mask = lanes8(nr - 8 * (nv - 1));
  const bool mask_b = !packed_b && nr % 8 != 0;
  const MicroFn fn = kTable.fn[packed_a][mask_b][mr - 1][nv - 1];
  fn(kc, a, a_rs, a_ks, b, b_ks, c, ldc, mask, st);
}

// ---- packing ----------------------------------------------------------------------------------
// In-register transpose of 8 rows of 8 floats: r[c] becomes column c.
inline void transpose8(__m256 r[8]) {
  __m256 t[8];
#pragma GCC unroll 4
  for (int i = 0; i < 4; ++i) {
    t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
#pragma GCC unroll 2
  for (int i = 0; i < 2; ++i) {
    const __m256d t0 = _mm256_castps_pd(t[4 * i]), t1 = _mm256_castps_pd(t[4 * i + 1]);
    const __m256d t2 = _mm256_castps_pd(t[4 * i + 2]), t3 = _mm256_castps_pd(t[4 * i + 3]);
    r[4 * i] = _mm256_castpd_ps(_mm256_unpacklo_pd(t0, t2));
    r[4 * i + 1] = _mm256_castpd_ps(_mm256_unpackhi_pd(t0, t2));
    r[4 * i + 2] = _mm256_castpd_ps(_mm256_unpacklo_pd(t1, t3));
    r[4 * i + 3] = _mm256_castpd_ps(_mm256_unpackhi_pd(t1, t3));
  }
  // r[4g + c], lane L: rows 4g..4g+3 at column 4L + c.
#pragma GCC unroll 4
  for (int c = 0; c < 4; ++c) {
    t[c] = _mm256_permute2f128_ps(r[c], r[4 + c], 0x20);
    t[4 + c] = _mm256_permute2f128_ps(r[c], r[4 + c], 0x31);
  }
#pragma GCC unroll 8
  for (int c = 0; c < 8; ++c) r[c] = t[c];
}

// dst (kc, 6): dst[k * 6 + r] = op(A)(i + r, k0 + k) for r < mr; nothing past the panel.
void Avx2::pack_a(float* dst, const Problem& p, int64_t i, int mr, int64_t k0, int64_t kc) {
  if (p.ta) {  // A (K, M): the panel's rows are contiguous in each row of A
    const float* src = p.A + k0 * p.lda + i;
    const __m256i m = lanes8(mr);
    const __m256i six = lanes8(6);
    for (int64_t k = 0; k < kc; ++k)
      _mm256_maskstore_ps(dst + 6 * k, six, _mm256_maskload_ps(src + k * p.lda, m));
    return;
  }
  const float* src = p.A + i * p.lda + k0;
  int64_t k = 0;
  for (; k + 8 <= kc; k += 8) {
    __m256 r[8];
#pragma GCC unroll 8
    for (int q = 0; q < 8; ++q)
      r[q] = q < mr ? _mm256_loadu_ps(src + q * p.lda + k) : _mm256_setzero_ps();
    transpose8(r);
    // Each 8-wide store spills 2 lanes into the next k, which the next store overwrites; the
    // last one is masked, so nothing is written past the panel (panels may be adjacent).
#pragma GCC unroll 7
    for (int c = 0; c < 7; ++c) _mm256_storeu_ps(dst + 6 * (k + c), r[c]);
    _mm256_maskstore_ps(dst + 6 * (k + 7), lanes8(6), r[7]);
  }
  for (; k < kc; ++k)
    for (int q = 0; q < mr; ++q) dst[6 * k + q] = src[q * p.lda + k];
}

// dst: panels of (kc, 16), panel q holding columns j0 + 16 q ..; columns past nc are zero
// (non-transposed B) or not written (transposed B).
void Avx2::pack_b(float* dst, const Problem& p, int64_t k0, int64_t kc, int64_t j0,
                  int64_t nc) {
  for (int64_t jp = 0; jp < nc; jp += kNR, dst += kNR * kc) {
    const int64_t w = min64(kNR, nc - jp);
    if (!p.tb) {  // B (K, N): rows of the panel are contiguous
      const float* src = p.B + k0 * p.ldb + j0 + jp;
      const __m256i m0 = lanes8(w), m1 = lanes8(w > 8 ? w - 8 : 0);
      for (int64_t k = 0; k < kc; ++k) {
        const float* s = src + k * p.ldb;
        _mm256_storeu_ps(dst + k * kNR, _mm256_maskload_ps(s, m0));
        _mm256_storeu_ps(dst + k * kNR + 8, _mm256_maskload_ps(s + 8, m1));
      }
      continue;
    }
    // B (N, K): each panel column is a row of B; transpose 8 x 8 blocks.
    const float* src = p.B + (j0 + jp) * p.ldb + k0;
    for (int64_t k = 0; k < kc; k += 8) {
      const int64_t kw = min64(8, kc - k);
      const __m256i km = lanes8(kw);
      for (int g = 0; 8 * g < w; ++g) {
        __m256 r[8];
#pragma GCC unroll 8
        for (int q = 0; q < 8; ++q) {
          const int64_t col = 8 * g + q;
          r[q] = col < w ? _mm256_maskload_ps(src + col * p.ldb + k, km) : _mm256_setzero_ps();
        }
        transpose8(r);
        for (int t = 0; t < kw; ++t) _mm256_storeu_ps(dst + (k + t) * kNR + 8 * g, r[t]);
      }
    }
  }
}

void block(const Problem& p, const Block& b, bool pack_a, bool pack_b, float* work_b,
           const PackedB& pre) {
  compute_block<Avx2>(p, b, pack_a, pack_b, work_b, pre);
}

// ---- one row of C (gemm_row.h) ----------------------------------------------------------------
struct Vec256 {
  static constexpr int kW = 8;
  static constexpr bool kPlainStore = false;
  using reg = __m256;
  static reg zero() { return _mm256_setzero_ps(); }
  static reg load(const float* p) { return _mm256_loadu_ps(p); }
  static reg load_masked(const float* p, int64_t n) { return _mm256_maskload_ps(p, lanes8(n)); }
  static void store(float* p, reg x) { _mm256_storeu_ps(p, x); }
  static void store_masked(float* p, reg x, int64_t n) { _mm256_maskstore_ps(p, lanes8(n), x); }
  static reg set1(float f) { return _mm256_set1_ps(f); }
  static reg fma(reg a, reg b, reg c) { return _mm256_fmadd_ps(a, b, c); }
  static reg mul(reg a, reg b) { return _mm256_mul_ps(a, b); }
  static reg add(reg a, reg b) { return _mm256_add_ps(a, b); }
  static reg inreg(reg x, int code, reg slope) {  // the microkernel's instructions
    const reg z = _mm256_setzero_ps();
    if (code == 1) return _mm256_max_ps(z, x);
    if (code == 2)
      return _mm256_blendv_ps(x, _mm256_mul_ps(x, slope), _mm256_cmp_ps(x, z, _CMP_LE_OQ));
    return x;
  }
};

void row(const Problem& p, int64_t j0, int64_t j1) { gemm_row<Vec256>(p, j0, j1, Avx2::kKC); }

constexpr IsaOps kOps{Avx2::kMR,
                      Avx2::kNR,
                      Avx2::kKC,
                      Avx2::kNC,
                      &block,
                      &Avx2::pack_b,
                      &activation_loop,
                      &activation_grad_loop,
                      &dz_colsum_loop,
                      &row,
                      8 * Vec256::kW};

}  // namespace

const IsaOps& ops_avx2() { return kOps; }

}  // namespace gemm_detail
}  // namespace fk
