// gates_avx2.cpp: the AVX2 + FMA build of the recurrent gate passes (math in gates_impl.h),
// 8 floats per vector. Compiled with -mavx2 -mfma (CMakeLists.txt); called only when
// fk::cpu_isa() is avx2 or better.
#include <immintrin.h>

#include "gates_impl.h"

namespace fk {
namespace rnn {
namespace {

struct Avx2 {
  static constexpr int kWidth = 8;
  __m256 v;
  static Avx2 load(const float* p) { return {_mm256_loadu_ps(p)}; }
  static Avx2 splat(float x) { return {_mm256_set1_ps(x)}; }
  static Avx2 fmadd(Avx2 a, Avx2 b, Avx2 c) { return {_mm256_fmadd_ps(a.v, b.v, c.v)}; }
  // min/max: operands swapped so that a NaN in a wins (the instruction returns its second
  // operand when either is NaN); see gates_impl.h.
  static Avx2 min(Avx2 a, Avx2 b) { return {_mm256_min_ps(b.v, a.v)}; }
  static Avx2 max(Avx2 a, Avx2 b) { return {_mm256_max_ps(b.v, a.v)}; }
  static Avx2 select_lt(Avx2 a, Avx2 b, Avx2 x, Avx2 y) {
    return {_mm256_blendv_ps(y.v, x.v, _mm256_cmp_ps(a.v, b.v, _CMP_LT_OQ))};
  }
  static Avx2 copysign(Avx2 mag, Avx2 sgn) {
    const __m256 sign = _mm256_set1_ps(-0.f);
    return {_mm256_or_ps(_mm256_andnot_ps(sign, mag.v), _mm256_and_ps(sign, sgn.v))};
  }
  void store(float* p) const { _mm256_storeu_ps(p, v); }
  Avx2 abs() const { return {_mm256_andnot_ps(_mm256_set1_ps(-0.f), v)}; }
  Avx2 round() const { return {_mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)}; }
  Avx2 pow2() const {
    const __m256i e = _mm256_add_epi32(_mm256_cvtps_epi32(v), _mm256_set1_epi32(127));
    return {_mm256_castsi256_ps(_mm256_slli_epi32(e, 23))};
  }
  Avx2 recip() const {  // _mm256_rcp_ps: 12-bit estimate; one Newton step doubles the bits
    const __m256 r = _mm256_rcp_ps(v);
    return {_mm256_fmadd_ps(r, _mm256_fnmadd_ps(v, r, _mm256_set1_ps(1.f)), r)};
  }
  friend Avx2 operator+(Avx2 a, Avx2 b) { return {_mm256_add_ps(a.v, b.v)}; }
  friend Avx2 operator-(Avx2 a, Avx2 b) { return {_mm256_sub_ps(a.v, b.v)}; }
  friend Avx2 operator*(Avx2 a, Avx2 b) { return {_mm256_mul_ps(a.v, b.v)}; }
};

}  // namespace

const GateKernels& gate_kernels_avx2() {
  static const GateKernels kernels = make_gate_kernels<Avx2>();
  return kernels;
}

}  // namespace rnn
}  // namespace fk
