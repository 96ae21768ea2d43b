// gates_avx512.cpp: the AVX-512 build of the recurrent gate passes (math in gates_impl.h),
// 16 floats per vector. Compiled with the AVX-512 flags (CMakeLists.txt); called only when
// fk::cpu_isa() is avx512.
#include <immintrin.h>

#include "gates_impl.h"

namespace fk {
namespace rnn {
namespace {

struct Avx512 {
  static constexpr int kWidth = 16;
  __m512 v;
  static Avx512 load(const float* p) { return {_mm512_loadu_ps(p)}; }
  static Avx512 splat(float x) { return {_mm512_set1_ps(x)}; }
  static Avx512 fmadd(Avx512 a, Avx512 b, Avx512 c) { return {_mm512_fmadd_ps(a.v, b.v, c.v)}; }
  // min/max: operands swapped so that a NaN in a wins (the instruction returns its second
  // operand when either is NaN); see gates_impl.h.
  static Avx512 min(Avx512 a, Avx512 b) { return {_mm512_min_ps(b.v, a.v)}; }
  static Avx512 max(Avx512 a, Avx512 b) { return {_mm512_max_ps(b.v, a.v)}; }
  static Avx512 select_lt(Avx512 a, Avx512 b, Avx512 x, Avx512 y) {
    return {_mm512_mask_blend_ps(_mm512_cmp_ps_mask(a.v, b.v, _CMP_LT_OQ), y.v, x.v)};
  }
  static Avx512 copysign(Avx512 mag, Avx512 sgn) {
    const __m512i sign = _mm512_set1_epi32(static_cast<int>(0x80000000u));
    const __m512i m = _mm512_andnot_si512(sign, _mm512_castps_si512(mag.v));
    const __m512i s = _mm512_and_si512(sign, _mm512_castps_si512(sgn.v));
    return {_mm512_castsi512_ps(_mm512_or_si512(m, s))};
  }
  void store(float* p) const { _mm512_storeu_ps(p, v); }
  Avx512 abs() const { return {_mm512_abs_ps(v)}; }
  Avx512 round() const { return {_mm512_roundscale_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)}; }
  Avx512 pow2() const {
    const __m512i e = _mm512_add_epi32(_mm512_cvtps_epi32(v), _mm512_set1_epi32(127));
    return {_mm512_castsi512_ps(_mm512_slli_epi32(e, 23))};
  }
  Avx512 recip() const {  // _mm512_rcp14_ps: 14-bit estimate; one Newton step doubles the bits
    const __m512 r = _mm512_rcp14_ps(v);
    return {_mm512_fmadd_ps(r, _mm512_fnmadd_ps(v, r, _mm512_set1_ps(1.f)), r)};
  }
  friend Avx512 operator+(Avx512 a, Avx512 b) { return {_mm512_add_ps(a.v, b.v)}; }
  friend Avx512 operator-(Avx512 a, Avx512 b) { return {_mm512_sub_ps(a.v, b.v)}; }
  friend Avx512 operator*(Avx512 a, Avx512 b) { return {_mm512_mul_ps(a.v, b.v)}; }
};

}  // namespace

const GateKernels& gate_kernels_avx512() {
  static const GateKernels kernels = make_gate_kernels<Avx512>();
  return kernels;
}

}  // namespace rnn
}  // namespace fk
