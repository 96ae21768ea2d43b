// gates_impl.h: the elementwise math of the recurrent kernels, written once over a vector type.
//
// Included by exactly one translation unit per ISA (gates.cpp, gates_avx2.cpp, gates_avx512.cpp),
// each of which first defines, inside an anonymous namespace in fk::rnn, its vector type
// with the primitives listed below; everything here is in that anonymous namespace too, so the
// three copies never meet at link time. Tails (units past the last full vector) run through
// `Scalar`, which uses the C library's exp and tanh.
//
// Vector primitives a Vec provides: kWidth; static load, splat, fmadd (a * b + c), min, max,
// select_lt (a < b ? x : y), copysign (magnitude, sign); member store, abs, round (to nearest),
// pow2 (2^k for an integer-valued k in [-126, 127]) and recip (1 / x to within ~2 ulp: a
// hardware estimate refined by one Newton step, several times cheaper than a division);
// operators + - *.
//
// Accuracy of the vector path: exp by Cody-Waite reduction to |r| <= ln2 / 2 and a degree-7
// Taylor polynomial (relative error < 1e-7 before rounding); sigmoid = 1 / (1 + exp(-x));
// tanh = x * odd Taylor polynomial for |x| < 0.25 (no cancellation near 0), else
// sign(x) * (1 - 2 / (exp(2|x|) + 1)). Every activation has a relative error of a few ulp.
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
  static Scalar min(Scalar a, Scalar b) { return {std::fmin(a.v, b.v)}; }
  static Scalar max(Scalar a, Scalar b) { return {std::fmax(a.v, b.v)}; }
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
  V p = V::splat(1.f / 5040.f);
  p = V::fmadd(p, r, V::splat(1.f / 720.f));
  p = V::fmadd(p, r, V::splat(1.f / 120.f));
  p = V::fmadd(p, r, V::splat(1.f / 24.f));
  p = V::fmadd(p, r, V::splat(1.f / 6.f));
  p = V::fmadd(p, r, V::splat(0.5f));
  p = V::fmadd(p, r, V::splat(1.f));
  p = V::fmadd(p, r, V::splat(1.f));
  return p * k.pow2();
}

template <class V>
inline V vsigmoid(V x) {
  const V one = V::splat(1.f);
  return (one + exp_approx(V::splat(0.f) - x)).recip();
}

template <class V>
inline V vtanh(V x) {
  const V one = V::splat(1.f);
  const V a = x.abs();
  // |x| >= 0.25: 1 - 2 / (e^{2|x|} + 1) loses at most a couple of bits to cancellation.
  const V big = one - V::splat(2.f) * (exp_approx(a + a) + one).recip();
  // |x| < 0.25: tanh x = x (1 - x^2/3 + 2x^4/15 - 17x^6/315 + 62x^8/2835), error < 1e-8.
  const V x2 = x * x;
  V p = V::splat(62.f / 2835.f);
  p = V::fmadd(p, x2, V::splat(-17.f / 315.f));
  p = V::fmadd(p, x2, V::splat(2.f / 15.f));
  p = V::fmadd(p, x2, V::splat(-1.f / 3.f));
  p = V::fmadd(p, x2, one);
  return V::select_lt(a, V::splat(0.25f), x * p, V::copysign(big, x));
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
void lstm_forward(float* g, const float* rec, const float* c_prev, float* c, float* h, int64_t U,
                  int64_t j0, int64_t w, int64_t a, int64_t ra) {
  for_units<V>(j0, w, [&](auto tag, int64_t j, int64_t jj) {
    using W = decltype(tag);
    const W i = act(W::load(g + j) + W::load(rec + jj), ra);
    const W f = act(W::load(g + U + j) + W::load(rec + w + jj), ra);
    const W cc = act(W::load(g + 2 * U + j) + W::load(rec + 2 * w + jj), a);
    const W o = act(W::load(g + 3 * U + j) + W::load(rec + 3 * w + jj), ra);
    const W cn = W::fmadd(f, W::load(c_prev + j), i * cc);
    i.store(g + j);
    f.store(g + U + j);
    cc.store(g + 2 * U + j);
    o.store(g + 3 * U + j);
    cn.store(c + j);
    (o * act(cn, a)).store(h + j);
  });
}

template <class V>
void lstm_backward(float* dz, float* dc, const float* dh, const float* dhs, const float* g,
                   const float* c, const float* c_prev, int64_t U, int64_t j0, int64_t w,
                   int64_t a, int64_t ra) {
  for_units<V>(j0, w, [&](auto tag, int64_t j, int64_t jj) {
    using W = decltype(tag);
    (void)jj;
    W dht = W::load(dh + j);
    if (dhs) dht = dht + W::load(dhs + j);
    const W i = W::load(g + j), f = W::load(g + U + j);
    const W cc = W::load(g + 2 * U + j), o = W::load(g + 3 * U + j);
    const W tc = act(W::load(c + j), a);
    const W dct = W::fmadd(dht * o, dact(tc, a), W::load(dc + j));
    (dct * cc * dact(i, ra)).store(dz + j);
    (dct * W::load(c_prev + j) * dact(f, ra)).store(dz + U + j);
    (dct * i * dact(cc, a)).store(dz + 2 * U + j);
    (dht * tc * dact(o, ra)).store(dz + 3 * U + j);
    (dct * f).store(dc + j);
  });
}

template <class V>
void gru_forward_ra(float* g, float* hproj, const float* rec, const float* h_prev, float* h,
                    int64_t U, int64_t j0, int64_t w, int64_t a, int64_t ra) {
  for_units<V>(j0, w, [&](auto tag, int64_t j, int64_t jj) {
    using W = decltype(tag);
    const W z = act(W::load(g + j) + W::load(rec + jj), ra);
    const W r = act(W::load(g + U + j) + W::load(rec + w + jj), ra);
    const W rh = W::load(rec + 2 * w + jj);
    const W hh = act(W::fmadd(r, rh, W::load(g + 2 * U + j)), a);
    const W hp = W::load(h_prev + j);
    z.store(g + j);
    r.store(g + U + j);
    hh.store(g + 2 * U + j);
    rh.store(hproj + j);
    W::fmadd(z, hp - hh, hh).store(h + j);
  });
}

template <class V>
void gru_forward_zr(float* g, float* rh, const float* rec, const float* h_prev, int64_t U,
                    int64_t j0, int64_t w, int64_t ra) {
  for_units<V>(j0, w, [&](auto tag, int64_t j, int64_t jj) {
    using W = decltype(tag);
    const W z = act(W::load(g + j) + W::load(rec + jj), ra);
    const W r = act(W::load(g + U + j) + W::load(rec + w + jj), ra);
    z.store(g + j);
    r.store(g + U + j);
    (r * W::load(h_prev + j)).store(rh + j);
  });
}

template <class V>
void gru_forward_h(float* g, float* h, const float* hproj, const float* h_prev, int64_t U,
                   int64_t j0, int64_t w, int64_t a) {
  for_units<V>(j0, w, [&](auto tag, int64_t j, int64_t jj) {
    using W = decltype(tag);
    (void)jj;
    const W hh = act(W::load(g + 2 * U + j) + W::load(hproj + j), a);
    const W z = W::load(g + j);
    hh.store(g + 2 * U + j);
    W::fmadd(z, W::load(h_prev + j) - hh, hh).store(h + j);
  });
}

template <class V>
void gru_backward_ra(float* drp, float* dxh, float* dh, const float* dhs, const float* g,
                     const float* hproj, const float* h_prev, int64_t U, int64_t j0, int64_t w,
                     int64_t a, int64_t ra) {
  for_units<V>(j0, w, [&](auto tag, int64_t j, int64_t jj) {
    using W = decltype(tag);
    (void)jj;
    W dht = W::load(dh + j);
    if (dhs) dht = dht + W::load(dhs + j);
    const W z = W::load(g + j), r = W::load(g + U + j), hh = W::load(g + 2 * U + j);
    const W dz = dht * (W::load(h_prev + j) - hh) * dact(z, ra);
    const W dhh = dht * (W::splat(1.f) - z) * dact(hh, a);
    const W dr = dhh * W::load(hproj + j) * dact(r, ra);
    dz.store(drp + j);
    dr.store(drp + U + j);
    (dhh * r).store(drp + 2 * U + j);
    dhh.store(dxh + j);
    (dht * z).store(dh + j);
  });
}

template <class V>
void gru_backward_zh(float* dxp, float* dh, const float* dhs, const float* g, const float* h_prev,
                     int64_t U, int64_t j0, int64_t w, int64_t a, int64_t ra) {
  for_units<V>(j0, w, [&](auto tag, int64_t j, int64_t jj) {
    using W = decltype(tag);
    (void)jj;
    W dht = W::load(dh + j);
    if (dhs) dht = dht + W::load(dhs + j);
    const W z = W::load(g + j), hh = W::load(g + 2 * U + j);
    (dht * (W::load(h_prev + j) - hh) * dact(z, ra)).store(dxp + j);
    (dht * (W::splat(1.f) - z) * dact(hh, a)).store(dxp + 2 * U + j);
    (dht * z).store(dh + j);
  });
}

template <class V>
void gru_backward_r(float* dxp, float* dh, float* rh, const float* drh, const float* g,
                    const float* h_prev, int64_t U, int64_t j0, int64_t w, int64_t ra) {
  for_units<V>(j0, w, [&](auto tag, int64_t j, int64_t jj) {
    using W = decltype(tag);
    (void)jj;
    const W d = W::load(drh + j), r = W::load(g + U + j), hp = W::load(h_prev + j);
    (d * hp * dact(r, ra)).store(dxp + U + j);
    W::fmadd(d, r, W::load(dh + j)).store(dh + j);
    if (rh) (r * hp).store(rh + j);
  });
}

template <class V>
void activation(float* y, int64_t n, int64_t a) {
  for_units<V>(0, n, [&](auto tag, int64_t j, int64_t jj) {
    using W = decltype(tag);
    (void)jj;
    act(W::load(y + j), a).store(y + j);
  });
}

template <class V>
void simple_backward(float* dz, const float* dh, const float* dhs, const float* h, int64_t n,
                     int64_t a) {
  for_units<V>(0, n, [&](auto tag, int64_t j, int64_t jj) {
    using W = decltype(tag);
    (void)jj;
    W d = W::load(dh + j);
    if (dhs) d = d + W::load(dhs + j);
    (d * dact(W::load(h + j), a)).store(dz + j);
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
