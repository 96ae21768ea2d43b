// batchnorm_avx512.cpp: the batch-norm block kernels (batchnorm_kernels.h) on AVX-512F.
// Compiled with the AVX-512 flags (CMakeLists.txt); batchnorm.cpp calls this table only when
// fk::cpu_isa() is avx512. Float vectors of 16 lanes, widened to two 8-lane float64 halves;
// tails use mask registers (masked loads never touch memory past the end).
#include <immintrin.h>

#define FK_BN_NS bn_avx512
#include "batchnorm_kernels.h"

namespace fk {
namespace bn_avx512 {
namespace {

struct V512 {
  static constexpr int kF = 16;
  static constexpr int kURows = 2;  // 32 columns per row block: 16-24 zmm accumulators
  using F = __m512;
  struct D {
    __m512d lo, hi;
  };
  static __mmask16 mask(int n) { return static_cast<__mmask16>((1u << n) - 1u); }
  static __mmask8 mask8(int n) { return static_cast<__mmask8>((1u << n) - 1u); }

  static F load(const float* p) { return _mm512_loadu_ps(p); }
  static F load_n(const float* p, int n) { return _mm512_maskz_loadu_ps(mask(n), p); }
  static void store(float* p, F v) { _mm512_storeu_ps(p, v); }
  static void store_n(float* p, F v, int n) { _mm512_mask_storeu_ps(p, mask(n), v); }
  static F set1(float a) { return _mm512_set1_ps(a); }
  static F sub(F a, F b) { return _mm512_sub_ps(a, b); }
  static F fma(F a, F b, F c) { return _mm512_fmadd_ps(a, b, c); }
  static F add(F a, F b) { return _mm512_add_ps(a, b); }
  static F mul(F a, F b) { return _mm512_mul_ps(a, b); }
  static F first_n(F v, int n) { return _mm512_maskz_mov_ps(mask(n), v); }
  // max returns its second operand when either is NaN: a NaN v stays NaN.
  static F relu(F v) { return _mm512_max_ps(_mm512_setzero_ps(), v); }
  static F gate(F pre, F g) {
    const __mmask16 open = _mm512_cmp_ps_mask(pre, _mm512_setzero_ps(), _CMP_GT_OQ);
    return _mm512_mul_ps(g, _mm512_maskz_mov_ps(open, _mm512_set1_ps(1.f)));
  }

  static D widen(F v) {
    const __m256 hi = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1));
    return {_mm512_cvtps_pd(_mm512_castps512_ps256(v)), _mm512_cvtps_pd(hi)};
  }
  static D dzero() { return {_mm512_setzero_pd(), _mm512_setzero_pd()}; }
  static D dadd(D a, D b) { return {_mm512_add_pd(a.lo, b.lo), _mm512_add_pd(a.hi, b.hi)}; }
  static D dsub(D a, D b) { return {_mm512_sub_pd(a.lo, b.lo), _mm512_sub_pd(a.hi, b.hi)}; }
  static D dfma(D a, D b, D c) {
    return {_mm512_fmadd_pd(a.lo, b.lo, c.lo), _mm512_fmadd_pd(a.hi, b.hi, c.hi)};
  }
  static D dload(const double* p) { return {_mm512_loadu_pd(p), _mm512_loadu_pd(p + 8)}; }
  static D dload_n(const double* p, int n) {
    const __m512d hi = n > 8 ? _mm512_maskz_loadu_pd(mask8(n - 8), p + 8) : _mm512_setzero_pd();
    return {_mm512_maskz_loadu_pd(mask8(n < 8 ? n : 8), p), hi};
  }
  static void dstore(double* p, D v) {
    _mm512_storeu_pd(p, v.lo);
    _mm512_storeu_pd(p + 8, v.hi);
  }
  static void dstore_n(double* p, D v, int n) {
    _mm512_mask_storeu_pd(p, mask8(n < 8 ? n : 8), v.lo);
    if (n > 8) _mm512_mask_storeu_pd(p + 8, mask8(n - 8), v.hi);
  }
  static double dsum(D v) { return _mm512_reduce_add_pd(_mm512_add_pd(v.lo, v.hi)); }
};

}  // namespace
}  // namespace bn_avx512

namespace bn {
const BlockKernels kAvx512Kernels = bn_avx512::make_block_kernels<bn_avx512::V512>();
}  // namespace bn
}  // namespace fk
