// gemm_kernel_avx512_bf16.cpp: the bf16 GEMM kernels (runtime.h: set_gemm_bf16): both operands
// rounded to bf16, products accumulated in fp32 by VDPBF16PS. Compiled with the AVX-512 flags
// plus -mavx512bf16; the driver (gemm.cpp current_ops) enters it only when gemm_bf16_active().
//
// Rounding: VCVTNE2PS2BF16 (round to nearest even, NaN stays a quiet NaN; like VDPBF16PS it
// reads denormals as zero). VDPBF16PS: fp32 lane i += a.bf16[2i] * b.bf16[2i] +
// a.bf16[2i+1] * b.bf16[2i+1] (each bf16 product is exact in fp32), so both operands are packed
// as K-pairs: two consecutive k of one row (A) or one column (B) in a 32-bit lane, the first k
// in the low half. An odd K pads its last pair with bf16 zero in BOTH operands (0 * Inf would
// otherwise make a NaN).
//
// Layout (gemm_block.h's loops and offsets, which count floats, are kept as they are): a B
// panel of kc rows is ceil(kc / 2) pair-rows of `stride` 32-bit lanes, at the same place a
// float panel would start (j * kc floats); it uses the first half of that room. An A panel is
// (ceil(kc / 2), 8) pairs in the float A buffer. KC = 512 keeps the bytes of the fp32 blocking
// (A panel 8 KB in L1, a KC x NC B block of 1 MB in L2) with twice the k per byte.
//
// Every block packs both operands, whatever the driver's plan says (its in-place reads would
// need the rounding anyway, and one code path keeps the result independent of the plan); a
// block called without a B buffer (the driver's small products) packs into this thread's own.
// Microkernel 8x48 as the fp32 one: 24 zmm accumulators, 3 B vectors, 1 broadcast A pair.
// The elementwise helpers (activation, dz) are the fp32 avx512 file's: the epilogue is fp32.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

#include <cstdlib>
#include <new>

#include "gemm_block.h"
#include "gemm_transpose_avx512.h"

namespace fk {
namespace gemm_detail {
namespace {

struct Bf16 {
  static constexpr int kMR = 8, kNR = 48;
  static constexpr int64_t kKC = 512, kNC = 1008;

  // The fp32 avx512 file's panel split (a right edge of 48 + 1..16 becomes 32 + 17..32).
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

// The first n lanes (n clamped to 0..16).
inline __mmask16 lanes(int64_t n) {
  return n >= 16 ? static_cast<__mmask16>(0xFFFF)
                 : n <= 0 ? static_cast<__mmask16>(0) : static_cast<__mmask16>((1u << n) - 1u);
}

// 16 K-pairs: lane m holds (x[2m], x[2m+1]) of lo for m < 8, of hi (m - 8) for m >= 8; i.e. the
// pairs of 32 consecutive k.
inline __m512i pairs_along(__m512 lo, __m512 hi) {
  return reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(hi, lo));
}

// 16 K-pairs: lane j holds (r0[j], r1[j]): two consecutive k rows of 16 columns.
inline __m512i pairs_across(__m512 r0, __m512 r1) {
  // cvtne2ps: bf16 lanes 0..15 from r0, 16..31 from r1; then interleave them.
  const __m512i idx = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9,
                                       24, 8, 23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1,
                                       16, 0);
  return _mm512_permutexvar_epi16(idx, reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(r1, r0)));
}

// ---- microkernel ------------------------------------------------------------------------------
// c (MR, NV * 16; ldc) = store(A pairs (kp, 8) @ B pairs (kp, b_ks)); the last vector of every
// row is stored with `mask`. B lanes past the panel's width are zero (pack_b), never stored.
template <int MR, int NV>
void micro(int64_t kp, const uint32_t* a, const uint32_t* b, int64_t b_ks, float* c, int64_t ldc,
           __mmask16 mask, const TileStore& st) {
  __m512 acc[MR][NV];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_setzero_ps();
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v)
      _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc + 16 * v), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc + 16 * NV - 1), _MM_HINT_T0);
  }
#pragma GCC unroll 2
  for (int64_t k = 0; k < kp; ++k) {
    __m512bh bv[NV];
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v)
      bv[v] = reinterpret_cast<__m512bh>(_mm512_loadu_si512(b + 16 * v));
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const __m512bh av =
          reinterpret_cast<__m512bh>(_mm512_set1_epi32(static_cast<int>(a[k * 8 + r])));
#pragma GCC unroll 3
      for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_dpbf16_ps(acc[r][v], av, bv[v]);
    }
    b += b_ks;
  }
  // The fp32 epilogue, as the fp32 microkernel's.
  if (st.alpha == 1.f && st.beta == 0.f && !st.bias && st.inreg == 0) {
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
        x = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(x, zero, _CMP_NLT_UQ), x);  // NaN kept
      } else if (st.inreg == 2) {
        x = _mm512_mask_mul_ps(x, _mm512_cmp_ps_mask(x, zero, _CMP_LE_OQ), x, slope);
      }
      _mm512_mask_storeu_ps(cr + 16 * v, m, x);
    }
  }
}

using MicroFn = void (*)(int64_t, const uint32_t*, const uint32_t*, int64_t, float*, int64_t,
                         __mmask16, const TileStore&);

// Built at compile time: no static initializer runs AVX-512 code at load time.
struct MicroTable {
  MicroFn fn[8][3] = {};
  template <int MR, int NV>
  constexpr void set() {
    fn[MR - 1][NV - 1] = &micro<MR, NV>;
    if constexpr (NV < 3) set<MR, NV + 1>();
    else if constexpr (MR < 8) set<MR + 1, 1>();
  }
  constexpr MicroTable() { set<1, 1>(); }
};

constexpr MicroTable kTable;

void Bf16::tile(int mr, int nr, int64_t kc, const float* a, int64_t /*a_rs*/, int64_t /*a_ks*/,
                bool /*packed_a*/, const float* b, int64_t b_ks, bool /*packed_b*/, float* c,
                int64_t ldc, const TileStore& st) {
  const int nv = (nr + 15) / 16;
  kTable.fn[mr - 1][nv - 1]((kc + 1) / 2, reinterpret_cast<const uint32_t*>(a),
                            reinterpret_cast<const uint32_t*>(b), b_ks, c, ldc,
                            lanes(nr - 16 * (nv - 1)), st);
}

// ---- packing ----------------------------------------------------------------------------------
// dst pairs (ceil(kc / 2), 8): pair (kp, r) = op(A)(i + r, k0 + 2 kp .. + 1); rows >= mr zero.
void Bf16::pack_a(float* dst_f, const Problem& p, int64_t i, int mr, int64_t k0, int64_t kc) {
  uint32_t* dst = reinterpret_cast<uint32_t*>(dst_f);
  const int64_t kp_n = (kc + 1) / 2;
  if (p.ta) {  // A (K, M): the 8 rows are contiguous in each row of A; pair up rows k, k + 1
    const float* src = p.A + k0 * p.lda + i;
    const __mmask8 m = static_cast<__mmask8>(lanes(mr));
    const __m256i idx = _mm256_set_epi16(15, 7, 14, 6, 13, 5, 12, 4, 11, 3, 10, 2, 9, 1, 8, 0);
    for (int64_t kp = 0; kp < kp_n; ++kp) {
      const __m256 x0 = _mm256_maskz_loadu_ps(m, src + 2 * kp * p.lda);
      const __m256 x1 = 2 * kp + 1 < kc ? _mm256_maskz_loadu_ps(m, src + (2 * kp + 1) * p.lda)
                                        : _mm256_setzero_ps();
      const __m256i v = reinterpret_cast<__m256i>(_mm256_cvtne2ps_pbh(x1, x0));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + 8 * kp),
                          _mm256_permutexvar_epi16(idx, v));
    }
    return;
  }
  // A (M, K): 32 k of a row are 16 pairs; transpose 8 rows (plus 8 zero rows) of 16 pairs.
  const float* src = p.A + i * p.lda + k0;
  for (int64_t k = 0; k < kc; k += 32) {
    const int64_t kw = min64(32, kc - k);
    const __mmask16 m0 = lanes(kw), m1 = lanes(kw - 16);
    __m512 r[16];
#pragma GCC unroll 8
    for (int q = 0; q < 8; ++q) {
      const float* s = src + q * p.lda + k;
      r[q] = q < mr ? _mm512_castsi512_ps(pairs_along(_mm512_maskz_loadu_ps(m0, s),
                                                      _mm512_maskz_loadu_ps(m1, s + 16)))
                    : _mm512_setzero_ps();
    }
#pragma GCC unroll 8
    for (int q = 8; q < 16; ++q) r[q] = _mm512_setzero_ps();
    transpose16(r);  // r[t] lanes 0..7: pair k / 2 + t of rows 0..7
    const int64_t np = (kw + 1) / 2;
    for (int64_t t = 0; t < np; ++t)
      _mm256_storeu_ps(reinterpret_cast<float*>(dst + 8 * (k / 2 + t)),
                       _mm512_castps512_ps256(r[t]));
  }
}

// dst: the panels of panel() for columns j0 .. j0 + nc, panel jp at dst + jp * kc (floats), each
// (ceil(kc / 2), stride) pairs; lanes past the panel's width are zero.
void Bf16::pack_b(float* dst_base, const Problem& p, int64_t k0, int64_t kc, int64_t j0,
                  int64_t nc) {
  const int64_t kp_n = (kc + 1) / 2;
  for (int64_t jp = 0; jp < nc;) {
    const PanelShape ps = panel(nc - jp);
    const int64_t w = ps.width, stride = ps.stride;
    uint32_t* dst = reinterpret_cast<uint32_t*>(dst_base + jp * kc);
    const int64_t j = j0 + jp;
    jp += w;
    if (!p.tb) {  // B (K, N): interleave rows k and k + 1, 16 columns at a time
      const float* src = p.B + k0 * p.ldb + j;
      for (int64_t kp = 0; kp < kp_n; ++kp) {
        const float* s0 = src + 2 * kp * p.ldb;
        const bool odd_end = 2 * kp + 1 == kc;
        for (int64_t v = 0; 16 * v < stride; ++v) {
          const __mmask16 m = lanes(w - 16 * v);
          const __m512 x0 = _mm512_maskz_loadu_ps(m, s0 + 16 * v);
          const __m512 x1 =
              odd_end ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(m, s0 + p.ldb + 16 * v);
          _mm512_storeu_si512(dst + kp * stride + 16 * v, pairs_across(x0, x1));
        }
      }
      continue;
    }
    // B (N, K): each panel column is a row of B whose consecutive k are already pairs;
    // 32 k of 16 columns make 16 x 16 pairs, transposed to (pair row, column).
    const float* src = p.B + j * p.ldb + k0;
    for (int64_t k = 0; k < kc; k += 32) {
      const int64_t kw = min64(32, kc - k);
      const __mmask16 m0 = lanes(kw), m1 = lanes(kw - 16);
      const int64_t np = (kw + 1) / 2;
      for (int64_t g = 0; 16 * g < stride; ++g) {
        __m512 r[16];
#pragma GCC unroll 16
        for (int q = 0; q < 16; ++q) {
          const int64_t col = 16 * g + q;
          const float* s = src + col * p.ldb + k;
          r[q] = col < w ? _mm512_castsi512_ps(pairs_along(_mm512_maskz_loadu_ps(m0, s),
                                                           _mm512_maskz_loadu_ps(m1, s + 16)))
                         : _mm512_setzero_ps();
        }
        transpose16(r);  // r[t]: pair k / 2 + t of the 16 columns
        for (int64_t t = 0; t < np; ++t)
          _mm512_storeu_ps(reinterpret_cast<float*>(dst + (k / 2 + t) * stride + 16 * g), r[t]);
      }
    }
  }
}

// This thread's B panels for a block the driver planned without packing B.
struct LocalB {
  float* ptr = nullptr;
  size_t cap = 0;
  ~LocalB() { std::free(ptr); }
  float* get(size_t n) {
    if (n > cap) {
      std::free(ptr);
      const size_t bytes = ((n * sizeof(float) + 63) / 64) * 64;
      ptr = static_cast<float*>(std::aligned_alloc(64, bytes));
      cap = ptr ? bytes / sizeof(float) : 0;
      if (!ptr) throw std::bad_alloc();
    }
    return ptr;
  }
};
thread_local LocalB t_local_b;

void block(const Problem& p, const Block& b, bool /*pack_a*/, bool /*pack_b*/, float* work_b,
           const PackedB& pre) {
  if (!pre.b && !work_b) {
    const int64_t cols = min64(Bf16::kNC, b.j1 - b.j0);
    work_b = t_local_b.get(static_cast<size_t>(Bf16::kKC * ((cols + Bf16::kNR - 1) / Bf16::kNR) *
                                               Bf16::kNR));
  }
  compute_block<Bf16>(p, b, true, true, work_b, pre);
}

}  // namespace

const IsaOps& ops_avx512_bf16() {
  // The fp32 file's elementwise helpers; this file's blocking, block and packing.
  static const IsaOps ops = [] {
    IsaOps o = ops_avx512();
    o.mr = Bf16::kMR, o.nr = Bf16::kNR, o.kc = Bf16::kKC, o.nc = Bf16::kNC;
    o.block = &block;
    o.pack_b = &Bf16::pack_b;
    o.row = nullptr;  // one-row products too go through the bf16 blocks (every product rounds)
    o.always_packs_a = true;
    return o;
  }();
  return ops;
}

}  // namespace gemm_detail
}  // namespace fk
