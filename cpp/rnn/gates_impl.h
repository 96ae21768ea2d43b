// gates_impl.h: the elementwise math of the recurrent kernels, written once over a vector type.
//
// Included by exactly one translation unit per ISA (gates.cpp, gates_avx2.cpp, gates_avx512.cpp),
// each of which first defines, inside an anonymous namespace in fk::rnn, its vector type
// with the primitives listed below; everything here is in that anonymous namespace too, so the
// three copies never meet at link time. Tails (units past the last full vector) run through
// `Scalar`, which uses the C library's exp and tanh.
//
// Vector primitives a Vec provides: kWidth; static load, splat, fmadd (a * b + c), min, max
// (a NaN in a wins: every call passes the data as a and a finite constant as b, so NaN
// propagates as np.maximum does; x86's min/max return b on NaN, hence the swapped operands),
// select_lt (a < b ? x : y), copysign (magnitude, sign); member store, abs, round (to nearest),
// pow2 (2^k for an integer-valued k in [-126, 127]) and recip (1 / x to within ~2 ulp: a
// hardware estimate refined by one Newton step, several times cheaper than a division);
// operators + - *.
//
// Accuracy of the vector path (coefficients fitted for this file, by weighted least squares
// iterated towards minimax, then checked in float32 arithmetic): exp by Cody-Waite reduction to
// |r| <= ln2 / 2 and a degree-6 polynomial (relative error ~1e-7); sigmoid = 1 / (1 + exp(-x));
// tanh(x) = x P(x^2) / Q(x^2) with P, Q of degree 4 on |x| <= 9 (relative error < 4e-7, no
// cancellation near 0; |tanh| is clamped to 1).
//
// Activations are applied through a policy: the Keras default pair (tanh, sigmoid) is resolved
// at compile time, so its loops are straight-line code; any other accepted pair goes through a
// run-time switch (correct, a little slower).
//
// Derivatives of activations come from their outputs (kernels.h: the recurrent kernels accept
// linear, relu, sigmoid, tanh and hard_sigmoid only, the codes where that is possible).
#pragma once

#include <cmath>
#include <cstdint>

#include "fkeras/kernels.h"
#include "rnn_internal.h"

namespace fk {
namespace rnn {
namespace {

struct Scalar {
  static constexpr int kWidth = 1;
  float v;
  static Scalar load(const float* p) { return {*p}; }
  static Scalar splat(float x) { return {x}; }
  static Scalar fmadd(Scalar a, Scalar b, Scalar c) { return {a.v * b.v + c.v}; }
  // NaN wins (std::fmin/fmax would drop it).
  static Scalar min(Scalar a, Scalar b) { return (a.v < b.v || a.v != a.v) ? a : b; }
  static Scalar max(Scalar a, Scalar b) { return (a.v > b.v || a.v != a.v) ? a : b; }
  static Scalar select_lt(Scalar a, Scalar b, Scalar x, Scalar y) { return a.v < b.v ? x : y; }
  void store(float* p) const { *p = v; }
  friend Scalar operator+(Scalar a, Scalar b) { return {a.v + b.v}; }
  friend Scalar operator-(Scalar a, Scalar b) { return {a.v - b.v}; }
  friend Scalar operator*(Scalar a, Scalar b) { return {a.v * b.v}; }
};

inline Scalar vsigmoid(Scalar x) { return {1.f / (1.f + std::exp(-x.v))}; }
inline Scalar vtanh(Scalar x) { return {std::tanh(x.v)}; }

template <class V>
inline V exp_approx(V x) {
  // Clamped so that k stays in [-126, 127]: 2^k is then a normal float.
  x = V::min(V::max(x, V::splat(-87.0f)), V::splat(88.0f));
  const V k = (x * V::splat(1.44269504088896341f)).round();
  // r = x - k ln2, with ln2 split in two so that k * ln2_hi is exact.
  V r = V::fmadd(k, V::splat(-0.693359375f), x);
  r = V::fmadd(k, V::splat(2.12194440e-4f), r);
  V p = V::splat(1.3836846e-3f);
  p = V::fmadd(p, r, V::splat(8.3748158e-3f));
  p = V::fmadd(p, r, V::splat(4.1668225e-2f));
  p = V::fmadd(p, r, V::splat(1.6666420e-1f));
  p = V::fmadd(p, r, V::splat(4.9999991e-1f));
  p = V::fmadd(p, r, V::splat(1.f));
  p = V::fmadd(p, r, V::splat(1.f));
  return p * k.pow2();
}

template <class V>
inline V vsigmoid(V x) {
  const V one = V::splat(1.f), zero = V::splat(0.f);
  const V s = (one + exp_approx(zero - x)).recip();
  // Saturated exactly as 1 / (1 + e^-x) is in IEEE arithmetic at x = -inf and +inf (0 and 1;
  // exp_approx stops at e^88 and AVX2's recip(1) is 1 - 2^-24): a gate of 0, or 1 - z, times
  // an infinite state is then NaN as in the reference, not a huge finite number. 1 from
  // x = 17 on is also float32's rounding of the true value. NaN fails both compares: kept.
  return V::select_lt(x, V::splat(-88.f), zero, V::select_lt(V::splat(17.f), x, one, s));
}

template <class V>
inline V vtanh(V x) {
  const V one = V::splat(1.f);
  x = V::min(V::max(x, V::splat(-9.f)), V::splat(9.f));
  const V t = x * x;
  V p = V::splat(1.3355216e-8f);
  p = V::fmadd(p, t, V::splat(2.0609483e-5f));
  p = V::fmadd(p, t, V::splat(3.4956124e-3f));
  p = V::fmadd(p, t, V::splat(1.3381046e-1f));
  p = V::fmadd(p, t, one);
  V q = V::splat(7.7767857e-7f);
  q = V::fmadd(q, t, V::splat(3.2856746e-4f));
  q = V::fmadd(q, t, V::splat(2.5877075e-2f));
  q = V::fmadd(q, t, V::splat(4.6714363e-1f));
  q = V::fmadd(q, t, one);
  const V y = x * p * q.recip();
  return V::min(V::max(y, V::splat(-1.f)), one);
}

template <class V>
inline V act(V x, int64_t code) {
  switch (code) {
    case kRelu: return V::max(x, V::splat(0.f));
    case kSigmoid: return vsigmoid(x);
    case kTanh: return vtanh(x);
    case kHardSigmoid:
      return V::min(V::max(x + V::splat(3.f), V::splat(0.f)), V::splat(6.f)) * V::splat(1.f / 6.f);
    default: return x;  // kLinear (the bindings reject every other code)
  }
}

// act'(x) from y = act(x).
template <class V>
inline V dact(V y, int64_t code) {
  const V zero = V::splat(0.f), one = V::splat(1.f);
  switch (code) {
    case kRelu: return V::select_lt(zero, y, one, zero);
    case kSigmoid: return y * (one - y);
    case kTanh: return one - y * y;
    case kHardSigmoid:
      return V::select_lt(zero, y, V::select_lt(y, one, V::splat(1.f / 6.f), zero), zero);
    default: return one;
  }
}

// The GRU's new state z h_prev + (1 - z) hh, written so (not hh + z (h_prev - hh)) that an
// infinite candidate gives an infinite state, not inf - inf = NaN.
template <class V>
inline V blend(V z, V h_prev, V hh) {
  return V::fmadd(z, h_prev, (V::splat(1.f) - z) * hh);
}

// Activation policies: a (the activation), ra (the recurrent activation) and their derivatives
// from outputs, da and dra.
struct AnyActs {
  int64_t act, rec_act;
  template <class V> V a(V x) const { return ::fk::rnn::act(x, act); }
  template <class V> V ra(V x) const { return ::fk::rnn::act(x, rec_act); }
  template <class V> V da(V y) const { return dact(y, act); }
  template <class V> V dra(V y) const { return dact(y, rec_act); }
};
struct TanhSigmoid {
  template <class V> V a(V x) const { return vtanh(x); }
  template <class V> V ra(V x) const { return vsigmoid(x); }
  template <class V> V da(V y) const { return V::splat(1.f) - y * y; }
  template <class V> V dra(V y) const { return y * (V::splat(1.f) - y); }
};

// Calls fn(policy) with the compile-time policy for (tanh, sigmoid), else the run-time one.
template <class Fn>
inline void with_acts(int64_t act, int64_t rec_act, Fn&& fn) {
  if (act == kTanh && rec_act == kSigmoid)
    fn(TanhSigmoid());
  else
    fn(AnyActs{act, rec_act});
}

// Runs body<V>(j, jj) over the units [j0, j0 + w) in steps of V::kWidth, then the tail with
// Scalar (jj = j - j0).
template <class V, class Body>
inline void for_units(int64_t j0, int64_t w, Body&& body) {
  int64_t jj = 0;
  if (V::kWidth > 1)
    for (; jj + V::kWidth <= w; jj += V::kWidth) body(V(), j0 + jj, jj);
  for (; jj < w; ++jj) body(Scalar(), j0 + jj, jj);
}

template <class V>
void lstm_forward(float* g, const float* z, const float* c_prev, float* c, float* h,
                  float* h_copy, int64_t U, int64_t j0, int64_t w, int64_t a, int64_t ra) {
  with_acts(a, ra, [&](auto p) {
    for_units<V>(j0, w, [&](auto tag, int64_t j, int64_t jj) {
      using W = decltype(tag);
      const W i = p.ra(W::load(z + jj));
      const W f = p.ra(W::load(z + w + jj));
      const W cc = p.a(W::load(z + 2 * w + jj));
      const W o = p.ra(W::load(z + 3 * w + jj));
      const W cn = W::fmadd(f, W::load(c_prev + j), i * cc);
      const W hn = o * p.a(cn);
      if (g) {
        i.store(g + j);
        f.store(g + U + j);
        cc.store(g + 2 * U + j);
        o.store(g + 3 * U + j);
      }
      cn.store(c + j);
      hn.store(h + j);
      if (h_copy) hn.store(h_copy + j);
    });
  });
}

template <class V>
void lstm_backward(float* dz, float* dc, const float* dh, const float* dhs, const float* g,
                   const float* c, const float* c_prev, int64_t U, int64_t j0, int64_t w,
                   int64_t a, int64_t ra) {
  with_acts(a, ra, [&](auto p) {
    for_units<V>(j0, w, [&](auto tag, int64_t j, int64_t jj) {
      using W = decltype(tag);
      (void)jj;
      W dht = W::load(dh + j);
      if (dhs) dht = dht + W::load(dhs + j);
      const W i = W::load(g + j), f = W::load(g + U + j);
      const W cc = W::load(g + 2 * U + j), o = W::load(g + 3 * U + j);
      const W tc = p.a(W::load(c + j));
      const W dct = W::fmadd(dht * o, p.da(tc), W::load(dc + j));
      (dct * cc * p.dra(i)).store(dz + j);
      (dct * W::load(c_prev + j) * p.dra(f)).store(dz + U + j);
      (dct * i * p.da(cc)).store(dz + 2 * U + j);
      (dht * tc * p.dra(o)).store(dz + 3 * U + j);
      (dct * f).store(dc + j);
    });
  });
}

template <class V>
void gru_forward_ra(float* g, float* hproj, const float* rec, const float* h_prev, float* h,
                    int64_t U, int64_t j0, int64_t w, int64_t a, int64_t ra) {
  with_acts(a, ra, [&](auto p) {
    for_units<V>(j0, w, [&](auto tag, int64_t j, int64_t jj) {
      using W = decltype(tag);
      const W z = p.ra(W::load(g + j) + W::load(rec + jj));
      const W r = p.ra(W::load(g + U + j) + W::load(rec + w + jj));
      const W rh = W::load(rec + 2 * w + jj);
      const W hh = p.a(W::fmadd(r, rh, W::load(g + 2 * U + j)));
      const W hp = W::load(h_prev + j);
      z.store(g + j);
      r.store(g + U + j);
      hh.store(g + 2 * U + j);
      rh.store(hproj + j);
      blend(z, hp, hh).store(h + j);
    });
  });
}

template <class V>
void gru_forward_zr(float* g, float* rh, const float* rec, const float* h_prev, int64_t U,
                    int64_t j0, int64_t w, int64_t ra) {
  with_acts(kTanh, ra, [&](auto p) {
    for_units<V>(j0, w, [&](auto tag, int64_t j, int64_t jj) {
      using W = decltype(tag);
      const W z = p.ra(W::load(g + j) + W::load(rec + jj));
      const W r = p.ra(W::load(g + U + j) + W::load(rec + w + jj));
      z.store(g + j);
      r.store(g + U + j);
      (r * W::load(h_prev + j)).store(rh + j);
    });
  });
}

template <class V>
void gru_forward_h(float* g, float* h, const float* hproj, const float* h_prev, int64_t U,
                   int64_t j0, int64_t w, int64_t a) {
  with_acts(a, kSigmoid, [&](auto p) {
    for_units<V>(j0, w, [&](auto tag, int64_t j, int64_t jj) {
      using W = decltype(tag);
      (void)jj;
      const W hh = p.a(W::load(g + 2 * U + j) + W::load(hproj + j));
      const W z = W::load(g + j);
      hh.store(g + 2 * U + j);
      blend(z, W::load(h_prev + j), hh).store(h + j);
    });
  });
}

template <class V>
void gru_backward_ra(float* drp, float* dxh, float* dh, const float* dhs, const float* g,
                     const float* hproj, const float* h_prev, int64_t U, int64_t j0, int64_t w,
                     int64_t a, int64_t ra) {
  with_acts(a, ra, [&](auto p) {
    for_units<V>(j0, w, [&](auto tag, int64_t j, int64_t jj) {
      using W = decltype(tag);
      (void)jj;
      W dht = W::load(dh + j);
      if (dhs) dht = dht + W::load(dhs + j);
      const W z = W::load(g + j), r = W::load(g + U + j), hh = W::load(g + 2 * U + j);
      const W dz = dht * (W::load(h_prev + j) - hh) * p.dra(z);
      const W dhh = dht * (W::splat(1.f) - z) * p.da(hh);
      const W dr = dhh * W::load(hproj + j) * p.dra(r);
      dz.store(drp + j);
      dr.store(drp + U + j);
      (dhh * r).store(drp + 2 * U + j);
      dhh.store(dxh + j);
      (dht * z).store(dh + j);
    });
  });
}

template <class V>
void gru_backward_zh(float* dxp, float* dh, const float* dhs, const float* g, const float* h_prev,
                     int64_t U, int64_t j0, int64_t w, int64_t a, int64_t ra) {
  with_acts(a, ra, [&](auto p) {
    for_units<V>(j0, w, [&](auto tag, int64_t j, int64_t jj) {
      using W = decltype(tag);
      (void)jj;
      W dht = W::load(dh + j);
      if (dhs) dht = dht + W::load(dhs + j);
      const W z = W::load(g + j), hh = W::load(g + 2 * U + j);
      (dht * (W::load(h_prev + j) - hh) * p.dra(z)).store(dxp + j);
      (dht * (W::splat(1.f) - z) * p.da(hh)).store(dxp + 2 * U + j);
      (dht * z).store(dh + j);
    });
  });
}

template <class V>
void gru_backward_r(float* dxp, float* dh, float* rh, const float* drh, const float* g,
                    const float* h_prev, int64_t U, int64_t j0, int64_t w, int64_t ra) {
  with_acts(kTanh, ra, [&](auto p) {
    for_units<V>(j0, w, [&](auto tag, int64_t j, int64_t jj) {
      using W = decltype(tag);
      (void)jj;
      const W d = W::load(drh + j), r = W::load(g + U + j), hp = W::load(h_prev + j);
      (d * hp * p.dra(r)).store(dxp + U + j);
      W::fmadd(d, r, W::load(dh + j)).store(dh + j);
      if (rh) (r * hp).store(rh + j);
    });
  });
}

template <class V>
void activation(float* y, float* y_copy, int64_t n, int64_t a) {
  with_acts(a, kSigmoid, [&](auto p) {
    for_units<V>(0, n, [&](auto tag, int64_t j, int64_t jj) {
      using W = decltype(tag);
      (void)jj;
      const W v = p.a(W::load(y + j));
      v.store(y + j);
      if (y_copy) v.store(y_copy + j);
    });
  });
}

template <class V>
void simple_backward(float* dz, const float* dh, const float* dhs, const float* h, int64_t n,
                     int64_t a) {
  with_acts(a, kSigmoid, [&](auto p) {
    for_units<V>(0, n, [&](auto tag, int64_t j, int64_t jj) {
      using W = decltype(tag);
      (void)jj;
      W d = W::load(dh + j);
      if (dhs) d = d + W::load(dhs + j);
      (d * p.da(W::load(h + j))).store(dz + j);
    });
  });
}

template <class V>
GateKernels make_gate_kernels() {
  GateKernels k;
  k.lstm_forward = &lstm_forward<V>;
  k.lstm_backward = &lstm_backward<V>;
  k.gru_forward_ra = &gru_forward_ra<V>;
  k.gru_forward_zr = &gru_forward_zr<V>;
  k.gru_forward_h = &gru_forward_h<V>;
  k.gru_backward_ra = &gru_backward_ra<V>;
  k.gru_backward_zh = &gru_backward_zh<V>;
  k.gru_backward_r = &gru_backward_r<V>;
  k.activation = &activation<V>;
  k.simple_backward = &simple_backward<V>;
  return k;
}

}  // namespace
}  // namespace rnn
}  // namespace fk
