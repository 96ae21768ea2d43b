// activation_math.h: per-element math of the CUDA activation, softmax and loss kernels, as FK_HD
// functions (device code under nvcc, plain inline C++ in fkeras._C_cuda_host).
//
// The formulas are those of the CPU kernels (cpp/elementwise/vmath.h and activations.inc): the
// same range reductions, polynomials, clamps and NaN rules, so that CPU and GPU agree to a few
// ulp (nvcc contracts a*b+c into FMA by default, as the CPU's AVX2/AVX-512 builds may: results
// can differ in the last bit, never in saturation, NaN or sign). Activation codes are
// fk::Activation's (cpp/include/fkeras/kernels.h): 0 linear ... 13 leaky_relu.
#pragma once

#include <cstdint>
#include <cstring>

#include "fk_cuda/hd.h"

namespace fk_cuda {

enum ActCode : int64_t {
  kActLinear = 0, kActRelu = 1, kActSigmoid = 2, kActTanh = 3, kActElu = 4, kActSelu = 5,
  kActGelu = 6, kActGeluTanh = 7, kActSoftplus = 8, kActSoftsign = 9, kActSwish = 10,
  kActHardSigmoid = 11, kActExponential = 12, kActLeakyRelu = 13,
};
constexpr int64_t kActCount = 14;

FK_HD float am_from_bits(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
#endif
}

FK_HD uint32_t am_to_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
#endif
}

FK_HD float am_select(bool c, float a, float b) { return c ? a : b; }
// Clamps that keep NaN (a NaN x fails the comparison and is returned unchanged).
FK_HD float am_min_keep_nan(float x, float hi) { return x > hi ? hi : x; }
FK_HD float am_max_keep_nan(float x, float lo) { return x < lo ? lo : x; }
// A clamp that drops NaN (always in [lo, hi]): for exponent arithmetic.
FK_HD float am_clamp_drop_nan(float x, float lo, float hi) {
  const float a = x > lo ? x : lo;
  return a < hi ? a : hi;
}
FK_HD float am_abs(float x) { return am_from_bits(am_to_bits(x) & 0x7fffffffu); }
// Round to nearest (ties to even) for |v| < 2^22. volatile-free: both compilers keep the
// adds (no -ffast-math; nvcc never reassociates).
FK_HD float am_round(float v) { return (v + 12582912.0f) - 12582912.0f; }

constexpr float kAmLog2e = 1.44269504088896341f;
constexpr float kAmLn2Hi = 0.693145751953125f;
constexpr float kAmLn2Lo = 1.42860676533018704e-6f;

FK_HD float am_pow2i(int32_t k) { return am_from_bits(static_cast<uint32_t>(k + 127) << 23); }

FK_HD float am_exp_poly(float r) {
  float p = 1.0f / 5040;
  p = p * r + 1.0f / 720;
  p = p * r + 1.0f / 120;
  p = p * r + 1.0f / 24;
  p = p * r + 1.0f / 6;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  return p * r + 1.0f;
}

FK_HD float am_expm1_poly(float r) {
  float p = 1.0f / 40320;
  p = p * r + 1.0f / 5040;
  p = p * r + 1.0f / 720;
  p = p * r + 1.0f / 120;
  p = p * r + 1.0f / 24;
  p = p * r + 1.0f / 6;
  p = p * r + 0.5f;
  return (p * r) * r + r;
}

FK_HD float am_exp(float x) {
  const float xn = am_clamp_drop_nan(x, -104.0f, 89.0f);
  const float xc = am_min_keep_nan(am_max_keep_nan(x, -104.0f), 89.0f);
  const float kf = am_round(xn * kAmLog2e);
  const float r = (xc - kf * kAmLn2Hi) - kf * kAmLn2Lo;
  const int32_t n = static_cast<int32_t>(kf);
  const int32_t h = n >> 1;
  return am_exp_poly(r) * am_pow2i(h) * am_pow2i(n - h);
}

// exp(x) for x <= 0 (or NaN).
FK_HD float am_exp_nonpos(float x) {
  const float xn = x > -104.0f ? x : -104.0f;  // drops NaN
  const float xc = x < -104.0f ? -104.0f : x;  // keeps NaN
  const float kf = am_round(xn * kAmLog2e);
  const float r = (xc - kf * kAmLn2Hi) - kf * kAmLn2Lo;
  const int32_t n = static_cast<int32_t>(kf);
  const int32_t h = n >> 1;
  return am_exp_poly(r) * am_pow2i(h) * am_pow2i(n - h);
}

FK_HD float am_expm1(float x) {
  const float xn = am_clamp_drop_nan(x, -30.0f, 89.0f);
  const float xc = am_min_keep_nan(am_max_keep_nan(x, -30.0f), 89.0f);
  const float kf = am_round(xn * kAmLog2e);
  const float r = (xc - kf * kAmLn2Hi) - kf * kAmLn2Lo;
  const float q = am_expm1_poly(r);
  const float s = am_pow2i(static_cast<int32_t>(kf) - 1);
  return 2.0f * (s * q + (s - 0.5f));
}

// log1p(t) for t in [0, 1].
FK_HD float am_log1p01(float t) {
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

FK_HD float am_sigmoid(float x) {
  const float e = am_exp_nonpos(-am_abs(x));
  const float r = 1.0f / (1.0f + e);
  return x >= 0.0f ? r : e * r;
}

FK_HD float am_tanh(float x) {
  const float m = am_expm1(-2.0f * am_abs(x));
  const float t = -m / (2.0f + m);
  return am_from_bits(am_to_bits(t) | (am_to_bits(x) & 0x80000000u));
}

FK_HD float am_softplus(float x) {
  const float pos = x > 0.0f ? x : 0.0f;
  return pos + am_log1p01(am_exp_nonpos(-am_abs(x)));
}

// exp(-x^2 / 2) with an exact large part of the argument (x split into 12-bit halves).
FK_HD float am_exp_neg_half_sq(float x) {
  const float xh = am_from_bits(am_to_bits(x) & 0xfffff000u);
  const float xl = x - xh;
  const float qh = 0.5f * xh * xh;
  const float ql = 0.5f * xl * (x + xh);
  float c = 1.0f / 24;
  c = c * -ql + 1.0f / 6;
  c = c * -ql + 0.5f;
  c = c * -ql + 1.0f;
  c = c * -ql + 1.0f;
  return am_exp_nonpos(-qh) * c;
}

struct AmNormal {
  float cdf, pdf;
};

// Standard normal CDF and density for GELU (erfc fit of cpp/elementwise/gen_erfc_coefficients.py).
FK_HD AmNormal am_normal(float x) {
  const float a = am_min_keep_nan(am_abs(x), 14.5f);
  const float t = a * 0.707106781186547524f;
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
  const float e = am_exp_neg_half_sq(a);
  const float half_erfc = 0.5f * e * g * ((t + 3.0f) * inv);
  AmNormal r;
  r.cdf = x >= 0.0f ? 1.0f - half_erfc : half_erfc;
  r.pdf = e * 0.398942280401432678f;
  return r;
}

constexpr double kAmGeluK1 = 1.5957691216057307;
constexpr double kAmGeluK3 = 1.5957691216057307 * 0.044715;

struct AmGeluTanh {
  float s, one_m_s, dv;
};

// GELU tanh approximation parts: x sigmoid(v), v = k1 x + k3 x^3 formed in double.
FK_HD AmGeluTanh am_gelu_tanh_parts(float x) {
  const double xd = am_min_keep_nan(am_max_keep_nan(x, -20.0f), 20.0f);
  const double v = xd * (kAmGeluK1 + kAmGeluK3 * xd * xd);
  const float vh = static_cast<float>(v);
  const float vl = static_cast<float>(v - static_cast<double>(vh));
  const bool pos = vh >= 0.0f;
  const float e = am_exp_nonpos(-am_abs(vh)) * (1.0f - (pos ? vl : -vl));
  const float r = 1.0f / (1.0f + e);
  const float er = e * r;
  AmGeluTanh g;
  g.s = pos ? r : er;
  g.one_m_s = pos ? er : r;
  g.dv = static_cast<float>(kAmGeluK1) + 3.0f * static_cast<float>(kAmGeluK3) * x * x;
  return g;
}

constexpr float kAmSeluAlpha = 1.67326324235437728f;
constexpr float kAmSeluScale = 1.05070098735548049f;

// y = act(x). Unknown codes return NaN (the bindings reject them before any kernel runs).
FK_HD float act_forward(int64_t act, float v, float alpha) {
  switch (act) {
    case kActLinear: return v;
    case kActRelu: return am_max_keep_nan(v, 0.0f);
    case kActSigmoid: return am_sigmoid(v);
    case kActTanh: return am_tanh(v);
    case kActElu: return v > 0.0f ? v : alpha * am_expm1(am_min_keep_nan(v, 0.0f));
    case kActSelu: {
      const float neg = kAmSeluAlpha * am_expm1(am_min_keep_nan(v, 0.0f));
      return kAmSeluScale * (v > 0.0f ? v : neg);
    }
    case kActGelu: return v * am_normal(v).cdf;
    case kActGeluTanh: return v * am_gelu_tanh_parts(v).s;
    case kActSoftplus: return am_softplus(v);
    case kActSoftsign: return v / (1.0f + am_abs(v));
    case kActSwish: return v * am_sigmoid(v);
    case kActHardSigmoid:
      return am_min_keep_nan(am_max_keep_nan(v + 3.0f, 0.0f), 6.0f) * (1.0f / 6.0f);
    case kActExponential: return am_exp(v);
    case kActLeakyRelu: return v > 0.0f ? v : alpha * v;
    default: return am_from_bits(0x7fc00000u);
  }
}

// act'(x) read from x (v) or from the forward's output y (o), as activations.inc.
FK_HD float act_derivative(int64_t act, float v, float o, float alpha) {
  switch (act) {
    case kActLinear: return 1.0f;
    case kActRelu: return v > 0.0f ? 1.0f : 0.0f;
    case kActSigmoid: return o * (1.0f - o);
    case kActTanh: return (1.0f - o) * (1.0f + o);
    case kActElu: return v > 0.0f ? 1.0f : o + alpha;
    case kActSelu: return v > 0.0f ? kAmSeluScale : o + kAmSeluScale * kAmSeluAlpha;
    case kActGelu: {
      const AmNormal p = am_normal(v);
      return p.cdf + v * p.pdf;
    }
    case kActGeluTanh: {
      const AmGeluTanh g = am_gelu_tanh_parts(v);
      const float xc = am_min_keep_nan(am_max_keep_nan(v, -20.0f), 20.0f);
      const float dv = am_min_keep_nan(g.dv, 1e30f);
      return g.s + (xc * (g.s * g.one_m_s)) * dv;
    }
    case kActSoftplus: return am_sigmoid(v);
    case kActSoftsign: {
      const float d = 1.0f + am_abs(v);
      return 1.0f / (d * d);
    }
    case kActSwish: {
      const float e = am_exp_nonpos(-am_abs(v));
      const float r = 1.0f / (1.0f + e);
      const float er = e * r;
      const float s = v >= 0.0f ? r : er;
      const float one_m_s = v >= 0.0f ? er : r;
      return s * (1.0f + v * one_m_s);
    }
    case kActHardSigmoid: return (v > -3.0f && v < 3.0f) ? 1.0f / 6.0f : 0.0f;
    case kActExponential: return o;
    case kActLeakyRelu: return v > 0.0f ? 1.0f : alpha;
    default: return am_from_bits(0x7fc00000u);
  }
}

// dx = dy * act'(x).
FK_HD float act_backward(int64_t act, float dy, float v, float o, float alpha) {
  return dy * act_derivative(act, v, o, alpha);
}

}  // namespace fk_cuda
