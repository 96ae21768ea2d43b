// batchnorm_kernels.h: the block kernels of batchnorm_isa.h, written once over a vector type V.
//
// Included by exactly three translation units (batchnorm.cpp, batchnorm_avx2.cpp,
// batchnorm_avx512.cpp), each compiled with its own ISA flags, after it defines FK_BN_NS (a
// namespace of its own, so the three instantiations never merge at link time) and its V inside
// that namespace. V provides, for F (kF floats) and D (the same kF lanes widened to float64):
//   F load(p), load_n(p, n), set1(a), sub(a, b), add(a, b), mul(a, b), fma(a, b, c) = a * b + c,
//   first_n(v, n), relu(v) = v < 0 ? 0 : v (NaN kept), gate(pre, g) = g * (pre > 0 ? 1 : 0)
//   (a NaN or infinite g stays NaN where the gate is closed, as dy * relu'(x) does);
//   store(p, v), store_n(p, v, n)  (the _n forms touch lanes [0, n) only, n < kF);
//   D widen(F), dzero(), dadd, dsub, dfma(a, b, c) = a * b + c; dload(p), dstore(p, d) (kF
//   doubles), dload_n(p, n), dstore_n(p, d, n); double dsum(d);
//   kURows: column vectors per row block (sized to the register file).
//
// Every block kernel below handles full vectors first, then one masked tail, so any cols / len
// (including those below kF) is exact; masked lanes are loaded as zero and never stored.
#pragma once

#ifndef FK_BN_NS
#error "define FK_BN_NS before including batchnorm_kernels.h"
#endif

#include <algorithm>
#include <cstdint>

#include "batchnorm_isa.h"

namespace fk {
namespace FK_BN_NS {

// ---- rows (channels-last): vectors across columns, accumulators held over all rows ----------

// One block of U vectors of columns (kTail: U == 1 and only `tail` columns are valid).
template <class V, int U, bool kTail>
inline void stats_block(const float* x, int64_t rows, int64_t ld, int tail, const float* shift,
                        double* s1, double* s2) {
  using D = typename V::D;
  D k[U], a1[U], a2[U];
  for (int u = 0; u < U; ++u) {
    k[u] = V::widen(kTail ? V::load_n(shift, tail) : V::load(shift + u * V::kF));
    a1[u] = kTail ? V::dload_n(s1, tail) : V::dload(s1 + u * V::kF);
    a2[u] = kTail ? V::dload_n(s2, tail) : V::dload(s2 + u * V::kF);
  }
  for (int64_t r = 0; r < rows; ++r) {
    const float* p = x + r * ld;
    for (int u = 0; u < U; ++u) {
      const D d = V::dsub(V::widen(kTail ? V::load_n(p, tail) : V::load(p + u * V::kF)), k[u]);
      a1[u] = V::dadd(a1[u], d);
      a2[u] = V::dfma(d, d, a2[u]);
    }
  }
  for (int u = 0; u < U; ++u) {
    if (kTail) {
      V::dstore_n(s1, a1[u], tail);
      V::dstore_n(s2, a2[u], tail);
    } else {
      V::dstore(s1 + u * V::kF, a1[u]);
      V::dstore(s2 + u * V::kF, a2[u]);
    }
  }
}

// kRelu: dy is first gated by the forward's ReLU, recomputed from x: (x - m) * s + t > 0 with
// the same float32 operations as forward_vec, so the mask is the forward's bit for bit.
template <class V, int U, bool kTail, bool kRelu>
inline void reduce_block(const float* dy, const float* x, int64_t rows, int64_t ld, int tail,
                         const float* m, const float* s, const float* t, double* sdy, double* sd,
                         double* sdyd) {
  using D = typename V::D;
  using F = typename V::F;
  D mu[U], ady[U], ad[U], adyd[U];
  F mf[U], sf[U] = {}, tf[U] = {};
  for (int u = 0; u < U; ++u) {
    mf[u] = kTail ? V::load_n(m, tail) : V::load(m + u * V::kF);
    if (kRelu) {
      sf[u] = kTail ? V::load_n(s, tail) : V::load(s + u * V::kF);
      tf[u] = kTail ? V::load_n(t, tail) : V::load(t + u * V::kF);
    }
    mu[u] = V::widen(mf[u]);
    ady[u] = kTail ? V::dload_n(sdy, tail) : V::dload(sdy + u * V::kF);
    ad[u] = kTail ? V::dload_n(sd, tail) : V::dload(sd + u * V::kF);
    adyd[u] = kTail ? V::dload_n(sdyd, tail) : V::dload(sdyd + u * V::kF);
  }
  for (int64_t r = 0; r < rows; ++r) {
    const float* px = x + r * ld;
    const float* pdy = dy + r * ld;
    for (int u = 0; u < U; ++u) {
      const F xv = kTail ? V::load_n(px, tail) : V::load(px + u * V::kF);
      F gv = kTail ? V::load_n(pdy, tail) : V::load(pdy + u * V::kF);
      if (kRelu) gv = V::gate(V::fma(V::sub(xv, mf[u]), sf[u], tf[u]), gv);
      const D g = V::widen(gv);
      const D d = V::dsub(V::widen(xv), mu[u]);
      ady[u] = V::dadd(ady[u], g);
      ad[u] = V::dadd(ad[u], d);
      adyd[u] = V::dfma(g, d, adyd[u]);
    }
  }
  for (int u = 0; u < U; ++u) {
    if (kTail) {
      V::dstore_n(sdy, ady[u], tail);
      V::dstore_n(sd, ad[u], tail);
      V::dstore_n(sdyd, adyd[u], tail);
    } else {
      V::dstore(sdy + u * V::kF, ady[u]);
      V::dstore(sd + u * V::kF, ad[u]);
      V::dstore(sdyd + u * V::kF, adyd[u]);
    }
  }
}

template <int U, bool kTailBlock>
struct Block {
  static constexpr int kU = U;
  static constexpr bool kTail = kTailBlock;
};

// Visits a (rows, cols) tile in slabs of rows of about 16 KiB, so that every column block of a
// slab re-reads it from L1 (the accumulators go through memory once per slab), and each slab in
// column blocks: kURows vectors, then single vectors, then the masked tail.
// fn(Block<U, kTail>, first row, row count, first column, tail lanes).
template <class V, class Fn>
inline void for_blocks(int64_t rows, int64_t cols, Fn&& fn) {
  constexpr int64_t kWide = V::kF * V::kURows;
  const int64_t slab = cols <= kWide ? rows : std::max<int64_t>(1, 4096 / cols);
  for (int64_t r = 0; r < rows; r += slab) {
    const int64_t nr = std::min(slab, rows - r);
    int64_t j = 0;
    for (; j + kWide <= cols; j += kWide) fn(Block<V::kURows, false>{}, r, nr, j, 0);
    for (; j + V::kF <= cols; j += V::kF) fn(Block<1, false>{}, r, nr, j, 0);
    if (j < cols) fn(Block<1, true>{}, r, nr, j, static_cast<int>(cols - j));
  }
}

// The rows-mode reductions (batchnorm_isa.h) ACCUMULATE into their outputs (the caller zeroes
// them).
template <class V>
void rows_stats(const float* x, int64_t rows, int64_t cols, int64_t ld, const float* shift,
                double* s1, double* s2) {
  for_blocks<V>(rows, cols, [&](auto b, int64_t r, int64_t nr, int64_t j, int tail) {
    using B = decltype(b);
    stats_block<V, B::kU, B::kTail>(x + r * ld + j, nr, ld, tail, shift + j, s1 + j, s2 + j);
  });
}

template <class V, bool kRelu>
void rows_reduce_impl(const float* dy, const float* x, int64_t rows, int64_t cols, int64_t ld,
                      const float* m, const float* s, const float* t, double* sdy, double* sd,
                      double* sdyd) {
  for_blocks<V>(rows, cols, [&](auto b, int64_t r, int64_t nr, int64_t j, int tail) {
    using B = decltype(b);
    reduce_block<V, B::kU, B::kTail, kRelu>(dy + r * ld + j, x + r * ld + j, nr, ld, tail,
                                            m + j, kRelu ? s + j : s, kRelu ? t + j : t,
                                            sdy + j, sd + j, sdyd + j);
  });
}

template <class V>
void rows_reduce(const float* dy, const float* x, int64_t rows, int64_t cols, int64_t ld,
                 const float* m, double* sdy, double* sd, double* sdyd) {
  rows_reduce_impl<V, false>(dy, x, rows, cols, ld, m, nullptr, nullptr, sdy, sd, sdyd);
}

template <class V>
void rows_reduce_relu(const float* dy, const float* x, int64_t rows, int64_t cols, int64_t ld,
                      const float* m, const float* s, const float* t, double* sdy, double* sd,
                      double* sdyd) {
  rows_reduce_impl<V, true>(dy, x, rows, cols, ld, m, s, t, sdy, sd, sdyd);
}

// The apply passes stream row by row over all columns (loads and stores in address order, which
// the store prefetcher needs); the per-column coefficients come from L1 with each vector.
// forward_vec is the one expression of the forward's pre-activation: the backward's ReLU mask
// repeats it exactly.
template <class V>
inline typename V::F forward_vec(typename V::F x, typename V::F m, typename V::F s,
                                 typename V::F t) {
  return V::fma(V::sub(x, m), s, t);
}

template <class V, bool kRelu>
void rows_forward_impl(float* y, const float* x, int64_t rows, int64_t cols, int64_t ld,
                       const float* m, const float* s, const float* t) {
  const int64_t full = cols - cols % V::kF;
  const int tail = static_cast<int>(cols - full);
  for (int64_t r = 0; r < rows; ++r) {
    const float* px = x + r * ld;
    float* py = y + r * ld;
    for (int64_t j = 0; j < full; j += V::kF) {
      const auto v = forward_vec<V>(V::load(px + j), V::load(m + j), V::load(s + j),
                                    V::load(t + j));
      V::store(py + j, kRelu ? V::relu(v) : v);
    }
    if (tail) {
      const int64_t j = full;
      const auto v = forward_vec<V>(V::load_n(px + j, tail), V::load_n(m + j, tail),
                                    V::load_n(s + j, tail), V::load_n(t + j, tail));
      V::store_n(py + j, kRelu ? V::relu(v) : v, tail);
    }
  }
}

template <class V>
void rows_forward(float* y, const float* x, int64_t rows, int64_t cols, int64_t ld,
                  const float* m, const float* s, const float* t) {
  rows_forward_impl<V, false>(y, x, rows, cols, ld, m, s, t);
}

template <class V>
void rows_forward_relu(float* y, const float* x, int64_t rows, int64_t cols, int64_t ld,
                       const float* m, const float* s, const float* t) {
  rows_forward_impl<V, true>(y, x, rows, cols, ld, m, s, t);
}

template <class V, bool kRelu>
void rows_backward_impl(float* dx, const float* dy, const float* x, int64_t rows, int64_t cols,
                        int64_t ld, const float* m, const float* a, const float* b,
                        const float* c, const float* s, const float* t) {
  const int64_t full = cols - cols % V::kF;
  const int tail = static_cast<int>(cols - full);
  for (int64_t r = 0; r < rows; ++r) {
    const float* px = x + r * ld;
    const float* pg = dy + r * ld;
    float* q = dx + r * ld;
    for (int64_t j = 0; j < full; j += V::kF) {
      const auto xv = V::load(px + j), mv = V::load(m + j);
      auto g = V::load(pg + j);
      if (kRelu) g = V::gate(forward_vec<V>(xv, mv, V::load(s + j), V::load(t + j)), g);
      const auto d = V::sub(xv, mv);
      V::store(q + j, V::mul(V::load(a + j), V::add(g, V::fma(V::load(b + j), d, V::load(c + j)))));
    }
    if (tail) {
      const int64_t j = full;
      const auto xv = V::load_n(px + j, tail), mv = V::load_n(m + j, tail);
      auto g = V::load_n(pg + j, tail);
      if (kRelu)
        g = V::gate(forward_vec<V>(xv, mv, V::load_n(s + j, tail), V::load_n(t + j, tail)), g);
      const auto d = V::sub(xv, mv);
      const auto v = V::mul(V::load_n(a + j, tail),
                            V::add(g, V::fma(V::load_n(b + j, tail), d, V::load_n(c + j, tail))));
      V::store_n(q + j, v, tail);
    }
  }
}

template <class V>
void rows_backward(float* dx, const float* dy, const float* x, int64_t rows, int64_t cols,
                   int64_t ld, const float* m, const float* a, const float* b, const float* c) {
  rows_backward_impl<V, false>(dx, dy, x, rows, cols, ld, m, a, b, c, nullptr, nullptr);
}

template <class V>
void rows_backward_relu(float* dx, const float* dy, const float* x, int64_t rows, int64_t cols,
                        int64_t ld, const float* m, const float* a, const float* b,
                        const float* c, const float* s, const float* t) {
  rows_backward_impl<V, true>(dx, dy, x, rows, cols, ld, m, a, b, c, s, t);
}

// ---- plane (channels-first): vectors along each run, two accumulator sets for latency -------

template <class V>
void plane_stats(const float* x, int64_t rows, int64_t len, int64_t stride, float shift,
                 double* out) {
  using D = typename V::D;
  const auto ks = V::set1(shift);
  const D k = V::widen(ks);
  D a1[2] = {V::dzero(), V::dzero()}, a2[2] = {V::dzero(), V::dzero()};
  for (int64_t r = 0; r < rows; ++r) {
    const float* p = x + r * stride;
    int64_t i = 0;
    for (; i + 2 * V::kF <= len; i += 2 * V::kF) {
      const D d0 = V::dsub(V::widen(V::load(p + i)), k);
      const D d1 = V::dsub(V::widen(V::load(p + i + V::kF)), k);
      a1[0] = V::dadd(a1[0], d0);
      a2[0] = V::dfma(d0, d0, a2[0]);
      a1[1] = V::dadd(a1[1], d1);
      a2[1] = V::dfma(d1, d1, a2[1]);
    }
    for (; i + V::kF <= len; i += V::kF) {
      const D d = V::dsub(V::widen(V::load(p + i)), k);
      a1[0] = V::dadd(a1[0], d);
      a2[0] = V::dfma(d, d, a2[0]);
    }
    if (i < len) {
      const int n = static_cast<int>(len - i);
      const D d = V::dsub(V::widen(V::load_n(p + i, n)), V::widen(V::first_n(ks, n)));
      a1[1] = V::dadd(a1[1], d);
      a2[1] = V::dfma(d, d, a2[1]);
    }
  }
  out[0] = V::dsum(V::dadd(a1[0], a1[1]));
  out[1] = V::dsum(V::dadd(a2[0], a2[1]));
}

template <class V, bool kRelu>
void plane_reduce_impl(const float* dy, const float* x, int64_t rows, int64_t len,
                       int64_t stride, float m, float s, float t, double* out) {
  using D = typename V::D;
  using F = typename V::F;
  const F ms = V::set1(m), vs = V::set1(s), vt = V::set1(t);
  const D mu = V::widen(ms);
  D ady[2] = {V::dzero(), V::dzero()}, ad[2] = {V::dzero(), V::dzero()};
  D adyd[2] = {V::dzero(), V::dzero()};
  // g gated by the forward's ReLU when kRelu (see reduce_block); d = x - m in float64.
  auto step = [&](int k, F gv, F xv, const D& d) {
    if (kRelu) gv = V::gate(forward_vec<V>(xv, ms, vs, vt), gv);
    const D g = V::widen(gv);
    ady[k] = V::dadd(ady[k], g);
    ad[k] = V::dadd(ad[k], d);
    adyd[k] = V::dfma(g, d, adyd[k]);
  };
  for (int64_t r = 0; r < rows; ++r) {
    const float* px = x + r * stride;
    const float* pg = dy + r * stride;
    int64_t i = 0;
    for (; i + 2 * V::kF <= len; i += 2 * V::kF) {
      const F x0 = V::load(px + i), x1 = V::load(px + i + V::kF);
      step(0, V::load(pg + i), x0, V::dsub(V::widen(x0), mu));
      step(1, V::load(pg + i + V::kF), x1, V::dsub(V::widen(x1), mu));
    }
    for (; i + V::kF <= len; i += V::kF) {
      const F x0 = V::load(px + i);
      step(0, V::load(pg + i), x0, V::dsub(V::widen(x0), mu));
    }
    if (i < len) {
      const int n = static_cast<int>(len - i);
      const F x0 = V::load_n(px + i, n);
      step(1, V::load_n(pg + i, n), x0, V::dsub(V::widen(x0), V::widen(V::first_n(ms, n))));
    }
  }
  out[0] = V::dsum(V::dadd(ady[0], ady[1]));
  out[1] = V::dsum(V::dadd(ad[0], ad[1]));
  out[2] = V::dsum(V::dadd(adyd[0], adyd[1]));
}

template <class V>
void plane_reduce(const float* dy, const float* x, int64_t rows, int64_t len, int64_t stride,
                  float m, double* out) {
  plane_reduce_impl<V, false>(dy, x, rows, len, stride, m, 0.f, 0.f, out);
}

template <class V>
void plane_reduce_relu(const float* dy, const float* x, int64_t rows, int64_t len,
                       int64_t stride, float m, float s, float t, double* out) {
  plane_reduce_impl<V, true>(dy, x, rows, len, stride, m, s, t, out);
}

template <class V, bool kRelu>
void plane_forward_impl(float* y, const float* x, int64_t rows, int64_t len, int64_t stride,
                        float m, float s, float t) {
  const auto vm = V::set1(m), vs = V::set1(s), vt = V::set1(t);
  for (int64_t r = 0; r < rows; ++r) {
    const float* p = x + r * stride;
    float* q = y + r * stride;
    int64_t i = 0;
    for (; i + V::kF <= len; i += V::kF) {
      const auto v = forward_vec<V>(V::load(p + i), vm, vs, vt);
      V::store(q + i, kRelu ? V::relu(v) : v);
    }
    if (i < len) {
      const int n = static_cast<int>(len - i);
      const auto v = forward_vec<V>(V::load_n(p + i, n), vm, vs, vt);
      V::store_n(q + i, kRelu ? V::relu(v) : v, n);
    }
  }
}

template <class V>
void plane_forward(float* y, const float* x, int64_t rows, int64_t len, int64_t stride, float m,
                   float s, float t) {
  plane_forward_impl<V, false>(y, x, rows, len, stride, m, s, t);
}

template <class V>
void plane_forward_relu(float* y, const float* x, int64_t rows, int64_t len, int64_t stride,
                        float m, float s, float t) {
  plane_forward_impl<V, true>(y, x, rows, len, stride, m, s, t);
}

template <class V, bool kRelu>
void plane_backward_impl(float* dx, const float* dy, const float* x, int64_t rows, int64_t len,
                         int64_t stride, float m, float a, float b, float c, float s, float t) {
  const auto vm = V::set1(m), va = V::set1(a), vb = V::set1(b), vc = V::set1(c);
  const auto vs = V::set1(s), vt = V::set1(t);
  for (int64_t r = 0; r < rows; ++r) {
    const float* px = x + r * stride;
    const float* pg = dy + r * stride;
    float* q = dx + r * stride;
    int64_t i = 0;
    for (; i + V::kF <= len; i += V::kF) {
      const auto xv = V::load(px + i);
      auto g = V::load(pg + i);
      if (kRelu) g = V::gate(forward_vec<V>(xv, vm, vs, vt), g);
      V::store(q + i, V::mul(va, V::add(g, V::fma(vb, V::sub(xv, vm), vc))));
    }
    if (i < len) {
      const int n = static_cast<int>(len - i);
      const auto xv = V::load_n(px + i, n);
      auto g = V::load_n(pg + i, n);
      if (kRelu) g = V::gate(forward_vec<V>(xv, vm, vs, vt), g);
      V::store_n(q + i, V::mul(va, V::add(g, V::fma(vb, V::sub(xv, vm), vc))), n);
    }
  }
}

template <class V>
void plane_backward(float* dx, const float* dy, const float* x, int64_t rows, int64_t len,
                    int64_t stride, float m, float a, float b, float c) {
  plane_backward_impl<V, false>(dx, dy, x, rows, len, stride, m, a, b, c, 0.f, 0.f);
}

template <class V>
void plane_backward_relu(float* dx, const float* dy, const float* x, int64_t rows, int64_t len,
                         int64_t stride, float m, float a, float b, float c, float s, float t) {
  plane_backward_impl<V, true>(dx, dy, x, rows, len, stride, m, a, b, c, s, t);
}

template <class V>
constexpr bn::BlockKernels make_block_kernels() {
  return bn::BlockKernels{&rows_stats<V>,        &rows_reduce<V>,        &rows_forward<V>,
                          &rows_backward<V>,      &plane_stats<V>,        &plane_reduce<V>,
                          &plane_forward<V>,      &plane_backward<V>,     &rows_reduce_relu<V>,
                          &rows_forward_relu<V>,  &rows_backward_relu<V>, &plane_reduce_relu<V>,
                          &plane_forward_relu<V>, &plane_backward_relu<V>};
}

}  // namespace FK_BN_NS
}  // namespace fk
