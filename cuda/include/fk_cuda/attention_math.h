// attention_math.h: the per-thread work of the CUDA fused attention (cuda/kernels/attention.cu),
// FK_HD so that fkeras._C_cuda_host (cuda/host/attention.cpp) runs the very same code over the
// same tiles on the CPU for tests/cuda/test_attention_math_host.py.
//
// Contract (kernels.h, cpp/attention/): q (N, Tq, heads, D), k (N, Tk, kv_heads, D),
// v (N, Tk, kv_heads, Dv), out / dout (N, Tq, heads, Dv), lse (N, heads, Tq); query head h reads
// kv head h / (heads / kv_heads). Key j is visible from query i when j < Tk, the mask (here
// int32, nonzero = visible, (mask_batch, mask_heads, Tq, Tk)) holds there and, if causal,
// j <= i. z is dropout_forward's factor of element (n, h, i, j) of the (N, heads, Tq, Tk)
// probabilities (fk_cuda/dropout_math.h: bit-equal to the CPU's draws).
//
// The GPU gives every thread one row: a query row in the forward and dq kernels, a key in the
// dk/dv kernel. A thread's own rows (q, the output accumulator, ...) live in shared memory with
// an odd stride (bank-conflict free); the tiles all threads read (kBk keys, kBq query rows) are
// broadcast reads. So no cross-thread reduction exists anywhere: each row's online softmax is
// one thread's sequential loop, deterministic by construction.
//   forward_tile: one kBk-key tile of FlashAttention's online softmax for one query row:
//     s = scale q.k (invisible: -inf), m' = max(m, max s) (a NaN wins), alpha = exp(m - m'),
//     p = exp(s - m'), l = l alpha + sum p, o = o alpha + sum (p z) v  (as attention.inc).
//   dq_tile: ds = scale p (dp z - delta) with p = exp(s - lse), dp = dout.v, delta = dout.out;
//     dq += ds k.
//   dkv_rows: for one key and 4 query rows of a tile: dk += ds q, dv += p z dout.
// A row with no visible key attends uniformly to all Tk keys (Keras's large-negative fill),
// saves lse -inf and passes no gradient to q or k (dv_j += z_ij / Tk dout_i).
#pragma once

#include <math.h>

#include <cstdint>

#include "fk_cuda/dropout_math.h"
#include "fk_cuda/hd.h"

// Unrolls the loops over a tile's kBk keys (held in registers) under both compilers.
#if defined(__CUDACC__)
#define FK_ATTN_UNROLL _Pragma("unroll")
#else
#define FK_ATTN_UNROLL _Pragma("GCC unroll 16")
#endif

namespace fk_cuda {
namespace attn {

constexpr int kRows = 64;  // threads per block: query rows (forward, dq) or keys (dk/dv)
constexpr int kBk = 16;    // keys per shared tile (forward, dq)
constexpr int kBq = 16;    // query rows per shared tile (dk/dv)
static_assert(kBk % 4 == 0 && kBq % 4 == 0, "tiles are read as 16-byte vectors");
// Head sizes D, Dv must stay below this (the bindings check it): tiles and row blocks are then
// indexed in 32 bits, and one block's working set (kRows rows) below 2^31 floats.
constexpr int64_t kMaxHead = int64_t{1} << 24;

struct Problem {
  int64_t N, Tq, Tk, heads, kv_heads, D, Dv;
  const int32_t* mask;  // [opt] (mask_batch, mask_heads, Tq, Tk), nonzero = visible
  int64_t mask_batch, mask_heads;
  bool causal;
  float scale;
  bool dropout;  // rate > 0
  DropoutParams drop;
};

FK_HD float neg_inf() { return -INFINITY; }

// An odd row stride >= x: the rows of a warp's 32 threads then start in 32 different banks.
FK_HD int64_t odd_ld(int64_t x) { return x | 1; }

FK_HD const int32_t* mask_rows(const Problem& p, int64_t n, int64_t h) {
  if (!p.mask) return nullptr;
  const int64_t mb = p.mask_batch == 1 ? 0 : n, mh = p.mask_heads == 1 ? 0 : h;
  return p.mask + (mb * p.mask_heads + mh) * p.Tq * p.Tk;
}

FK_HD bool visible(const Problem& p, const int32_t* mrows, int64_t i, int64_t j) {
  if (j >= p.Tk || (p.causal && j > i)) return false;
  return !mrows || mrows[i * p.Tk + j] != 0;
}

// Whether query row i sees at least one key.
FK_HD bool row_visible(const Problem& p, const int32_t* mrows, int64_t i) {
  const int64_t end = p.causal ? (i + 1 < p.Tk ? i + 1 : p.Tk) : p.Tk;
  if (!mrows) return end > 0;
  for (int64_t j = 0; j < end; ++j)
    if (mrows[i * p.Tk + j] != 0) return true;
  return false;
}

FK_HD float drop_factor(const Problem& p, int64_t n, int64_t h, int64_t i, int64_t j) {
  if (!p.dropout) return 1.f;
  const uint64_t e = static_cast<uint64_t>(((n * p.heads + h) * p.Tq + i) * p.Tk + j);
  return dropout_mask_value(e, p.drop);
}

// The last key any query row of [r0, r0 + rows) sees, plus one (causal: the tile's last row).
FK_HD int64_t key_end(const Problem& p, int64_t r0, int64_t rows) {
  if (!p.causal) return p.Tk;
  return r0 + rows < p.Tk ? r0 + rows : p.Tk;
}

// max where a NaN in the new value wins (the CPU's row_max / m update).
FK_HD float nan_max(float m, float x) { return (x > m || x != x) ? x : m; }

// The kBk values of one column d of a transposed tile (kt + d * kBk): four 16-byte broadcast
// loads from shared memory on the GPU (the tile is 16-byte aligned, kBk a multiple of 4).
FK_HD void tile_column(float (&dst)[kBk], const float* src) {
#if defined(__CUDA_ARCH__)
  const float4* s4 = reinterpret_cast<const float4*>(src);
FK_ATTN_UNROLL
  for (int k = 0; k < kBk / 4; ++k) {
    const float4 x = s4[k];
    dst[4 * k] = x.x;
    dst[4 * k + 1] = x.y;
    dst[4 * k + 2] = x.z;
    dst[4 * k + 3] = x.w;
  }
#else
  for (int c = 0; c < kBk; ++c) dst[c] = src[c];
#endif
}

struct RowState {
  float m, l;  // running max and sum of exp(s - m)
};

FK_HD RowState row_start() { return RowState{neg_inf(), 0.f}; }

// One tile of kBk keys from j0 for query row i: q (D); kt (D, kBk) and vt (Dv, kBk) the keys'
// k and v rows TRANSPOSED (zero past Tk, 16-byte aligned); o (Dv) the unnormalised output.
FK_HD void forward_tile(RowState& st, float* o, const float* q, const float* kt, const float* vt,
                        const Problem& p, const int32_t* mrows, int64_t n, int64_t h, int64_t i,
                        int64_t j0) {
  float s[kBk];
FK_ATTN_UNROLL
  for (int c = 0; c < kBk; ++c) s[c] = 0.f;
  for (int64_t d = 0; d < p.D; ++d) {
    const float qd = q[d];
    float kc[kBk];
    tile_column(kc, kt + d * kBk);
FK_ATTN_UNROLL
    for (int c = 0; c < kBk; ++c) s[c] = fmaf(qd, kc[c], s[c]);
  }
  float bmax = neg_inf();
FK_ATTN_UNROLL
  for (int c = 0; c < kBk; ++c) {
    s[c] = visible(p, mrows, i, j0 + c) ? s[c] * p.scale : neg_inf();
    bmax = nan_max(bmax, s[c]);
  }
  const float mnew = nan_max(st.m, bmax);
  if (mnew == neg_inf()) return;  // nothing visible yet
  const float alpha = st.m == neg_inf() ? 0.f : expf(st.m - mnew);
  float sum = 0.f;
FK_ATTN_UNROLL
  for (int c = 0; c < kBk; ++c) {
    const float e = expf(s[c] - mnew);
    sum += e;
    s[c] = p.dropout && j0 + c < p.Tk ? e * drop_factor(p, n, h, i, j0 + c) : e;
  }
  st.l = st.l * alpha + sum;
  st.m = mnew;
  for (int64_t d = 0; d < p.Dv; ++d) {
    float vc[kBk];
    tile_column(vc, vt + d * kBk);
    float acc = alpha != 1.f ? o[d] * alpha : o[d];
FK_ATTN_UNROLL
    for (int c = 0; c < kBk; ++c) acc = fmaf(s[c], vc[c], acc);
    o[d] = acc;
  }
}

// The row's end: o /= l in place; returns lse = m + log(l). For a row without any visible key
// (uniform == true) o must already hold sum_j z_j v_j (uniform_add); it is divided by Tk.
FK_HD float forward_finish(const RowState& st, float* o, const Problem& p, bool uniform) {
  if (uniform) {
    const float inv = p.Tk > 0 ? 1.0f / static_cast<float>(p.Tk) : 0.0f;
    for (int64_t d = 0; d < p.Dv; ++d) o[d] *= inv;
    return neg_inf();
  }
  const float inv = 1.0f / st.l;
  for (int64_t d = 0; d < p.Dv; ++d) o[d] *= inv;
  return st.m + logf(st.l);
}

// o (Dv) += z_ij v_j for one key j (the uniform row's sum; v_j a row of v in global memory).
FK_HD void uniform_add(float* o, const float* vj, float z, int64_t Dv) {
  for (int64_t d = 0; d < Dv; ++d) o[d] += z * vj[d];
}

// Whether row i is a uniform row: no visible key and nothing else made m finite.
FK_HD bool is_uniform(const RowState& st, const Problem& p, const int32_t* mrows, int64_t i) {
  return st.m == neg_inf() && !row_visible(p, mrows, i);
}

// delta_i = dout_i . out_i, in float, d ascending (as attention.inc).
FK_HD float row_delta(const float* dout, const float* out, int64_t Dv) {
  float acc = 0.f;
  for (int64_t d = 0; d < Dv; ++d) acc += dout[d] * out[d];
  return acc;
}

// dq (D) += sum over the tile's keys of ds k, for query row i with lse != -inf; kt, vt as
// forward_tile's.
FK_HD void dq_tile(float* dq, const float* q, const float* dout, float lse, float delta,
                   const float* kt, const float* vt, const Problem& p, const int32_t* mrows,
                   int64_t n, int64_t h, int64_t i, int64_t j0) {
  float s[kBk], dp[kBk];
FK_ATTN_UNROLL
  for (int c = 0; c < kBk; ++c) s[c] = dp[c] = 0.f;
  for (int64_t d = 0; d < p.D; ++d) {
    const float qd = q[d];
    float kc[kBk];
    tile_column(kc, kt + d * kBk);
FK_ATTN_UNROLL
    for (int c = 0; c < kBk; ++c) s[c] = fmaf(qd, kc[c], s[c]);
  }
  for (int64_t d = 0; d < p.Dv; ++d) {
    const float gd = dout[d];
    float vc[kBk];
    tile_column(vc, vt + d * kBk);
FK_ATTN_UNROLL
    for (int c = 0; c < kBk; ++c) dp[c] = fmaf(gd, vc[c], dp[c]);
  }
FK_ATTN_UNROLL
  for (int c = 0; c < kBk; ++c) {
    const bool vis = visible(p, mrows, i, j0 + c);
    const float x = vis ? s[c] * p.scale : neg_inf();
    const float pij = expf(x - lse);
    const float z = p.dropout && j0 + c < p.Tk ? drop_factor(p, n, h, i, j0 + c) : 1.f;
    const float ds = p.scale * pij * (dp[c] * z - delta);
    s[c] = x != neg_inf() ? ds : 0.f;
  }
  for (int64_t d = 0; d < p.D; ++d) {
    float kc[kBk];
    tile_column(kc, kt + d * kBk);
    float acc = dq[d];
FK_ATTN_UNROLL
    for (int c = 0; c < kBk; ++c) acc = fmaf(s[c], kc[c], acc);
    dq[d] = acc;
  }
}

// The 4 values of rows [4g, 4g + 4) in column d of a transposed query tile (src = tile + d *
// kBq + 4g): one 16-byte broadcast load on the GPU.
FK_HD void tile_quad(float (&dst)[4], const float* src) {
#if defined(__CUDA_ARCH__)
  const float4 x = *reinterpret_cast<const float4*>(src);
  dst[0] = x.x;
  dst[1] = x.y;
  dst[2] = x.z;
  dst[3] = x.w;
#else
  for (int r = 0; r < 4; ++r) dst[r] = src[r];
#endif
}

// Key j's dk (D) and dv (Dv) from the query rows i0 .. i0 + nr - 1 (nr <= 4) of a query tile:
// qt (D, kBq) and gt (Dv, kBq) the tile's q and dout rows TRANSPOSED, offset to the first row
// (rows past the tile's end are zero); lse, delta, uniform (4) those rows' values; k, v the key's
// rows. A row with lse -inf adds nothing, unless it is a uniform row: then dv += z / Tk dout.
FK_HD void dkv_rows(float* dk, float* dv, const float* k, const float* v, const float* qt,
                    const float* gt, const float* lse, const float* delta, const float* uniform,
                    int nr, const Problem& p, const int32_t* mrows, int64_t n, int64_t h,
                    int64_t i0, int64_t j) {
  float s[4] = {0.f, 0.f, 0.f, 0.f}, dp[4] = {0.f, 0.f, 0.f, 0.f}, x4[4];
  for (int64_t d = 0; d < p.D; ++d) {
    const float kd = k[d];
    tile_quad(x4, qt + d * kBq);
FK_ATTN_UNROLL
    for (int r = 0; r < 4; ++r) s[r] = fmaf(x4[r], kd, s[r]);
  }
  for (int64_t d = 0; d < p.Dv; ++d) {
    const float vd = v[d];
    tile_quad(x4, gt + d * kBq);
FK_ATTN_UNROLL
    for (int r = 0; r < 4; ++r) dp[r] = fmaf(x4[r], vd, dp[r]);
  }
  float ds[4], pz[4];
FK_ATTN_UNROLL
  for (int r = 0; r < 4; ++r) {
    ds[r] = pz[r] = 0.f;
    if (r >= nr) continue;
    const int64_t i = i0 + r;
    const float z = p.dropout ? drop_factor(p, n, h, i, j) : 1.f;
    if (lse[r] == neg_inf()) {
      if (uniform[r] != 0.f) pz[r] = z * (1.0f / static_cast<float>(p.Tk));
      continue;
    }
    const float x = visible(p, mrows, i, j) ? s[r] * p.scale : neg_inf();
    const float pij = expf(x - lse[r]);
    ds[r] = x != neg_inf() ? p.scale * pij * (dp[r] * z - delta[r]) : 0.f;
    pz[r] = pij * z;
  }
  for (int64_t d = 0; d < p.D; ++d) {
    tile_quad(x4, qt + d * kBq);
    float acc = dk[d];
FK_ATTN_UNROLL
    for (int r = 0; r < 4; ++r) acc = fmaf(ds[r], x4[r], acc);
    dk[d] = acc;
  }
  for (int64_t d = 0; d < p.Dv; ++d) {
    tile_quad(x4, gt + d * kBq);
    float acc = dv[d];
FK_ATTN_UNROLL
    for (int r = 0; r < 4; ++r) acc = fmaf(pz[r], x4[r], acc);
    dv[d] = acc;
  }
}

// Floats of one block's working set (shared memory, or its slice of a global scratch buffer),
// rounded up to whole 16-byte vectors so that every block's slice stays aligned.
FK_HD int64_t round4(int64_t x) { return (x + 3) / 4 * 4; }
FK_HD int64_t forward_floats(int64_t D, int64_t Dv) {
  return round4(kBk * (D + Dv) + kRows * (odd_ld(D) + odd_ld(Dv)));
}
FK_HD int64_t dq_floats(int64_t D, int64_t Dv) {
  return round4(kBk * (D + Dv) + kRows * (2 * odd_ld(D) + odd_ld(Dv)));
}
FK_HD int64_t dkv_floats(int64_t D, int64_t Dv) {
  return round4(kBq * (D + Dv) + 3 * kBq + kRows * (2 * odd_ld(D) + 2 * odd_ld(Dv)));
}

}  // namespace attn
}  // namespace fk_cuda
