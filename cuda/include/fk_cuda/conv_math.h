// conv_math.h: index maps of the CUDA convolution and pooling kernels (NHWC activations,
// (R, S, C/groups, K) filters, as fkeras._C): the implicit-GEMM view of conv2d
//   rows  = (n, p, q) output positions (N*P*Q), cols = k output channels (K),
//   depth = (r, s, c) filter taps of one group (R*S*C/groups),
// input row h = p * stride + r * dil - pad (zero outside [0, H)), the inverse map used by the
// input gradient, and the tile loaders of the three tiled implicit-GEMM kernels. Compiled for
// the device (cuda/kernels/conv.cu) and for the host (cuda/host/conv.cpp, which emulates the
// kernels' tile walk for tests/cuda/test_conv_math_host.py).
#pragma once

#include <stdint.h>

#include "fk_cuda/hd.h"
#include "fk_cuda/tile_math.h"

namespace fk_cuda {
namespace conv_math {

struct Geom {
  int64_t N, H, W, C, K, R, S, P, Q, stride_h, stride_w, dil_h, dil_w, pad_top, pad_left, groups;
};

struct Pos3 { int64_t a, b, c; };

// GEMM row -> (n, p, q); (n, p, q) -> row.
FK_HD Pos3 row_to_npq(int64_t row, const Geom& g) {
  const int64_t q = row % g.Q, t = row / g.Q;
  return {t / g.P, t % g.P, q};
}
FK_HD int64_t npq_to_row(int64_t n, int64_t p, int64_t q, const Geom& g) {
  return (n * g.P + p) * g.Q + q;
}
// GEMM depth index -> (r, s, c) with c within the group (C / groups channels).
FK_HD Pos3 depth_to_rsc(int64_t kk, const Geom& g) {
  const int64_t cg = g.C / g.groups;
  const int64_t c = kk % cg, t = kk / cg;
  return {t / g.S, t % g.S, c};
}
FK_HD int64_t depth_size(const Geom& g) { return g.R * g.S * (g.C / g.groups); }
// Group of output channel k.
FK_HD int64_t group_of(int64_t k, const Geom& g) { return k / (g.K / g.groups); }
// Input coordinate read by output coordinate o at tap t along one axis.
FK_HD int64_t in_coord(int64_t o, int64_t t, int64_t stride, int64_t dil, int64_t pad) {
  return o * stride + t * dil - pad;
}
FK_HD bool in_range(int64_t v, int64_t n) { return v >= 0 && v < n; }
// Inverse along one axis: the output coordinate o with in_coord(o, t) == i, if any.
FK_HD bool out_coord(int64_t i, int64_t t, int64_t stride, int64_t dil, int64_t pad, int64_t O,
                     int64_t* o) {
  const int64_t num = i + pad - t * dil;
  if (num < 0 || num % stride != 0) return false;
  *o = num / stride;
  return *o < O;
}
FK_HD int64_t x_offset(int64_t n, int64_t h, int64_t w, int64_t c, const Geom& g) {
  return ((n * g.H + h) * g.W + w) * g.C + c;
}
FK_HD int64_t y_offset(int64_t n, int64_t p, int64_t q, int64_t k, const Geom& g) {
  return ((n * g.P + p) * g.Q + q) * g.K + k;
}
// Filter offset of tap (r, s), in-group channel c, output channel k.
FK_HD int64_t w_offset(int64_t r, int64_t s, int64_t c, int64_t k, const Geom& g) {
  return ((r * g.S + s) * (g.C / g.groups) + c) * g.K + k;
}
// Implicit-GEMM operand A[row, kk] of the forward conv for output channel group grp: the input
// element, or nothing (zero padding) when out of range. Returns the offset or -1.
FK_HD int64_t a_offset(int64_t row, int64_t kk, int64_t grp, const Geom& g) {
  const Pos3 o = row_to_npq(row, g);
  const Pos3 t = depth_to_rsc(kk, g);
  const int64_t h = in_coord(o.b, t.a, g.stride_h, g.dil_h, g.pad_top);
  const int64_t w = in_coord(o.c, t.b, g.stride_w, g.dil_w, g.pad_left);
  if (!in_range(h, g.H) || !in_range(w, g.W)) return -1;
  return x_offset(o.a, h, w, grp * (g.C / g.groups) + t.c, g);
}

// ---------------------------------------------------------------------------------------------
// Tiled implicit GEMMs (cuda/kernels/conv.cu). Each conv kernel is one GEMM per group walked in
// the block tiles of tile_math.h; the tile loaders below say, for thread t of a block, which
// memory offsets its A and B quads read at the k-step whose first depth index is k0 (-1: the
// element is zero, i.e. padding or past the matrix edge). Nothing is materialised: A is
// gathered from x (or dy) through these maps.
//   forward:         y[(n,p,q), k]  = sum_(r,s,c)   x[n, p*sh+r*dh-pt, q*sw+s*dw-pl, c] w[r,s,c,k]
//                    M = N*P*Q rows, N = K/groups cols, depth R*S*C/groups.
//   input gradient:  dx[(n,h,w), c] = sum_(r,s,k)   dy[n, p, q, k] w[r,s,c,k]
//                    with h = p*sh + r*dh - pt (a tap counts only when p is an integer in
//                    [0, P), likewise q), M = N*H*W, N = C/groups, depth R*S*K/groups.
//   weight gradient: dw[(r,s,c), k] = sum_(n,p,q)   x[n, h, w, c] dy[n, p, q, k]
//                    M = R*S*C/groups, N = K/groups, depth N*P*Q, cut into `splits` chunks of
//                    `chunk` (a multiple of kTileK) summed by a second pass in a fixed order.
// Coordinates are 32-bit (tile_fits_int32 holds, checked by the bindings); element offsets and
// the row / reduction indices N*P*Q, N*H*W are 64-bit.
// ---------------------------------------------------------------------------------------------

// Geom plus the derived sizes, computed once on the host (a kernel reads them from its
// parameters instead of dividing per thread).
struct TileGeom {
  Geom g;
  int64_t cg, kg;  // input / output channels per group
};
FK_HD TileGeom tile_geom(const Geom& g) { return {g, g.C / g.groups, g.K / g.groups}; }

// Whether every coordinate the tile loaders form fits in int32 (sizes, padded extents and the
// depths of the forward and input-gradient GEMMs).
FK_HD bool tile_fits_int32(const Geom& g) {
  const int64_t lim = 2147483647LL - 1024;  // room for tile overhangs
  const int64_t v[] = {g.N, g.H, g.W, g.C, g.K, g.R, g.S, g.P, g.Q, g.stride_h, g.stride_w,
                       g.dil_h, g.dil_w, g.pad_top, g.pad_left, g.groups};
  for (int64_t x : v)
    if (x > lim) return false;
  if (g.P * g.stride_h + g.R * g.dil_h + g.H + g.pad_top > lim) return false;
  if (g.Q * g.stride_w + g.S * g.dil_w + g.W + g.pad_left > lim) return false;
  return g.R * g.S * g.C <= lim && g.R * g.S * g.K <= lim;
}

// The weight gradient's reduction index N*P*Q must fit in int32 too (im_row32).
FK_HD bool wgrad_fits_int32(const Geom& g) { return g.N * g.P * g.Q <= 2147483647LL - 1024; }

// GEMM extents of one group.
struct GemmDims { int64_t M, N, D; };
FK_HD GemmDims fwd_dims(const TileGeom& t) {
  return {t.g.N * t.g.P * t.g.Q, t.kg, t.g.R * t.g.S * t.cg};
}
// (input gradient: rows of its largest stride phase, whose rows start at 0; depth of all taps)
FK_HD GemmDims dgrad_dims(const TileGeom& t) {
  const Geom& g = t.g;
  return {g.N * ((g.H + g.stride_h - 1) / g.stride_h) * ((g.W + g.stride_w - 1) / g.stride_w),
          t.cg, g.R * g.S * t.kg};
}
FK_HD GemmDims wgrad_dims(const TileGeom& t) {
  return {t.g.R * t.g.S * t.cg, t.kg, t.g.N * t.g.P * t.g.Q};
}

// The 4 offsets one thread reads for one quad; vec: they are consecutive (one 16-byte load
// when the address is aligned).
struct Gather { int64_t off[4]; bool vec; };

FK_HD void finish_gather(Gather& q) {
  q.vec = q.off[0] >= 0 && q.off[1] == q.off[0] + 1 && q.off[2] == q.off[0] + 2 &&
          q.off[3] == q.off[0] + 3;
}

// 32-bit quotient / remainder (a >= 0, b >= 1).
FK_HD int32_t udiv32(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) / static_cast<uint32_t>(b));
}

// Tap of a depth index kk = (r * S + s) * inner + i (inner: C/groups or K/groups), kk < 2^31.
struct Tap { int32_t r, s, i; };
FK_HD Tap split_tap(int64_t kk, int64_t S, int64_t inner) {
  const int32_t k = static_cast<int32_t>(kk), in = static_cast<int32_t>(inner);
  const int32_t a = udiv32(k, in), b = udiv32(a, static_cast<int32_t>(S));
  return {b, a - b * static_cast<int32_t>(S), k - a * in};
}
// The tap of kk + 1.
FK_HD void next_tap(Tap& t, int64_t S, int64_t inner) {
  if (++t.i == inner) {
    t.i = 0;
    if (++t.s == S) { t.s = 0; ++t.r; }
  }
}

// Output position `row` = (n, p, q) of the forward GEMM, as the start of its input window:
// base = offset of x[n, 0, 0, grp * C/groups], (h0, w0) = input coordinates of tap (0, 0).
// base < 0: the row is past the end (reads zero).
struct ImRow { int64_t base; int32_t h0, w0; };
FK_HD ImRow im_row(int64_t row, int64_t grp, const TileGeom& t) {
  const Geom& g = t.g;
  if (row < 0 || row >= g.N * g.P * g.Q) return {-1, 0, 0};
  const tile_math::QR a = tile_math::qdiv(row, g.Q), b = tile_math::qdiv(a.q, g.P);
  return {b.q * g.H * g.W * g.C + grp * t.cg,
          static_cast<int32_t>(b.r * g.stride_h - g.pad_top),
          static_cast<int32_t>(a.r * g.stride_w - g.pad_left)};
}
// im_row for row < N*P*Q < 2^32 (wgrad_fits_int32), with 32-bit divisions: the weight
// gradient decomposes a new row every k-step, and the 64-bit path costs it registers.
FK_HD ImRow im_row32(uint32_t row, int64_t grp, const TileGeom& t) {
  const Geom& g = t.g;
  const uint32_t Q = static_cast<uint32_t>(g.Q), P = static_cast<uint32_t>(g.P);
  const uint32_t a = row / Q, n = a / P;
  return {static_cast<int64_t>(n) * g.H * g.W * g.C + grp * t.cg,
          static_cast<int32_t>((a - n * P) * g.stride_h - g.pad_top),
          static_cast<int32_t>((row - a * Q) * g.stride_w - g.pad_left)};
}
// im2col quad: A[row, kk0 + e] (e = 0..3) of the forward GEMM, tp the tap of kk0, D the depth.
FK_HD Gather im_quad(const ImRow& o, Tap tp, int64_t kk0, int64_t D, const TileGeom& t) {
  const Geom& g = t.g;
  Gather q;
  for (int e = 0; e < 4; ++e) {
    q.off[e] = -1;
    if (o.base >= 0 && kk0 + e < D) {
      const int32_t h = o.h0 + tp.r * static_cast<int32_t>(g.dil_h);
      const int32_t w = o.w0 + tp.s * static_cast<int32_t>(g.dil_w);
      if (in_range(h, g.H) && in_range(w, g.W))
        q.off[e] = o.base + (static_cast<int64_t>(h) * g.W + w) * g.C + tp.i;
    }
    next_tap(tp, g.S, t.cg);
  }
  finish_gather(q);
  return q;
}

// Forward tile loader. A quads are contiguous along the depth (k-major; thread row t/2, depth
// (t%2)*4..+3), B quads along the output channels (m-major: depth t/32, cols (t%32)*4..+3).
struct ConvFwdTile {
  static constexpr bool kAKMajor = true, kBKMajor = false;
  ImRow a_row;
  int32_t b_col, grp, a_k, b_k;
  FK_HD ConvFwdTile(const TileGeom& tg, int64_t row0, int64_t col0, int64_t grp_ /*job z*/,
                    int64_t /*kend*/, int t)
      : a_row(im_row(row0 + tile_math::kmajor_slot(t, 0).m, grp_, tg)),
        b_col(static_cast<int32_t>(col0) + tile_math::mmajor_slot(t, 0).m),
        grp(static_cast<int32_t>(grp_)), a_k(tile_math::kmajor_slot(t, 0).k),
        b_k(tile_math::mmajor_slot(t, 0).k) {}
  FK_HD Gather a(int64_t k0, const TileGeom& tg) const {
    const int64_t kk0 = k0 + a_k;
    return im_quad(a_row, split_tap(kk0, tg.g.S, tg.cg), kk0, tg.g.R * tg.g.S * tg.cg, tg);
  }
  FK_HD Gather b(int64_t k0, const TileGeom& tg) const {
    const int64_t kk = k0 + b_k;
    const bool row_ok = kk < tg.g.R * tg.g.S * tg.cg;
    const int64_t base = kk * tg.g.K + grp * tg.kg + b_col;
    Gather q;
    for (int e = 0; e < 4; ++e) q.off[e] = (row_ok && b_col + e < tg.kg) ? base + e : -1;
    finish_gather(q);
    return q;
  }
};

// Input-gradient stride phases. Whether dx row h receives tap r, (h + pad - r*dil) % stride
// == 0, depends only on h % stride, so the rows split into phases, named by their first
// coordinate f < min(stride, size): h = f + j*stride (j < count). The taps reaching a phase are
// t = t0 + u*tstep (u < ntaps; none when t0 < 0), and row j at tap u reads dy coordinate
// o0 + j - u*ostep. The input gradient runs one GEMM per (group, phase pair): no work on taps
// that never apply (the CPU kernel splits the same way), and a NaN in w reaches only the dx
// elements whose taps read it.
struct AxisPhase { int32_t first, count, t0, tstep, ntaps, o0, ostep; };
FK_HD int32_t gcd32(int32_t a, int32_t b) {
  while (b != 0) {
    const int32_t r = a % b;
    a = b;
    b = r;
  }
  return a;
}
FK_HD int64_t phase_count(int64_t size, int64_t stride) { return size < stride ? size : stride; }
FK_HD AxisPhase axis_phase(int64_t first, int64_t size, int64_t taps, int64_t stride,
                           int64_t dil, int64_t pad) {
  AxisPhase a;
  const int32_t f = static_cast<int32_t>(first), st = static_cast<int32_t>(stride),
                d = static_cast<int32_t>(dil), pd = static_cast<int32_t>(pad);
  a.first = f;
  a.count = static_cast<int32_t>((size - first + stride - 1) / stride);
  a.tstep = st / gcd32(d, st);  // solutions of t*dil == f + pad (mod stride) are tstep apart,
  a.ostep = d / gcd32(d, st);   // so the first lies below min(taps, tstep)
  a.t0 = -1;
  const int32_t lim = static_cast<int32_t>(taps < a.tstep ? taps : a.tstep);
  for (int32_t t = 0; t < lim; ++t)
    if ((f + pd - t * d) % st == 0) { a.t0 = t; break; }
  a.ntaps = a.t0 < 0 ? 0 : static_cast<int32_t>((taps - a.t0 + a.tstep - 1) / a.tstep);
  a.o0 = a.t0 < 0 ? 0 : (f + pd - a.t0 * d) / st;  // exact (possibly negative)
  return a;
}
// Phase of input-gradient job z = grp + groups * (ph_h + phases_h * ph_w).
struct DgradPhase { int64_t grp; AxisPhase h, w; };
FK_HD int64_t dgrad_jobs(const TileGeom& t) {
  return t.g.groups * phase_count(t.g.H, t.g.stride_h) * phase_count(t.g.W, t.g.stride_w);
}
FK_HD DgradPhase dgrad_phase(int64_t z, const TileGeom& t) {
  const Geom& g = t.g;
  const int64_t nph = phase_count(g.H, g.stride_h), ph = z / g.groups;
  return {z % g.groups, axis_phase(ph % nph, g.H, g.R, g.stride_h, g.dil_h, g.pad_top),
          axis_phase(ph / nph, g.W, g.S, g.stride_w, g.dil_w, g.pad_left)};
}
// One phase's GEMM: rows (n, j_h, j_w), cols c of the group, depth (u_h, u_w, k).
FK_HD GemmDims dgrad_phase_dims(const DgradPhase& ph, const TileGeom& t) {
  return {t.g.N * ph.h.count * ph.w.count, t.cg,
          static_cast<int64_t>(ph.h.ntaps) * ph.w.ntaps * t.kg};
}
// The dx rows of job z (what the store needs, without the tap search of dgrad_phase).
struct DgradRows { int64_t grp; int32_t first_h, first_w, count_h, count_w; };
FK_HD DgradRows dgrad_rows(int64_t z, const TileGeom& t) {
  const Geom& g = t.g;
  const int64_t nph = phase_count(g.H, g.stride_h), ph = z / g.groups;
  const int64_t fh = ph % nph, fw = ph / nph;
  return {z % g.groups, static_cast<int32_t>(fh), static_cast<int32_t>(fw),
          static_cast<int32_t>((g.H - fh + g.stride_h - 1) / g.stride_h),
          static_cast<int32_t>((g.W - fw + g.stride_w - 1) / g.stride_w)};
}
// dx offset of phase row i, channel j of the group.
FK_HD int64_t dgrad_out_offset(int64_t i, int64_t j, const DgradRows& rw, const TileGeom& t) {
  const tile_math::QR a = tile_math::qdiv(i, rw.count_w), b = tile_math::qdiv(a.q, rw.count_h);
  const int64_t h = rw.first_h + b.r * t.g.stride_h, w = rw.first_w + a.r * t.g.stride_w;
  return ((b.q * t.g.H + h) * t.g.W + w) * t.g.C + rw.grp * t.cg + j;
}

// Input-gradient tile loader of one phase (job z): A[(n,j_h,j_w), (u_h,u_w,k)] = dy[n, p, q,
// grp*K/groups + k] with p = o0_h + j_h - u_h*ostep_h (zero outside [0, P), likewise q), k-major
// quads along k; B[(u_h,u_w,k), c] = w[t0_h + u_h*tstep_h, t0_w + u_w*tstep_w, c,
// grp*K/groups + k] (k-major quads: col t/2, depth (t%2)*4..+3).
struct ConvDgradTile {
  static constexpr bool kAKMajor = true, kBKMajor = true;
  DgradPhase ph;
  int64_t a_base;      // dy offset of (n, 0, 0, grp*K/groups); < 0: row past the phase's end
  int32_t a_p, a_q;    // dy coordinates of the row at tap (0, 0): o0 + j
  int32_t b_c, q_k;    // q_k: depth of both quads within the k-step
  FK_HD ConvDgradTile(const TileGeom& tg, int64_t row0, int64_t col0, int64_t z,
                      int64_t /*kend*/, int t)
      : ph(dgrad_phase(z, tg)), a_base(-1), a_p(0), a_q(0),
        b_c(static_cast<int32_t>(col0) + tile_math::kmajor_slot(t, 0).m),
        q_k(tile_math::kmajor_slot(t, 0).k) {
    const Geom& g = tg.g;
    const int64_t row = row0 + tile_math::kmajor_slot(t, 0).m;
    if (row < g.N * ph.h.count * ph.w.count) {
      const tile_math::QR a = tile_math::qdiv(row, ph.w.count),
                          b = tile_math::qdiv(a.q, ph.h.count);
      a_base = b.q * g.P * g.Q * g.K + ph.grp * tg.kg;
      a_p = ph.h.o0 + static_cast<int32_t>(b.r);
      a_q = ph.w.o0 + static_cast<int32_t>(a.r);
    }
  }
  FK_HD Gather a(int64_t k0, const TileGeom& tg) const {
    const Geom& g = tg.g;
    const int64_t D = static_cast<int64_t>(ph.h.ntaps) * ph.w.ntaps * tg.kg, kk0 = k0 + q_k;
    Gather q;
    if (kk0 >= D) {  // also every depth of a phase no tap reaches (D == 0)
      for (int e = 0; e < 4; ++e) q.off[e] = -1;
      q.vec = false;
      return q;
    }
    Tap tp = split_tap(kk0, ph.w.ntaps, tg.kg);
    for (int e = 0; e < 4; ++e) {
      const int32_t p = a_p - tp.r * ph.h.ostep, qq = a_q - tp.s * ph.w.ostep;
      q.off[e] = (a_base >= 0 && kk0 + e < D && p >= 0 && qq >= 0 && p < g.P && qq < g.Q)
                     ? a_base + (static_cast<int64_t>(p) * g.Q + qq) * g.K + tp.i
                     : -1;
      next_tap(tp, ph.w.ntaps, tg.kg);
    }
    finish_gather(q);
    return q;
  }
  FK_HD Gather b(int64_t k0, const TileGeom& tg) const {
    const Geom& g = tg.g;
    const int64_t D = static_cast<int64_t>(ph.h.ntaps) * ph.w.ntaps * tg.kg, kk0 = k0 + q_k;
    Gather q;
    if (kk0 >= D) {
      for (int e = 0; e < 4; ++e) q.off[e] = -1;
      q.vec = false;
      return q;
    }
    Tap tp = split_tap(kk0, ph.w.ntaps, tg.kg);
    for (int e = 0; e < 4; ++e) {
      const int32_t r = ph.h.t0 + tp.r * ph.h.tstep, s = ph.w.t0 + tp.s * ph.w.tstep;
      q.off[e] = (b_c < tg.cg && kk0 + e < D)
                     ? ((static_cast<int64_t>(r) * g.S + s) * tg.cg + b_c) * g.K +
                           ph.grp * tg.kg + tp.i
                     : -1;
      next_tap(tp, ph.w.ntaps, tg.kg);
    }
    finish_gather(q);
    return q;
  }
};

// Weight-gradient tile loader over the depth chunk [k0 of the first step, kend): A = im2col^T
// (m-major quads: depth (n,p,q) t/32, taps (t%32)*4..+3, contiguous in c), B = dy (m-major).
// The reduction index l = (n, p, q) is 32-bit here (wgrad_fits_int32), so is kend.
struct ConvWgradTile {
  static constexpr bool kAKMajor = false, kBKMajor = false;
  Tap a_tap;
  int32_t kend, a_m, b_col, grp, l_off;  // l_off: the depth row t/32 of both quads
  FK_HD ConvWgradTile(const TileGeom& tg, int64_t row0, int64_t col0, int64_t z,
                      int64_t kend_, int t)
      : a_tap(split_tap(row0 + tile_math::mmajor_slot(t, 0).m, tg.g.S, tg.cg)),
        kend(static_cast<int32_t>(kend_)),
        a_m(static_cast<int32_t>(row0) + tile_math::mmajor_slot(t, 0).m),
        b_col(static_cast<int32_t>(col0) + tile_math::mmajor_slot(t, 0).m),
        grp(static_cast<int32_t>(z % tg.g.groups)), l_off(tile_math::mmajor_slot(t, 0).k) {}
  FK_HD Gather a(int64_t k0, const TileGeom& tg) const {
    const int32_t l = static_cast<int32_t>(k0) + l_off;
    return im_quad(l < kend ? im_row32(static_cast<uint32_t>(l), grp, tg) : ImRow{-1, 0, 0},
                   a_tap, a_m, tg.g.R * tg.g.S * tg.cg, tg);
  }
  FK_HD Gather b(int64_t k0, const TileGeom& tg) const {
    const int32_t l = static_cast<int32_t>(k0) + l_off;
    const int64_t base = static_cast<int64_t>(l) * tg.g.K + grp * tg.kg + b_col;
    Gather q;
    for (int e = 0; e < 4; ++e) q.off[e] = (l < kend && b_col + e < tg.kg) ? base + e : -1;
    finish_gather(q);
    return q;
  }
};

// Where the GEMM result of group grp goes: element (i, j) (i < M, j < N of its dims) at
// base + i * ld + j of the output.
struct OutMap { int64_t base, ld; };
FK_HD int64_t out_offset(const OutMap& o, int64_t i, int64_t j) { return o.base + i * o.ld + j; }
// y (N*P*Q, K): channel grp*K/groups + j (also the bias index).
FK_HD OutMap fwd_out(int64_t grp, const TileGeom& t) { return {grp * t.kg, t.g.K}; }
// dw (R*S*C/groups, K), or chunk `split`'s partial sums in the (splits, groups, M, N) workspace.
FK_HD OutMap wgrad_out(int64_t split, int64_t grp, bool partial, const TileGeom& t) {
  const int64_t M = t.g.R * t.g.S * t.cg;
  if (partial) return {(split * t.g.groups + grp) * M * t.kg, t.kg};
  return {grp * t.kg, t.g.K};
}

// Split of the weight gradient's reduction over N*P*Q: enough blocks to fill the GPU
// (kWgradTargetBlocks, from the shape only, so a result never depends on the device), each
// chunk at least kWgradMinTiles k-steps; grid.z = splits * groups stays <= 65535.
constexpr int64_t kWgradTargetBlocks = 264, kWgradMinTiles = 32;
struct SplitK { int64_t splits, chunk; };
FK_HD SplitK wgrad_split(const TileGeom& t) {
  const GemmDims d = wgrad_dims(t);
  const int64_t ktiles = (d.D + tile_math::kTileK - 1) / tile_math::kTileK;
  const int64_t tiles = ((d.M + tile_math::kTileM - 1) / tile_math::kTileM) *
                        ((d.N + tile_math::kTileN - 1) / tile_math::kTileN) * t.g.groups;
  int64_t splits = 1;
  if (tiles > 0 && ktiles > 0) {
    splits = (kWgradTargetBlocks + tiles - 1) / tiles;
    const int64_t most = ktiles / kWgradMinTiles, zcap = 65535 / t.g.groups;
    if (splits > most) splits = most;
    if (splits > zcap) splits = zcap;
    if (splits < 1) splits = 1;
  }
  const int64_t chunk_tiles = ktiles > 0 ? (ktiles + splits - 1) / splits : 1;
  splits = ktiles > 0 ? (ktiles + chunk_tiles - 1) / chunk_tiles : 1;
  return {splits, chunk_tiles * tile_math::kTileK};
}
// Floats of workspace the weight gradient needs (0: it writes dw directly).
FK_HD int64_t wgrad_workspace_floats(const TileGeom& t) {
  const SplitK sk = wgrad_split(t);
  const GemmDims d = wgrad_dims(t);
  return sk.splits > 1 ? sk.splits * t.g.groups * d.M * d.N : 0;
}

// The GEMM that job z of a kernel's grid computes (grid.z walks the jobs): rows M, cols N,
// depth range [kbeg, kend). Forward: z = group. Input gradient: z = (group, phase pair).
// Weight gradient: z = group + groups * split.
struct Job { int64_t M, N, kbeg, kend; };
FK_HD Job fwd_job(int64_t /*z*/, const TileGeom& t) {
  const GemmDims d = fwd_dims(t);
  return {d.M, d.N, 0, d.D};
}
FK_HD Job dgrad_job(int64_t z, const TileGeom& t) {
  const GemmDims d = dgrad_phase_dims(dgrad_phase(z, t), t);
  return {d.M, d.N, 0, d.D};
}
FK_HD Job wgrad_job(int64_t z, const SplitK& sk, const TileGeom& t) {
  const GemmDims d = wgrad_dims(t);
  const int64_t kbeg = (z / t.g.groups) * sk.chunk;
  return {d.M, d.N, kbeg, kbeg + sk.chunk < d.D ? kbeg + sk.chunk : d.D};
}

// Pooling window along one axis: taps [t0, t1) in range for output coordinate o.
FK_HD void window(int64_t o, int64_t R, int64_t stride, int64_t pad, int64_t H, int64_t* t0,
                  int64_t* t1) {
  const int64_t start = o * stride - pad;
  *t0 = start < 0 ? -start : 0;
  *t1 = start + R > H ? H - start : R;
}

}  // namespace conv_math
}  // namespace fk_cuda
