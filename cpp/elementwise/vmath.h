// vmath.h: branch-free float32 math for the elementwise kernels, written so that GCC/Clang
// auto-vectorize the loops that call it (no libm calls, selects instead of branches, integer
// bit tricks through memcpy). Every function is `static inline`: this header is compiled into
// each per-ISA translation unit (portable, AVX2, AVX-512) with that unit's flags, and internal
// linkage keeps the linker from mixing one unit's copy into another.
//
// Accuracy (checked by tests/kernels/test_elementwise.py against float64 over +-120 and the
// float32 extremes): about 1-3 ulp, results below FLT_MIN to within FLT_MIN. Saturation is exact:
// exp overflows to +inf and underflows through the subnormals to 0; tanh, sigmoid and the
// activations built on them reach their limits without inf/inf. NaN in gives NaN out.
//
// Numerics:
// - exp: x = n ln2 + r with |r| <= ln2/2 (ln2 split so n * ln2_hi is exact), exp(r) by its
//   degree-7 Taylor polynomial (truncation < 6e-9), 2^n applied as two factors 2^(n/2) so that
//   subnormal and near-overflow results are rounded once, correctly.
// - expm1: the same reduction, expm1(x) = 2^n expm1(r) + (2^n - 1); n = 0 returns expm1(r)
//   itself, so small |x| keeps full relative accuracy (no 1 - 1 cancellation).
// - log1p on [0, 1]: log1p(t) = 2 atanh(s), s = t / (2 + t) in [0, 1/3], odd series to s^13.
// - erfc for GELU: erfc(t) = exp(-t^2) g(Y) / (1 + 2t), Y = (t - 3) / (t + 3), g a degree-10
//   polynomial fitted for relative error 7e-9 on t in [0, 15] (gen_erfc_coefficients.py). The
//   factor exp(-t^2) = exp(-x^2 / 2) is computed from x split into 12-bit halves so that its
//   large argument carries no rounding error (a plain float x*x would cost 1e-5 relative).
// - GELU tanh approximation: x sigmoid(v), v = 2u formed in double for the same reason.
#pragma once

#include <cstdint>
#include <cstring>

static inline float vm_from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

static inline uint32_t vm_to_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

// c ? a : b as bit operations on values that are both computed. A plain `c ? a : f(b)` lets
// GCC sink f into a branch that it then cannot if-convert without speculating a trapping
// operation (we keep -ftrapping-math), and the loop stays scalar on AVX2 and SSE.
static inline float vm_select(bool c, float a, float b) {
  const uint32_t m = 0u - static_cast<uint32_t>(c);
  return vm_from_bits((vm_to_bits(a) & m) | (vm_to_bits(b) & ~m));
}

// Clamps that keep NaN: a NaN x fails the comparison and is returned unchanged.
static inline float vm_min_keep_nan(float x, float hi) { return vm_select(x > hi, hi, x); }
static inline float vm_max_keep_nan(float x, float lo) { return vm_select(x < lo, lo, x); }
// A clamp that drops NaN (the result is always in [lo, hi]): for exponent arithmetic.
static inline float vm_clamp_drop_nan(float x, float lo, float hi) {
  const float a = vm_select(x > lo, x, lo);
  return vm_select(a < hi, a, hi);
}

static inline float vm_abs(float x) { return vm_from_bits(vm_to_bits(x) & 0x7fffffffu); }

// Round to the nearest integer (ties to even) for |v| < 2^22, without a libm call.
static inline float vm_round(float v) { return (v + 12582912.0f) - 12582912.0f; }

constexpr float kVmLog2e = 1.44269504088896341f;
constexpr float kVmLn2Hi = 0.693145751953125f;       // 0x3f317200: n * kVmLn2Hi is exact
constexpr float kVmLn2Lo = 1.42860676533018704e-6f;  // ln 2 - kVmLn2Hi

// 2^k as a float for k in [-126, 127].
static inline float vm_pow2i(int32_t k) {
  return vm_from_bits(static_cast<uint32_t>(k + 127) << 23);
}

// exp(r) for |r| <= ln2/2 (a little more is fine).
static inline float vm_exp_poly(float r) {
  float p = 1.0f / 5040;
  p = p * r + 1.0f / 720;
  p = p * r + 1.0f / 120;
  p = p * r + 1.0f / 24;
  p = p * r + 1.0f / 6;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  return p * r + 1.0f;
}

// expm1(r) for |r| <= ln2/2.
static inline float vm_expm1_poly(float r) {
  float p = 1.0f / 40320;
  p = p * r + 1.0f / 5040;
  p = p * r + 1.0f / 720;
  p = p * r + 1.0f / 120;
  p = p * r + 1.0f / 24;
  p = p * r + 1.0f / 6;
  p = p * r + 0.5f;
  return (p * r) * r + r;
}

static inline float vm_exp(float x) {
  // exp(-104) rounds to 0, exp(89) overflows: clamping there changes no result. n comes from
  // a NaN-free clamp; r from one that keeps NaN, so NaN flows through the polynomial.
  const float xn = vm_clamp_drop_nan(x, -104.0f, 89.0f);
  const float xc = vm_min_keep_nan(vm_max_keep_nan(x, -104.0f), 89.0f);
  const float kf = vm_round(xn * kVmLog2e);
  const float r = (xc - kf * kVmLn2Hi) - kf * kVmLn2Lo;
  const int32_t n = static_cast<int32_t>(kf);  // in [-150, 128]
  const int32_t h = n >> 1;
  return vm_exp_poly(r) * vm_pow2i(h) * vm_pow2i(n - h);
}

// exp(x) for x <= 0 (or NaN): one clamp fewer than vm_exp; the common case (exp(-|x|)).
static inline float vm_exp_nonpos(float x) {
  const float xn = vm_select(x > -104.0f, x, -104.0f);  // drops NaN
  const float xc = vm_select(x < -104.0f, -104.0f, x);  // keeps NaN
  const float kf = vm_round(xn * kVmLog2e);
  const float r = (xc - kf * kVmLn2Hi) - kf * kVmLn2Lo;
  const int32_t n = static_cast<int32_t>(kf);  // in [-150, 0]
  const int32_t h = n >> 1;
  return vm_exp_poly(r) * vm_pow2i(h) * vm_pow2i(n - h);
}

static inline float vm_expm1(float x) {
  // expm1(x) = -1 in float below -30; 89 overflows.
  const float xn = vm_clamp_drop_nan(x, -30.0f, 89.0f);
  const float xc = vm_min_keep_nan(vm_max_keep_nan(x, -30.0f), 89.0f);
  const float kf = vm_round(xn * kVmLog2e);
  const float r = (xc - kf * kVmLn2Hi) - kf * kVmLn2Lo;
  const float q = vm_expm1_poly(r);
  // 2^n q + 2^n - 1 written with s = 2^(n-1) (n up to 128): 2 (s q + (s - 1/2)); s - 1/2 is
  // exact while it matters, and n = 0 gives q exactly.
  const float s = vm_pow2i(static_cast<int32_t>(kf) - 1);
  return 2.0f * (s * q + (s - 0.5f));
}

// log1p(t) for t in [0, 1] (NaN propagates).
static inline float vm_log1p01(float t) {
  const float s = t / (2.0f + t);
  const float z = s * s;
  float p = 1.0f / 13;
  p = p * z + 1.0f / 11;
  p = p * z + 1.0f / 9;
  p = p * z + 1.0f / 7;
  p = p * z + 1.0f / 5;
  p = p * z + 1.0f / 3;
  return (2.0f * s) * (p * z) + 2.0f * s;
}

static inline float vm_sigmoid(float x) {
  const float e = vm_exp_nonpos(-vm_abs(x));  // in (0, 1]: no overflow
  const float r = 1.0f / (1.0f + e);
  return vm_select(x >= 0.0f, r, e * r);
}

static inline float vm_tanh(float x) {
  // tanh(a) = -m / (2 + m), m = expm1(-2a) in (-1, 0]: no overflow, no cancellation.
  const float m = vm_expm1(-2.0f * vm_abs(x));
  const float t = -m / (2.0f + m);  // >= 0 (or NaN): give it the sign of x
  return vm_from_bits(vm_to_bits(t) | (vm_to_bits(x) & 0x80000000u));
}

// softplus(x) = max(x, 0) + log1p(exp(-|x|)).
static inline float vm_softplus(float x) {
  const float pos = vm_select(x > 0.0f, x, 0.0f);
  return pos + vm_log1p01(vm_exp_nonpos(-vm_abs(x)));
}

// exp(-x^2 / 2) without rounding error in the argument: x = xh + xl with xh holding 12
// significant bits, so xh^2 / 2 is exact and the remainder xl (x + xh) / 2 is small
// (|x| <= 14.5: below 0.06), handled by a Taylor polynomial.
static inline float vm_exp_neg_half_sq(float x) {
  const float xh = vm_from_bits(vm_to_bits(x) & 0xfffff000u);
  const float xl = x - xh;
  const float qh = 0.5f * xh * xh;
  const float ql = 0.5f * xl * (x + xh);
  float c = 1.0f / 24;  // exp(-ql) to ql^4
  c = c * -ql + 1.0f / 6;
  c = c * -ql + 0.5f;
  c = c * -ql + 1.0f;
  c = c * -ql + 1.0f;
  return vm_exp_nonpos(-qh) * c;
}

// Standard normal CDF Phi(x) and density phi(x) for GELU; |x| is clamped to 14.5, where both
// are below the smallest subnormal on the negative side and Phi is 1 on the positive side.
struct VmNormal {
  float cdf, pdf;
};

static inline VmNormal vm_normal(float x) {
  const float a = vm_min_keep_nan(vm_abs(x), 14.5f);
  const float t = a * 0.707106781186547524f;
  // One division for both Y = (t - 3) / (t + 3) and 1 / (1 + 2t).
  const float u = 1.0f + 2.0f * t;
  const float inv = 1.0f / ((t + 3.0f) * u);
  const float y = (t - 3.0f) * u * inv;
  float g = -2.27292257e-4f;
  g = g * y + -6.83818304e-4f;
  g = g * y + 2.03645788e-3f;
  g = g * y + 2.51174439e-3f;
  g = g * y + -2.38334350e-2f;
  g = g * y + 6.83056712e-2f;
  g = g * y + -1.19262420e-1f;
  g = g * y + 1.29645884e-1f;
  g = g * y + -4.75630239e-2f;
  g = g * y + -1.35621130e-1f;
  g = g * y + 1.25300801e+0f;
  const float e = vm_exp_neg_half_sq(a);  // exp(-t^2)
  const float half_erfc = 0.5f * e * g * ((t + 3.0f) * inv);  // Phi(-|x|)
  VmNormal r;
  r.cdf = vm_select(x >= 0.0f, 1.0f - half_erfc, half_erfc);
  r.pdf = e * 0.398942280401432678f;
  return r;
}

// GELU tanh approximation: 0.5 x (1 + tanh(u)) = x sigmoid(v), v = 2u = k1 x + k3 x^3. exp(-|v|)
// is large-argument sensitive (|v| up to ~100 where the result is still a normal float), so v
// is formed in double and split as v_hi + v_lo; exp(-|v|) = exp(-|v_hi|) (1 -+ v_lo).
constexpr double kVmGeluK1 = 1.5957691216057307;             // 2 sqrt(2 / pi)
constexpr double kVmGeluK3 = 1.5957691216057307 * 0.044715;  // 2 sqrt(2 / pi) * 0.044715

struct VmGeluTanh {
  float s;        // sigmoid(v)
  float one_m_s;  // 1 - sigmoid(v) = sigmoid(-v), accurate when s is near 1
  float dv;       // dv/dx
};

static inline VmGeluTanh vm_gelu_tanh_parts(float x) {
  // |x| <= 20 keeps v finite (|v| < 610) and changes nothing: sigmoid(v) is 0 or 1 from
  // |x| = 11 on. Clamping in float keeps NaN and needs no 64-bit selects (none on plain SSE2).
  const double xd = vm_min_keep_nan(vm_max_keep_nan(x, -20.0f), 20.0f);
  const double v = xd * (kVmGeluK1 + kVmGeluK3 * xd * xd);
  const float vh = static_cast<float>(v);
  const float vl = static_cast<float>(v - static_cast<double>(vh));
  const bool pos = vh >= 0.0f;
  const float e = vm_exp_nonpos(-vm_abs(vh)) * (1.0f - vm_select(pos, vl, -vl));  // exp(-|v|)
  const float r = 1.0f / (1.0f + e);
  const float er = e * r;
  VmGeluTanh g;
  g.s = vm_select(pos, r, er);
  g.one_m_s = vm_select(pos, er, r);
  g.dv = static_cast<float>(kVmGeluK1) + 3.0f * static_cast<float>(kVmGeluK3) * x * x;
  return g;
}
