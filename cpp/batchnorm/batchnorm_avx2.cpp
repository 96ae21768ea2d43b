// batchnorm_avx2.cpp: the batch-norm block kernels (batchnorm_kernels.h) on AVX2 + FMA.
// Compiled with the AVX2 flags (CMakeLists.txt); batchnorm.cpp calls this table only when
// fk::cpu_isa() is avx2. Float vectors of 8 lanes, widened to two 4-lane float64 halves;
// tails use vmaskmov (masked-out lanes are neither read nor written).
#include <immintrin.h>

#define FK_BN_NS bn_avx2
#include "batchnorm_kernels.h"

namespace fk {
namespace bn_avx2 {
namespace {

// Lane masks: loading 8 int32 at kMask32 + 8 - n gives n all-ones lanes, then zeros.
alignas(32) const int32_t kMask32[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
alignas(32) const int64_t kMask64[8] = {-1, -1, -1, -1, 0, 0, 0, 0};

struct V256 {
  static constexpr int kF = 8;
  static constexpr int kURows = 2;  // 16 columns per row block: 12-16 ymm registers
  using F = __m256;
  struct D {
    __m256d lo, hi;
  };
  static __m256i mask(int n) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kMask32 + 8 - n));
  }
  static __m256i mask4(int n) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kMask64 + 4 - n));
  }

  static F load(const float* p) { return _mm256_loadu_ps(p); }
  static F load_n(const float* p, int n) { return _mm256_maskload_ps(p, mask(n)); }
  static void store(float* p, F v) { _mm256_storeu_ps(p, v); }
  static void store_n(float* p, F v, int n) { _mm256_maskstore_ps(p, mask(n), v); }
  static F set1(float a) { return _mm256_set1_ps(a); }
  static F sub(F a, F b) { return _mm256_sub_ps(a, b); }
  static F fma(F a, F b, F c) { return _mm256_fmadd_ps(a, b, c); }
  static F add(F a, F b) { return _mm256_add_ps(a, b); }
  static F mul(F a, F b) { return _mm256_mul_ps(a, b); }
  static F first_n(F v, int n) { return _mm256_and_ps(v, _mm256_castsi256_ps(mask(n))); }
  // max returns its second operand when either is NaN: a NaN v stays NaN.
  static F relu(F v) { return _mm256_max_ps(_mm256_setzero_ps(), v); }
  static F gate(F pre, F g) {
    const __m256 open = _mm256_cmp_ps(pre, _mm256_setzero_ps(), _CMP_GT_OQ);
    return _mm256_mul_ps(g, _mm256_and_ps(open, _mm256_set1_ps(1.f)));
  }

  static D widen(F v) {
    return {_mm256_cvtps_pd(_mm256_castps256_ps128(v)),
            _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1))};
  }
  static D dzero() { return {_mm256_setzero_pd(), _mm256_setzero_pd()}; }
  static D dadd(D a, D b) { return {_mm256_add_pd(a.lo, b.lo), _mm256_add_pd(a.hi, b.hi)}; }
  static D dsub(D a, D b) { return {_mm256_sub_pd(a.lo, b.lo), _mm256_sub_pd(a.hi, b.hi)}; }
  static D dfma(D a, D b, D c) {
    return {_mm256_fmadd_pd(a.lo, b.lo, c.lo), _mm256_fmadd_pd(a.hi, b.hi, c.hi)};
  }
  static D dload(const double* p) { return {_mm256_loadu_pd(p), _mm256_loadu_pd(p + 4)}; }
  static D dload_n(const double* p, int n) {
    const __m256d hi = n > 4 ? _mm256_maskload_pd(p + 4, mask4(n - 4)) : _mm256_setzero_pd();
    return {_mm256_maskload_pd(p, mask4(n < 4 ? n : 4)), hi};
  }
  static void dstore(double* p, D v) {
    _mm256_storeu_pd(p, v.lo);
    _mm256_storeu_pd(p + 4, v.hi);
  }
  static void dstore_n(double* p, D v, int n) {
    _mm256_maskstore_pd(p, mask4(n < 4 ? n : 4), v.lo);
    if (n > 4) _mm256_maskstore_pd(p + 4, mask4(n - 4), v.hi);
  }
  static double dsum(D v) {
    const __m256d s = _mm256_add_pd(v.lo, v.hi);
    const __m128d h = _mm_add_pd(_mm256_castpd256_pd128(s), _mm256_extractf128_pd(s, 1));
    return _mm_cvtsd_f64(_mm_add_sd(h, _mm_unpackhi_pd(h, h)));
  }
};

}  // namespace
}  // namespace bn_avx2

namespace bn {
const BlockKernels kAvx2Kernels = bn_avx2::make_block_kernels<bn_avx2::V256>();
}  // namespace bn
}  // namespace fk
