// batchnorm.cpp: batch normalization over a tensor viewed as (outer, C, inner) (kernels.h).
//
// Layouts: x, y, dy, dx (outer, C, inner) row-major float32; mean, var, inv_std, gamma, beta,
// dgamma, dbeta (C). channels_last (N, H, W, C) is (N*H*W, C, 1); channels_first (N, C, H, W)
// is (N, C, H*W). Every output is overwritten.
//
// Saved state: the forward (train) writes mean (C) and inv_std (C) = 1 / sqrt(var + eps); the
// backward reads them with x. var (C) is the biased batch variance (for the moving average).
// An empty batch (outer * inner == 0) gives mean 0, var 0 and zero dgamma / dbeta.
//
// Passes (see batchnorm_kernels.h for the vector code):
//   forward (train): 1. per-channel float64 sums of (x - k) and (x - k)^2, k = the channel's
//                       first sample (shifted data: the cancellation in E[d^2] - E[d]^2 is
//                       bounded by (k - mean)^2 <= n * var, so it stays harmless in float64);
//                    2. y = (x - mean_f) * scale + (beta - scale * (mean - mean_f)): mean_f is
//                       the float32 saved mean; x - mean_f is exact when x is near the mean, and
//                       the float64 remainder mean - mean_f folds into the shift, so large-mean /
//                       small-std channels normalize to the float64 answer.
//   backward:        1. float64 sums of dy, d = x - mean_f and dy * d; the exact centring
//                       xc = d - mean(d) removes the float32 rounding of the saved mean;
//                    2. dx = gamma * inv_std * (dy - mean(dy) - xhat * mean(dy * xhat)),
//                       folded into dx = a * (dy + b * (x - mean_f) + c) per channel, the
//                       factor a = gamma * inv_std applied last as in the formula (so that an
//                       infinite gamma gives +/-inf, not inf - inf).
// BN + ReLU (batchnorm_relu_*): the forward's write pass stores max(y, 0) and saves its per-
// channel coefficients scale (C) and shift (C) (y = (x - mean_f) * scale + shift before the
// clamp); the backward recomputes the mask (x - mean_f) * scale + shift > 0 with the same
// float32 operations (bit for bit the forward's, on the same ISA) and gates dy with it in both
// of its passes: g = dy * [mask] replaces dy above. No pass reads y or writes the gated dy.
// BN + ReLU + max pool (batchnorm_relu_maxpool_*, channels last, pool == strides, 'valid'):
// the same statistics, then a write pass that stores only the max pool of max(y, 0) and each
// maximum's window position (PooledWrite); the backward above, its dy built per tile from the
// pooled cotangent and positions (PooledDy). Both use cpp/conv's pool loops (pool_kernels.h).
// Work is split into tiles (rows x columns for inner < 16, runs of one channel otherwise);
// every tile writes its own float64 partial sums, merged in a fixed order, so the results do
// not depend on the thread count.
// Reference: Ioffe & Szegedy 2015 (the backward as in llm.c's layernorm_backward); Chan,
// Golub & LeVeque 1983 for the shifted sums.
#include <algorithm>
#include <cmath>
#include <vector>

#include "fkeras/kernels.h"
#include "fkeras/runtime.h"
#include "../conv/pool_kernels.h"

#define FK_BN_NS bn_scalar
#include "batchnorm_kernels.h"

namespace fk {
namespace bn_scalar {
namespace {

// The portable path: one lane, plain float / double arithmetic.
struct VScalar {
  static constexpr int kF = 1;
  static constexpr int kURows = 4;
  using F = float;
  using D = double;
  static F load(const float* p) { return *p; }
  static F load_n(const float* p, int n) { return n > 0 ? *p : 0.f; }
  static void store(float* p, F v) { *p = v; }
  static void store_n(float* p, F v, int n) {
    if (n > 0) *p = v;
  }
  static F set1(float a) { return a; }
  static F sub(F a, F b) { return a - b; }
  static F fma(F a, F b, F c) { return a * b + c; }
  static F add(F a, F b) { return a + b; }
  static F mul(F a, F b) { return a * b; }
  static F first_n(F v, int n) { return n > 0 ? v : 0.f; }
  static F relu(F v) { return v < 0.f ? 0.f : v; }
  static F gate(F pre, F g) { return g * (pre > 0.f ? 1.f : 0.f); }
  static D widen(F v) { return static_cast<double>(v); }
  static D dzero() { return 0.0; }
  static D dadd(D a, D b) { return a + b; }
  static D dsub(D a, D b) { return a - b; }
  static D dfma(D a, D b, D c) { return a * b + c; }
  static D dload(const double* p) { return *p; }
  static D dload_n(const double* p, int n) { return n > 0 ? *p : 0.0; }
  static void dstore(double* p, D v) { *p = v; }
  static void dstore_n(double* p, D v, int n) {
    if (n > 0) *p = v;
  }
  static double dsum(D v) { return v; }
};

}  // namespace
}  // namespace bn_scalar

namespace bn {
const BlockKernels kScalarKernels = bn_scalar::make_block_kernels<bn_scalar::VScalar>();
}  // namespace bn

namespace {

const bn::BlockKernels& block_kernels() {
  switch (cpu_isa()) {
    case Isa::kAvx512: return bn::kAvx512Kernels;
    case Isa::kAvx2: return bn::kAvx2Kernels;
    default: return bn::kScalarKernels;
  }
}

constexpr int64_t kPlaneMinInner = 16;  // below this, runs are too short to vectorize along
constexpr int64_t kTileElems = 32768;   // elements per tile: 128 KiB of x, several tiles/thread
constexpr int64_t kMaxRowChunks = 64;
constexpr int64_t kMaxPartialDoubles = int64_t{1} << 23;  // 64 MiB of partial sums at most

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The tiling of one (outer, C, inner) view. Rows mode (inner < 16) sees a (outer, W = C*inner)
// matrix: tiles are `a` row chunks by `b` column blocks, and partial sums are (a_count, q, W).
// Plane mode: per channel, `a` blocks of outer by `b` pieces of inner; partial sums are
// (tiles, q), tiles channel-major.
struct Plan {
  bool rows;
  int64_t outer, C, inner, W;
  int64_t a_size, a_count, b_size, b_count;

  int64_t tiles() const { return (rows ? 1 : C) * a_count * b_count; }
  int64_t partial_size(int q) const { return rows ? a_count * q * W : tiles() * q; }
};

Plan make_plan(int64_t outer, int64_t C, int64_t inner) {
  Plan p{inner < kPlaneMinInner, outer, C, inner, C * inner, 0, 0, 0, 0};
  if (p.rows) {
    p.b_size = p.W <= 4096 ? p.W : 1024;
    p.b_count = ceil_div(p.W, p.b_size);
    p.a_size = std::max<int64_t>(1, kTileElems / p.b_size);
    p.a_count = ceil_div(outer, p.a_size);
    const int64_t cap =
        std::max<int64_t>(1, std::min(kMaxRowChunks, kMaxPartialDoubles / (3 * p.W)));
    if (p.a_count > cap) {
      p.a_size = ceil_div(outer, cap);
      p.a_count = ceil_div(outer, p.a_size);
    }
  } else {
    p.b_count = ceil_div(inner, kTileElems);
    p.b_size = ceil_div(ceil_div(inner, p.b_count), 64) * 64;
    p.b_count = ceil_div(inner, p.b_size);
    p.a_size = std::max<int64_t>(1, kTileElems / std::min(inner, p.b_size));
    p.a_count = ceil_div(outer, p.a_size);
  }
  return p;
}

// One tile: rows mode (r0, rows) x (j0, cols) of the (outer, W) matrix; plane mode channel c,
// outer rows [r0, r0 + rows), inner [j0, j0 + cols), starting at element `offset`.
struct Tile {
  int64_t index, chunk, c, r0, rows, j0, cols, offset;
};

Tile tile_at(const Plan& p, int64_t t) {
  Tile k{};
  k.index = t;
  const int64_t per_channel = p.a_count * p.b_count;
  k.c = p.rows ? 0 : t / per_channel;
  const int64_t rest = p.rows ? t : t % per_channel;
  k.chunk = rest / p.b_count;
  const int64_t ib = rest % p.b_count;
  k.r0 = k.chunk * p.a_size;
  k.rows = std::min(p.outer, k.r0 + p.a_size) - k.r0;
  const int64_t extent = p.rows ? p.W : p.inner;
  k.j0 = ib * p.b_size;
  k.cols = std::min(extent, k.j0 + p.b_size) - k.j0;
  k.offset = p.rows ? k.r0 * p.W + k.j0 : (k.r0 * p.C + k.c) * p.inner + k.j0;
  return k;
}

template <class Fn>
void for_tiles(const Plan& p, Fn&& fn) {
  parallel_for(p.tiles(), 1, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) fn(tile_at(p, t));
  });
}

// Per-channel sums (q, C) of the tiles' partial sums, in a fixed order.
std::vector<double> channel_sums(const Plan& p, const std::vector<double>& partial, int q) {
  std::vector<double> out(static_cast<size_t>(q * p.C), 0.0);
  if (p.rows) {
    for (int64_t a = 0; a < p.a_count; ++a)
      for (int k = 0; k < q; ++k) {
        const double* src = partial.data() + (a * q + k) * p.W;
        for (int64_t c = 0; c < p.C; ++c)
          for (int64_t i = 0; i < p.inner; ++i) out[k * p.C + c] += src[c * p.inner + i];
      }
  } else {
    const int64_t per_channel = p.a_count * p.b_count;
    for (int64_t c = 0; c < p.C; ++c)
      for (int64_t t = c * per_channel; t < (c + 1) * per_channel; ++t)
        for (int k = 0; k < q; ++k) out[k * p.C + c] += partial[t * q + k];
  }
  return out;
}

// A per-channel coefficient spread over the W = C * inner columns of rows mode.
std::vector<float> per_column(const Plan& p, const std::vector<float>& v) {
  if (p.inner == 1) return v;
  std::vector<float> out(static_cast<size_t>(p.W));
  for (int64_t c = 0; c < p.C; ++c)
    for (int64_t i = 0; i < p.inner; ++i) out[c * p.inner + i] = v[c];
  return out;
}

// y = (x - m) * s + t with per-channel m, s, t (C).
void apply_forward(const Plan& p, float* y, const float* x, const std::vector<float>& m,
                   const std::vector<float>& s, const std::vector<float>& t, bool relu) {
  const bn::BlockKernels& K = block_kernels();
  if (p.rows) {
    const std::vector<float> mc = per_column(p, m), sc = per_column(p, s), tc = per_column(p, t);
    for_tiles(p, [&](const Tile& k) {
      (relu ? K.rows_forward_relu : K.rows_forward)(y + k.offset, x + k.offset, k.rows, k.cols,
                                                     p.W, mc.data() + k.j0, sc.data() + k.j0,
                                                     tc.data() + k.j0);
    });
  } else {
    for_tiles(p, [&](const Tile& k) {
      (relu ? K.plane_forward_relu : K.plane_forward)(y + k.offset, x + k.offset, k.rows,
                                                       k.cols, p.W, m[k.c], s[k.c], t[k.c]);
    });
  }
}

// Plain float64 mean of channel c of x (outer, C, inner).
double plain_mean(const float* x, int64_t outer, int64_t C, int64_t inner, int64_t c) {
  double sum = 0.0;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) sum += x[(o * C + c) * inner + i];
  return sum / static_cast<double>(outer * inner);
}

// Plain float64 sum of g * ((x - m) - delta) over channel c of (outer, C, inner), g = dy.at(k), or
// with relu_s: dy gated as the block kernels gate it (fmaf rounds as the vector FMA does).
template <class Dy>
double plain_centred_dot(const Dy& dy, const float* x, int64_t outer, int64_t C,
                         int64_t inner, int64_t c, float m, double delta, const float* relu_s,
                         const float* relu_t) {
  double sum = 0.0;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t k = (o * C + c) * inner + i;
      float g = dy.at(k);
      if (relu_s) g *= std::fmaf(x[k] - m, relu_s[c], relu_t[c]) > 0.f ? 1.f : 0.f;
      sum += g * ((static_cast<double>(x[k]) - m) - delta);
    }
  return sum;
}

void check_sizes(const char* kernel, int64_t outer, int64_t C, int64_t inner) {
  FK_CHECK(outer >= 0 && C >= 0 && inner >= 0, kernel, ": sizes must be >= 0, received outer=",
           outer, ", C=", C, ", inner=", inner);
}

// The training forward: the statistics pass, then `write(plan, m, s, t)`, the write pass
// (apply_forward, or the pooled store of batchnorm_relu_maxpool_forward_train). save_scale /
// save_shift (C, or null) keep the write pass's coefficients for a ReLU backward's mask.
template <class Write>
void forward_train(const char* kernel, float* var, float* mean, float* inv_std,
                   float* save_scale, float* save_shift, const float* x, const float* gamma,
                   const float* beta, int64_t outer, int64_t C, int64_t inner, float epsilon,
                   Write&& write) {
  check_sizes(kernel, outer, C, inner);
  const int64_t n = outer * inner;
  if (C == 0) return;
  if (n == 0) {
    for (int64_t c = 0; c < C; ++c) {
      mean[c] = 0.f;
      var[c] = 0.f;
      const double inv = 1.0 / std::sqrt(static_cast<double>(epsilon));
      inv_std[c] = static_cast<float>(inv);
      if (save_scale) save_scale[c] = static_cast<float>((gamma ? gamma[c] : 1.0) * inv);
      if (save_shift) save_shift[c] = beta ? beta[c] : 0.f;
    }
    return;
  }
  const Plan p = make_plan(outer, C, inner);
  const bn::BlockKernels& K = block_kernels();
  std::vector<float> shift(static_cast<size_t>(C));
  for (int64_t c = 0; c < C; ++c) shift[c] = x[c * inner];

  std::vector<double> partial(static_cast<size_t>(p.partial_size(2)));
  if (p.rows) {
    const std::vector<float> kc = per_column(p, shift);
    for_tiles(p, [&](const Tile& k) {
      double* s1 = partial.data() + (k.chunk * 2) * p.W + k.j0;
      K.rows_stats(x + k.offset, k.rows, k.cols, p.W, kc.data() + k.j0, s1, s1 + p.W);
    });
  } else {
    for_tiles(p, [&](const Tile& k) {
      K.plane_stats(x + k.offset, k.rows, k.cols, p.W, shift[k.c], partial.data() + k.index * 2);
    });
  }
  const std::vector<double> sums = channel_sums(p, partial, 2);

  std::vector<float> m(C), s(C), t(C);
  const double dn = static_cast<double>(n);
  for (int64_t c = 0; c < C; ++c) {
    const double d1 = sums[c] / dn;
    // Shifted sums of data holding an infinity give inf - inf = NaN; the mean is then taken
    // directly (a rare pass), so that it is +/-inf as the plain mean is in IEEE arithmetic.
    const double mean64 = std::isfinite(shift[c] + d1) ? shift[c] + d1
                                                       : plain_mean(x, outer, C, inner, c);
    const double var64 = std::max(sums[C + c] / dn - d1 * d1, 0.0);
    const double inv = 1.0 / std::sqrt(var64 + static_cast<double>(epsilon));
    mean[c] = static_cast<float>(mean64);
    var[c] = static_cast<float>(var64);
    inv_std[c] = static_cast<float>(inv);
    const double scale = (gamma ? gamma[c] : 1.0) * inv;
    m[c] = mean[c];
    s[c] = static_cast<float>(scale);
    // The remainder term only when it is a number: an infinite scale (gamma = inf) times a
    // zero remainder would turn every y of the channel into NaN, where y = +/-inf.
    const double remainder = std::isfinite(scale) ? scale * (mean64 - m[c]) : 0.0;
    t[c] = static_cast<float>((beta ? beta[c] : 0.0) - remainder);
    if (save_scale) save_scale[c] = s[c];
    if (save_shift) save_shift[c] = t[c];
  }
  write(p, m, s, t);
}

void forward_infer(const char* kernel, float* y, const float* x, const float* mean,
                   const float* var, const float* gamma, const float* beta, int64_t outer,
                   int64_t C, int64_t inner, float epsilon, bool relu) {
  check_sizes(kernel, outer, C, inner);
  if (C == 0 || outer * inner == 0) return;
  std::vector<float> m(mean, mean + C), s(C), t(C);
  for (int64_t c = 0; c < C; ++c) {
    const double inv = 1.0 / std::sqrt(static_cast<double>(var[c]) + epsilon);
    s[c] = static_cast<float>((gamma ? gamma[c] : 1.0) * inv);
    t[c] = beta ? beta[c] : 0.f;
  }
  apply_forward(make_plan(outer, C, inner), y, x, m, s, t, relu);
}

// dy as the backward reads it: a whole (outer, C, inner) array. tile(p, k) points at tile k's
// first element (row stride p.W), at(k) is element k (the rare plain_centred_dot pass).
struct DenseDy {
  const float* dy;
  const float* tile(const Plan&, const Tile& k) const { return dy + k.offset; }
  float at(int64_t k) const { return dy[k]; }
};

// The backward; relu_s / relu_t (C, or null): the forward's scale / shift, whose ReLU mask
// gates dy in both passes. dy: DenseDy, or PooledDy (batchnorm_relu_maxpool_backward).
template <class Dy>
void backward(const char* kernel, float* dx, float* dgamma, float* dbeta, const Dy& dy,
              const float* x, const float* mean, const float* inv_std, const float* gamma,
              const float* relu_s, const float* relu_t, int64_t outer, int64_t C,
              int64_t inner) {
  check_sizes(kernel, outer, C, inner);
  const int64_t n = outer * inner;
  if (C == 0) return;
  if (n == 0) {
    for (int64_t c = 0; c < C; ++c) {
      if (dgamma) dgamma[c] = 0.f;
      if (dbeta) dbeta[c] = 0.f;
    }
    return;
  }
  if (!dx && !dgamma && !dbeta) return;
  const Plan p = make_plan(outer, C, inner);
  const bn::BlockKernels& K = block_kernels();
  const std::vector<float> m(mean, mean + C);

  std::vector<double> partial(static_cast<size_t>(p.partial_size(3)));
  const bool relu = relu_s != nullptr;
  // Per-column copies of the mask's coefficients (rows mode), empty without relu.
  std::vector<float> rs, rt;
  if (relu) {
    rs.assign(relu_s, relu_s + C);
    rt.assign(relu_t, relu_t + C);
  }
  const std::vector<float> rsc = relu ? per_column(p, rs) : rs;
  const std::vector<float> rtc = relu ? per_column(p, rt) : rt;
  const float* rsp = relu ? rsc.data() : nullptr;
  const float* rtp = relu ? rtc.data() : nullptr;
  if (p.rows) {
    const std::vector<float> mc = per_column(p, m);
    for_tiles(p, [&](const Tile& k) {
      double* s = partial.data() + (k.chunk * 3) * p.W + k.j0;
      if (relu)
        K.rows_reduce_relu(dy.tile(p, k), x + k.offset, k.rows, k.cols, p.W, mc.data() + k.j0,
                           rsp + k.j0, rtp + k.j0, s, s + p.W, s + 2 * p.W);
      else
        K.rows_reduce(dy.tile(p, k), x + k.offset, k.rows, k.cols, p.W, mc.data() + k.j0, s,
                      s + p.W, s + 2 * p.W);
    });
  } else {
    for_tiles(p, [&](const Tile& k) {
      double* out = partial.data() + k.index * 3;
      if (relu)
        K.plane_reduce_relu(dy.tile(p, k), x + k.offset, k.rows, k.cols, p.W, m[k.c], rs[k.c],
                            rt[k.c], out);
      else
        K.plane_reduce(dy.tile(p, k), x + k.offset, k.rows, k.cols, p.W, m[k.c], out);
    });
  }
  const std::vector<double> sums = channel_sums(p, partial, 3);

  std::vector<float> a(C), b(C), cc(C);
  const double dn = static_cast<double>(n);
  for (int64_t c = 0; c < C; ++c) {
    const double sum_dy = sums[c], delta = sums[C + c] / dn;
    const double inv = inv_std[c];
    // sum dy * xhat. Folded as sum dy d - delta sum dy, an infinite dy gives inf - inf = NaN;
    // then (a rare pass) the centred sum is taken directly, +/-inf as in IEEE arithmetic.
    double dg = inv * (sums[2 * C + c] - delta * sum_dy);
    if (!std::isfinite(dg))
      dg = inv * plain_centred_dot(dy, x, outer, C, inner, c, m[c], delta, relu_s, relu_t);
    if (dgamma) dgamma[c] = static_cast<float>(dg);
    if (dbeta) dbeta[c] = static_cast<float>(sum_dy);
    const double A = (gamma ? gamma[c] : 1.0) * inv;
    const double B = -inv * dg / dn;
    a[c] = static_cast<float>(A);
    b[c] = static_cast<float>(B);
    // B * delta corrects for the float32 mean; skipped when B is not finite (an infinite dy),
    // where it would add inf * 0 = NaN to elements whose dx is +/-inf in IEEE arithmetic.
    cc[c] = static_cast<float>(-sum_dy / dn - (std::isfinite(B) ? B * delta : 0.0));
  }
  if (!dx) return;
  if (p.rows) {
    const std::vector<float> mc = per_column(p, m), ac = per_column(p, a),
                             bc = per_column(p, b), ccc = per_column(p, cc);
    for_tiles(p, [&](const Tile& k) {
      if (relu)
        K.rows_backward_relu(dx + k.offset, dy.tile(p, k), x + k.offset, k.rows, k.cols, p.W,
                             mc.data() + k.j0, ac.data() + k.j0, bc.data() + k.j0,
                             ccc.data() + k.j0, rsp + k.j0, rtp + k.j0);
      else
        K.rows_backward(dx + k.offset, dy.tile(p, k), x + k.offset, k.rows, k.cols, p.W,
                        mc.data() + k.j0, ac.data() + k.j0, bc.data() + k.j0, ccc.data() + k.j0);
    });
  } else {
    for_tiles(p, [&](const Tile& k) {
      if (relu)
        K.plane_backward_relu(dx + k.offset, dy.tile(p, k), x + k.offset, k.rows, k.cols, p.W,
                              m[k.c], a[k.c], b[k.c], cc[k.c], rs[k.c], rt[k.c]);
      else
        K.plane_backward(dx + k.offset, dy.tile(p, k), x + k.offset, k.rows, k.cols, p.W,
                         m[k.c], a[k.c], b[k.c], cc[k.c]);
    });
  }
}

// The write pass of the plain training forward: y (outer, C, inner), clamped with relu.
struct Dense {
  float* y;
  const float* x;
  bool relu;
  void operator()(const Plan& p, const std::vector<float>& m, const std::vector<float>& s,
                  const std::vector<float>& t) const {
    apply_forward(p, y, x, m, s, t, relu);
  }
};

// ---- BN + ReLU + max pool (batchnorm_relu_maxpool_*): x (N, H, W, C), pool == strides,
// 'valid'; y, positions (N, Pp, Qp, C; int8), Pp = H / ph, Qp = W / pw. ----

struct PoolShape {
  int64_t N, H, W, C, ph, pw, Pp, Qp;
};

void check_pool(const char* kernel, const PoolShape& g) {
  FK_CHECK(g.N >= 0 && g.H >= 0 && g.W >= 0 && g.C >= 0, kernel,
           ": sizes must be >= 0, received N=", g.N, ", H=", g.H, ", W=", g.W, ", C=", g.C);
  FK_CHECK(g.ph >= 1 && g.pw >= 1 && g.ph * g.pw <= 128, kernel, ": arguments 'pool_h', "
           "'pool_w' must be >= 1 with pool_h * pool_w <= 128, received (", g.ph, ", ", g.pw,
           ")");
}

// The write pass of the pooled forward: per pooled row (n, pp), the ph input rows normalized
// and clamped into a per-thread buffer by the plain write pass's own block kernel
// (rows_forward_relu: the same float32 operations), then max pooled by maxpool2d_forward's
// row loop (same window order and tie rule), which keeps each maximum's window position.
struct PooledWrite {
  float* y;
  int8_t* pos;
  const float* x;
  PoolShape g;
  void operator()(const Plan&, const std::vector<float>& m, const std::vector<float>& s,
                  const std::vector<float>& t) const {
    const bn::BlockKernels& K = block_kernels();
    const pool::Kernels pk = pool::active_kernels();
    const int64_t C = g.C, rows = g.ph * g.W, cells = g.Qp * C;
    const pool::Geom pg{1, g.ph, g.W, C, 1, g.Qp, g.ph, g.pw, g.ph, g.pw, 0, 0};
    const PoolShape sh = g;
    float* const yp = y;
    int8_t* const pp_ = pos;
    const float* const xp = x;
    parallel_for(g.N * g.Pp, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, cells)),
                 [&](int64_t r0, int64_t r1) {
      thread_local std::vector<float> buf;
      buf.resize(static_cast<size_t>(rows * C));
      for (int64_t np = r0; np < r1; ++np) {
        const int64_t n = np / sh.Pp, pp = np % sh.Pp;
        K.rows_forward_relu(buf.data(), xp + (n * sh.H + pp * sh.ph) * sh.W * C, rows, C, C,
                            m.data(), s.data(), t.data());
        pk.max_pos_row(yp + np * cells, pp_ + np * cells, buf.data(), pg, 0, 0);
      }
    });
  }
};

// dy of the pooled backward: the un-pooled cotangent as maxpool2d_backward writes it (0.f + dy
// at each window's maximum, 0 elsewhere, rows and columns past the last whole window
// included), built tile by tile in a per-thread buffer that stays in cache, so that the
// backward's passes run the plain block kernels on the same values in the same order. The
// positions are only compared (one that is not the forward's is ignored, never written
// through).
struct PooledDy {
  const float* dy;
  const int8_t* pos;
  PoolShape g;

  // Element k of that cotangent (the rare plain_centred_dot pass).
  float at(int64_t k) const {
    const int64_t m = k / g.C, c = k % g.C, h = (m / g.W) % g.H, w = m % g.W;
    if (h >= g.Pp * g.ph || w >= g.Qp * g.pw) return 0.f;
    const int64_t cell = (((m / (g.W * g.H)) * g.Pp + h / g.ph) * g.Qp + w / g.pw) * g.C + c;
    return pos[cell] == (h % g.ph) * g.pw + w % g.pw ? 0.f + dy[cell] : 0.f;
  }
  // Tile k (pixels [r0, r0 + rows), channels [j0, j0 + cols)), row stride p.W = C: whole
  // rows from the pool's own scatter (maxpool2d_backward's values, per ISA).
  const float* tile(const Plan& p, const Tile& k) const {
    thread_local std::vector<float> buf;
    buf.resize(static_cast<size_t>(k.rows * p.W));
    const pool::ScatterGeom sg{g.H, g.W, g.C, g.Pp, g.Qp, g.ph, g.pw, kLinear, 0.f};
    pool::active_kernels().max_unpool_rows(buf.data(), dy, pos, sg, k.r0, k.r0 + k.rows);
    return buf.data() + k.j0;
  }
};

}  // namespace

void batchnorm_forward_train(float* y, float* var, float* mean, float* inv_std, const float* x,
                             const float* gamma, const float* beta, int64_t outer, int64_t C,
                             int64_t inner, float epsilon) {
  forward_train("batchnorm_forward_train", var, mean, inv_std, nullptr, nullptr, x, gamma, beta,
                outer, C, inner, epsilon, Dense{y, x, false});
}

void batchnorm_relu_forward_train(float* y, float* var, float* mean, float* inv_std,
                                  float* scale, float* shift, const float* x, const float* gamma,
                                  const float* beta, int64_t outer, int64_t C, int64_t inner,
                                  float epsilon) {
  forward_train("batchnorm_relu_forward_train", var, mean, inv_std, scale, shift, x, gamma, beta,
                outer, C, inner, epsilon, Dense{y, x, true});
}

void batchnorm_forward_infer(float* y, const float* x, const float* mean, const float* var,
                             const float* gamma, const float* beta, int64_t outer, int64_t C,
                             int64_t inner, float epsilon) {
  forward_infer("batchnorm_forward_infer", y, x, mean, var, gamma, beta, outer, C, inner,
                epsilon, false);
}

void batchnorm_relu_forward_infer(float* y, const float* x, const float* mean, const float* var,
                                  const float* gamma, const float* beta, int64_t outer,
                                  int64_t C, int64_t inner, float epsilon) {
  forward_infer("batchnorm_relu_forward_infer", y, x, mean, var, gamma, beta, outer, C, inner,
                epsilon, true);
}

void batchnorm_backward(float* dx, float* dgamma, float* dbeta, const float* dy, const float* x,
                        const float* mean, const float* inv_std, const float* gamma,
                        int64_t outer, int64_t C, int64_t inner) {
  backward("batchnorm_backward", dx, dgamma, dbeta, DenseDy{dy}, x, mean, inv_std, gamma, nullptr,
           nullptr, outer, C, inner);
}

void batchnorm_relu_backward(float* dx, float* dgamma, float* dbeta, const float* dy,
                             const float* x, const float* mean, const float* inv_std,
                             const float* scale, const float* shift, const float* gamma,
                             int64_t outer, int64_t C, int64_t inner) {
  backward("batchnorm_relu_backward", dx, dgamma, dbeta, DenseDy{dy}, x, mean, inv_std, gamma,
           scale, shift, outer, C, inner);
}

void batchnorm_relu_maxpool_forward_train(float* y, int8_t* positions, float* var, float* mean,
                                          float* inv_std, float* scale, float* shift,
                                          const float* x, const float* gamma, const float* beta,
                                          int64_t N, int64_t H, int64_t W, int64_t C,
                                          int64_t pool_h, int64_t pool_w, float epsilon) {
  const char* k = "batchnorm_relu_maxpool_forward_train";
  const PoolShape g{N, H, W, C, pool_h, pool_w, pool_h > 0 ? H / pool_h : 0,
                    pool_w > 0 ? W / pool_w : 0};
  check_pool(k, g);
  forward_train(k, var, mean, inv_std, scale, shift, x, gamma, beta, N * H * W, C, 1, epsilon,
                PooledWrite{y, positions, x, g});
}

void batchnorm_relu_maxpool_backward(float* dx, float* dgamma, float* dbeta, const float* dy,
                                     const int8_t* positions, const float* x, const float* mean,
                                     const float* inv_std, const float* scale,
                                     const float* shift, const float* gamma, int64_t N,
                                     int64_t H, int64_t W, int64_t C, int64_t pool_h,
                                     int64_t pool_w) {
  const char* k = "batchnorm_relu_maxpool_backward";
  const PoolShape g{N, H, W, C, pool_h, pool_w, pool_h > 0 ? H / pool_h : 0,
                    pool_w > 0 ? W / pool_w : 0};
  check_pool(k, g);
  backward(k, dx, dgamma, dbeta, PooledDy{dy, positions, g}, x, mean, inv_std, gamma, scale, shift,
           N * H * W, C, 1);
}

}  // namespace fk
