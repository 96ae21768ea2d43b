// direct.cpp: the direct-convolution path of conv2d_forward, conv2d_backward_input and
// conv2d_backward_weight (groups == 1), chosen per call by the direct_*_ok functions.
//
// Layouts as kernels.h: x, dx (N, H, W, C); y, dy (N, P, Q, K); w (R, S, C, K).
// Outputs OVERWRITTEN; y and dx elements are each written by one task (no reduction), dw is a
// sum of per-slice partial filters.
// Schedule: tasks of (image n, a run of output rows), handed out dynamically. A task copies the
// input rows its output rows read into a per-thread buffer padded with zeros on every side
// (rows (R-1)*dh + 1 + (rows-1)*sh, columns (Q-1)*sw + (S-1)*dw + 1), then runs the per-ISA row
// kernel (direct_kernels.h) per output row and the activation on the finished row.
// backward_input (stride 1) is the same kernel: dx = dy correlated with the filter flipped in
// (r, s) and transposed to (R, S, K, C), leading padding (R-1)*dh - pt, (S-1)*dw - pl.
// backward_weight: dw (R*S*C, K) = sum over pixels of x(row, pixel) * dy[pixel], a register
// block of filter rows x channels per sweep over the pixels of a few output rows (same padded
// copy of x), partial sums per slice of the batch added at the end.
//
// bf16 products (runtime.h gemm_bf16_active()): the same schedule on the VDPBF16PS kernels
// (direct_avx512_bf16.cpp): the padded copy is rounded to bf16 (backward-weight: bf16 pairs of
// columns (col, col + sw)), the filter packed as tap pairs once per call, dy as pixel pairs per
// step. Its choice per shape (measured against the im2col + bf16 GEMM path): forward and
// backward-input while the packed bf16 filter fits half of a 1 MB L2 (bf16_filter_fits),
// backward-weight from K = 16; stride 1, no dilation, not 1x1, as fp32.
// Switch: FKERAS_CONV_DIRECT=0 never takes this path, =1 takes it whenever it applies (tests
// use both), unset: where it was measured faster: K (dx: C) a multiple of the vector width,
// stride 1, dilation 1, not 1x1, forward C <= 32, backward-input K <= 64, either past that
// while the filter fits 1 MB and the output rows (Q, dx: W) hold >= 14 columns,
// backward-weight K >= 32 (bench/bench_conv.py "gemm" columns).
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "conv_internal.h"
#include "direct_kernels.h"
#include "pool_kernels.h"
#include "fkeras/common.h"
#include "fkeras/gemm.h"
#include "fkeras/kernels.h"
#include "fkeras/runtime.h"

namespace fk {
namespace conv {
namespace {

// The kernels that serve this call: fp32 (AVX2 / AVX-512), or under bf16 products (runtime.h
// gemm_bf16_active(), which implies AVX-512 and avx512_bf16) the VDPBF16PS ones. false: none
// (the scalar ISA: the GEMM path serves it).
struct Path {
  bool bf16 = false;
  direct::Kernels fp32{};
  int64_t vector_width = 0;
};

bool active(Path* out) {
  if (gemm_bf16_active()) {
    out->bf16 = true;
    out->vector_width = 16;
    return true;
  }
  switch (cpu_isa()) {
    case Isa::kAvx512: out->fp32 = direct::kernels_avx512(); break;
    case Isa::kAvx2: out->fp32 = direct::kernels_avx2(); break;
    default: return false;
  }
  out->vector_width = out->fp32.vector_width;
  return true;
}

// Automatic choice: the direct forward up to kMaxForwardC input channels, backward-input up to
// kMaxInputK output channels (the reductions of their register blocks per filter tap), and
// both past that while the filter fits a 1 MB L2 and the output rows hold at least kMinWideQ
// columns.
constexpr int64_t kMaxForwardC = 32, kMaxInputK = 64, kMinWideQ = 14;
constexpr int64_t kFilterL2Bytes = 1024 * 1024;

// The bf16 forward and backward-input (their reductions R*S*C and R*S*K): the direct kernel
// sweeps the whole packed filter (R*S*C*K bf16) once per output row, the GEMM path blocks it
// for the caches. Measured (bench_bf16.py --only paths, one core, paired): the direct path
// 1.04-2.4x the im2col + bf16 GEMM up to C = K = 128 (a 288 KB packed filter), 0.66-0.72x at
// C = K = 256 (1.1 MB, past a 1 MB L2): it serves filters up to half of that L2.
bool bf16_filter_fits(const Shape& s) {
  return s.R * s.S * s.C * s.K * 2 <= 512 * 1024;
}

// -1: unset (automatic), 0: off, 1: forced where applicable.
int mode() {
  const char* v = std::getenv("FKERAS_CONV_DIRECT");
  if (v == nullptr || *v == '\0') return -1;
  return v[0] == '0' ? 0 : 1;
}

// buf (rows, Wp, C) = columns [w_lo, w_lo + Wp) of rows [h_lo, h_lo + rows) of image n of
// x (N, H, W, C), zero outside the input.
void pad_rows(float* buf, const float* x, int64_t n, int64_t h_lo, int64_t rows, int64_t w_lo,
              int64_t Wp, int64_t H, int64_t W, int64_t C) {
  const int64_t ld = Wp * C, c0 = std::max<int64_t>(0, -w_lo),
                c1 = std::max<int64_t>(c0, std::min<int64_t>(Wp, W - w_lo));
  for (int64_t i = 0; i < rows; ++i) {
    float* dst = buf + i * ld;  // (Wp, C)
    const int64_t h = h_lo + i;
    if (h < 0 || h >= H || c1 == c0) {
      zero_floats(dst, ld);
      continue;
    }
    zero_floats(dst, c0 * C);
    copy_floats(dst + c0 * C, x + ((n * H + h) * W + w_lo + c0) * C, (c1 - c0) * C);
    zero_floats(dst + c1 * C, (Wp - c1) * C);
  }
}

// Max pooling of the convolution's output in the same pass (conv2d_forward_maxpool2d): y
// (N, P / ph, Q / pw, K), windows ph x pw at stride (ph, pw), 'valid'. y == nullptr: none.
// idx [opt] (N, P / ph, Q / pw, K): each maximum's flat offset into the (unwritten)
// convolution output (N, P, Q, K), as maxpool2d_forward writes them.
struct PoolOut {
  float* y = nullptr;
  int64_t* idx = nullptr;
  int64_t ph = 1, pw = 1;
};

// The direct convolution of x (N, H, W, C) with w (R, S, C, K) into y (N, P, Q, K), any
// strides, dilations and leading pads (taps outside the input read zero). Under bf16 the
// padded copy is rounded to bf16 and the filter packed as tap pairs once per call. relu and
// leaky_relu are applied in the fp32 kernels' stores, other activations on each finished row.
// With `pool.y`, y is unused: each task's output rows go to a per-thread buffer of ph rows,
// pooled into pool.y as soon as a window row is complete (in L1), and the convolution rows
// past the last whole window are not computed.
void run_direct(const Path& path, float* y, const float* x, const float* w, const float* bias,
                int64_t N, int64_t H, int64_t W, int64_t C, int64_t K, int64_t R, int64_t S,
                int64_t P, int64_t Q, int64_t sh, int64_t sw, int64_t dh, int64_t dw,
                int64_t pt, int64_t pl, int64_t activation, float alpha,
                const PoolOut& pool = PoolOut{}) {
  const int64_t Wp = (Q - 1) * sw + (S - 1) * dw + 1, ld = Wp * C;
  const bool pooled = pool.y != nullptr;
  const int64_t Pp = P / pool.ph, Qp = Q / pool.pw, Pc = pooled ? Pp * pool.ph : P;
  // Output rows per task: enough tasks for a dynamic hand-out (8 per thread), a padded copy of
  // at most ~64K floats (L2; bf16: the same bytes), else whole images (the copy's (R-1)*dh
  // extra rows amortized). Pooled: whole pooling windows per task.
  const int64_t threads = num_threads(), max_copy = path.bf16 ? 2 * 65536 : 65536;
  int64_t rb = std::max<int64_t>(1, (N * Pc + 8 * threads - 1) / (8 * threads));
  rb = std::min(rb, Pc);
  while (rb > 1 && ((rb - 1) * sh + (R - 1) * dh + 1) * ld > max_copy) --rb;
  if (pooled) rb = std::max(pool.ph, rb / pool.ph * pool.ph);
  const int64_t per_image = (Pc + rb - 1) / rb;
  // Narrow filters (direct_forward_narrow_ok: K below the vector width) take the dot-product
  // row kernel, which reads the filter transposed, wt (K, R, S*C), and fuses no activation.
  const bool narrow = !path.bf16 && K % path.vector_width != 0;
  std::vector<float> wt;
  if (narrow) {
    wt.resize(static_cast<size_t>(K * R * S * C));
    for (int64_t k = 0; k < K; ++k)
      for (int64_t e = 0; e < R * S * C; ++e) wt[k * R * S * C + e] = w[e * K + k];
  }
  const bool fused_act = !narrow && (activation == kRelu || activation == kLeakyRelu);
  const pool::Kernels pk = pooled ? pool::active_kernels() : pool::Kernels{};
  const pool::Geom pg{1, pool.ph, Q, K, 1, Qp, pool.ph, pool.pw, pool.ph, pool.pw, 0, 0};
  // Filter slices over 24 KB are swept one filter row at a time (half of a 48 KB L1; measured
  // no worse than whole slices, within the noise, on the shapes of bench_conv.py).
  direct::Geom g{C, K, R, S, Q, sw, dh, dw, ld, 24 * 1024};
  if (fused_act) {
    g.activation = activation;
    g.alpha = alpha;
  }
  const bool skip_pad_rows = (pt > 0 || (P - 1) * sh - pt + (R - 1) * dh >= H) &&
                             !any_non_finite(w, R * S * C * K);
  direct::Bf16Kernels bk{};
  std::vector<uint32_t> wp;  // bf16: (R, taps, ceil(run / 2), K) tap pairs
  if (path.bf16) {
    bk = direct::kernels_avx512_bf16();
    const int64_t taps = dw == 1 ? 1 : S, run = dw == 1 ? S * C : C;
    wp.resize(static_cast<size_t>(R * taps * ((run + 1) / 2) * K));
    bk.pack_filter(wp.data(), w, g);
    // An odd run's last pair may read one more input value (times a zero weight) when the
    // input is finite (one vectorized pass, only then).
    g.finite_input = (run & 1) && !any_non_finite(x, N * H * W * C);
  }
  parallel_for(N * per_image, 1, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t n = t / per_image, p0 = (t % per_image) * rb, p1 = std::min(Pc, p0 + rb);
      const int64_t h_lo = p0 * sh - pt, rows = (p1 - 1 - p0) * sh + (R - 1) * dh + 1;
      float* buf = scratch(1, static_cast<size_t>(rows * ld + 1));  // (rows, Wp, C)
      uint16_t* hbuf = reinterpret_cast<uint16_t*>(buf);            // bf16: half of it
      // fp32 rows that lie wholly inside the input with no column padding (a 'valid'
      // convolution) are read in place: the copy would be the same rows.
      const float* xrows = buf;
      if (path.bf16) {
        bk.pad_rows(hbuf, x, n, h_lo, rows, -pl, Wp, H, W, C);
      } else if (pl == 0 && Wp == W && h_lo >= 0 && h_lo + rows <= H) {
        xrows = x + (n * H + h_lo) * W * C;
      } else {
        pad_rows(buf, x, n, h_lo, rows, -pl, Wp, H, W, C);
      }
      // Pooled: the rows of one pooling window, (ph, Q, K).
      float* wrows = pooled ? scratch(2, static_cast<size_t>(pool.ph * Q * K)) : nullptr;
      for (int64_t p = p0; p < p1; ++p) {
        const int64_t i = (p - p0) % pool.ph;  // p0 is a multiple of ph when pooled
        // Filter rows whose input row p * sh - pt + r * dh lies in [0, H): the others meet
        // only the copy's zero padding rows (a 'same' convolution's first and last rows, most
        // of all a backward-input's: 6 of 78 row passes on the benchmark CNN's conv2, 7.0 ->
        // 6.3 ms at 1 thread). Only with a finite filter (a padded zero times Inf is the NaN
        // the definition gives); kept whole when no row reaches the input (the bias alone).
        direct::Geom gr = g;
        if (skip_pad_rows) {
          const int64_t top = pt - p * sh, bottom = H - 1 + pt - p * sh;
          gr.r_lo = top > 0 ? (top + dh - 1) / dh : 0;
          gr.r_hi = bottom < 0 ? 0 : std::min(R, bottom / dh + 1);
          if (gr.r_lo >= gr.r_hi) gr.r_lo = 0, gr.r_hi = R;
        }
        float* yr = pooled ? wrows + i * Q * K : y + (n * P + p) * Q * K;  // (Q, K)
        if (path.bf16) {
          bk.row(yr, hbuf + (p - p0) * sh * ld, wp.data(), bias, gr);
        } else if (narrow) {
          path.fp32.narrow(yr, xrows + (p - p0) * sh * ld, wt.data(), bias, gr);
        } else {
          path.fp32.row(yr, xrows + (p - p0) * sh * ld, w, bias, gr);
        }
        if (activation != kLinear && !fused_act) activation_inplace(yr, Q * K, activation, alpha);
        if (pooled && i == pool.ph - 1) {
          const int64_t o = (n * Pp + p / pool.ph) * Qp * K;  // the pooled row
          if (pool.idx == nullptr) {
            pk.max_values_row(pool.y + o, wrows, pg, 0, 0);
          } else {
            // The window rows (ph, Q, K) are rows p + 1 - ph .. p of the full output: indices
            // into them plus that offset are the full output's.
            pk.max_row(pool.y + o, pool.idx + o, wrows, pg, 0, 0,
                       (n * P + p + 1 - pool.ph) * Q * K);
          }
        }
      }
    }
  });
}

}  // namespace

bool direct_forward_ok(const Shape& s) {
  Path kern;
  const int m = mode();
  if (m == 0 || s.G != 1 || !active(&kern) || s.K % kern.vector_width != 0) return false;
  if (s.M() == 0 || s.K == 0 || s.row_len() == 0) return false;
  if (m == 1) return true;
  // Measured (bench_conv.py and wider sweeps, AVX-512 and AVX2), paired runs: 1.0-2.6x the GEMM
  // path up to 32 input channels. Past 32, since the output-line prefetch and the balanced
  // column blocks (session 7; 3x3 'same', 1 thread, process CPU time, AVX-512): 1.03-1.29x
  // with rows of 14 to 56 columns and filters of 108 KB to 1.1 MB (C, K = 48..256, e.g.
  // 32x56x56 64->64 1.17x, 16x28x28 128->128 1.22x, 64x14x14 64->128 1.03x, 16x14x14 128->256
  // 1.04x), ties with 2.3 MB filters (256->256 at 14x14: 1.01-1.03x), 0.60-0.74x on 7-column
  // rows (64x7x7 64->64, 128->128, 128->256: blocks of 3-4 pixels reuse each filter vector too
  // little) and 0.65x at 7x7 256->256; 2 threads (a loaded machine) 1.08-1.30x on the wide
  // ones; AVX2 (the same machine, set_cpu_isa) 1.00-1.19x on six of them.
  const bool plain = !s.pointwise() && s.sh == 1 && s.sw == 1 && s.dh == 1 && s.dw == 1;
  if (!plain) return false;
  if (kern.bf16) return bf16_filter_fits(s);
  return s.C <= kMaxForwardC || (s.R * s.S * s.C * s.K * 4 <= kFilterL2Bytes && s.Q >= kMinWideQ);
}

bool direct_backward_weight_ok(const Shape& s) {
  Path kern;
  const int m = mode();
  if (m == 0 || s.G != 1 || !active(&kern) || s.K % kern.vector_width != 0) return false;
  if (s.M() == 0 || s.K == 0 || s.row_len() == 0) return false;
  if (m == 1) return true;
  // Measured 1.04-3.5x the GEMM path from K = 32 (also C = 128, K = 256), 0.94x at K = 16.
  // bf16: 1.0-3.6x from K = 16 (bench_bf16.py --only paths).
  return !s.pointwise() && s.sh == 1 && s.sw == 1 && s.dh == 1 && s.dw == 1 &&
         (kern.bf16 || s.K >= 32);
}

bool direct_backward_weight_narrow_ok(const Shape& s) {
  // The forward's rule (below). Measured (1 thread, process CPU time, AVX-512) against the
  // im2col + transposed GEMM path: 1.4-5.2x on 3x3 / 4x4 filters over 16-128 input channels,
  // K = 1..4 (64x28x28 32 -> 1: 1.41 -> 0.27 ms); AVX2 2.0-3.3x.
  return direct_forward_narrow_ok(s);
}

bool direct_forward_narrow_ok(const Shape& s) {
  Path kern;
  const int m = mode();
  if (m == 0 || s.G != 1 || !active(&kern) || kern.bf16) return false;
  // The im2col + GEMM path spends a whole vector of B's panel (48 columns) per filter when K is
  // below the vector width: K = 1 ran at 17 GFLOP/s (64x28x28 32 -> 1, 3x3 'same').
  // Measured (1 thread, process CPU time, AVX-512) against that path: 2.5-6.7x on 3x3 and 4x4
  // filters over 16-128 input channels (K = 1..4, strides 1 and 2); 0.2-0.3x where a filter
  // row's run S*C is shorter than a vector (C = 1 or 3: scalar tails), 0.6x on a 1x1
  // convolution (a plain GEMM there, no im2col): those keep the GEMM path.
  return s.K > 0 && s.K < kern.vector_width && s.dw == 1 && s.M() > 0 &&
         s.S * s.C >= kern.vector_width && !s.pointwise();
}

bool direct_backward_input_ok(const Shape& s) {
  Path kern;
  const int m = mode();
  if (m == 0 || s.G != 1 || !active(&kern) || s.C % kern.vector_width != 0) return false;
  if (s.sh != 1 || s.sw != 1 || s.pt > (s.R - 1) * s.dh || s.pl > (s.S - 1) * s.dw) return false;
  if (s.N * s.H * s.W * s.C == 0 || s.K == 0 || s.R * s.S == 0 || s.P == 0 || s.Q == 0)
    return false;
  if (m == 1) return true;
  // Its reduction runs over K: 1.0-1.2x the GEMM path up to K = 64, 0.91x at K = 128
  // (8x14x14x64 -> 128) before session 7's output-line prefetch and balanced column blocks;
  // since then (1 thread, process CPU time, 'same' 3x3) 1.14-1.47x at K = 128 with dx rows
  // of 14-28 columns (8x14x14 64 <- 128 1.14x, 16x28x28 128 <- 128 1.20x), AVX2 1.06-1.18x,
  // and 0.63x on 7-column rows (16x7x7 128 <- 128): the forward's rule past kMaxInputK.
  if (s.dh != 1 || s.dw != 1) return false;
  if (kern.bf16) return bf16_filter_fits(s);
  return s.K <= kMaxInputK || (s.R * s.S * s.C * s.K * 4 <= kFilterL2Bytes && s.W >= kMinWideQ);
}

void direct_forward(float* y, const float* x, const float* w, const float* bias, const Shape& s,
                    int64_t activation, float alpha) {
  Path kern;
  FK_CHECK(active(&kern), "conv2d_forward: the direct path needs AVX2 or AVX-512");
  run_direct(kern, y, x, w, bias, s.N, s.H, s.W, s.C, s.K, s.R, s.S, s.P, s.Q, s.sh, s.sw, s.dh,
             s.dw, s.pt, s.pl, activation, alpha);
}

void direct_forward_maxpool(float* y, int64_t* indices, const float* x, const float* w,
                            const float* bias, const Shape& s, int64_t activation, float alpha,
                            int64_t pool_h, int64_t pool_w) {
  Path kern;
  FK_CHECK(active(&kern), "conv2d_forward_maxpool2d: the direct path needs AVX2 or AVX-512");
  PoolOut pool;
  pool.y = y;
  pool.idx = indices;
  pool.ph = pool_h;
  pool.pw = pool_w;
  run_direct(kern, nullptr, x, w, bias, s.N, s.H, s.W, s.C, s.K, s.R, s.S, s.P, s.Q, s.sh, s.sw,
             s.dh, s.dw, s.pt, s.pl, activation, alpha, pool);
}

void direct_backward_input(float* dx, const float* dy, const float* w, const Shape& s) {
  Path kern;
  FK_CHECK(active(&kern), "conv2d_backward_input: the direct path needs AVX2 or AVX-512");
  // wt[r, s, k, c] = w[R-1-r, S-1-s, c, k]: (R, S, K, C), small (one filter).
  std::vector<float> wt(static_cast<size_t>(s.R * s.S * s.K * s.C));
  for (int64_t r = 0; r < s.R; ++r)
    for (int64_t t = 0; t < s.S; ++t) {
      const float* src = w + ((s.R - 1 - r) * s.S + (s.S - 1 - t)) * s.C * s.K;  // (C, K)
      float* dst = wt.data() + (r * s.S + t) * s.K * s.C;                        // (K, C)
      for (int64_t c = 0; c < s.C; ++c)
        for (int64_t k = 0; k < s.K; ++k) dst[k * s.C + c] = src[c * s.K + k];
    }
  run_direct(kern, dx, dy, wt.data(), nullptr, s.N, s.P, s.Q, s.K, s.C, s.R, s.S, s.H, s.W, 1, 1,
             s.dh, s.dw, (s.R - 1) * s.dh - s.pt, (s.S - 1) * s.dw - s.pl, kLinear, 0.f);
}

}  // namespace conv
}  // namespace fk

namespace fk {
namespace conv {

void direct_backward_weight(float* dw, const float* dy, const float* x, const Shape& s) {
  Path kern;
  FK_CHECK(active(&kern), "conv2d_backward_weight: the direct path needs AVX2 or AVX-512");
  const int64_t T = s.row_len(), size = T * s.K;
  const int64_t Wp = (s.Q - 1) * s.sw + (s.S - 1) * s.dw + 1, ld = Wp * s.C;
  // Output rows per step: their dy rows (rb, Q, K) and padded input rows stay in L1 while every
  // (filter-row, channel) block sweeps them; ~8K floats of dy.
  int64_t rb = std::max<int64_t>(1, std::min<int64_t>(s.P, 8192 / std::max<int64_t>(1, s.Q * s.K)));
  while (rb > 1 && ((rb - 1) * s.sh + (s.R - 1) * s.dh + 1) * ld > 32768) --rb;
  const int64_t per_image = (s.P + rb - 1) / rb, steps = s.N * per_image;
  const direct::WGeom g{T, s.K, s.C, s.Q, s.sh, s.sw, ld, s.R, s.dh};
  // Narrow filters (direct_backward_weight_narrow_ok) sum into the transposed (K, T) layout,
  // reading whole filter-row runs (no per-row offsets).
  const bool narrow = !kern.bf16 && s.K % kern.vector_width != 0;
  std::vector<int64_t> off(narrow ? 0 : static_cast<size_t>(T));  // x offset of row (r, s, c)
  if (!narrow)
    for (int64_t r = 0; r < s.R; ++r)
      for (int64_t t = 0; t < s.S; ++t)
        for (int64_t c = 0; c < s.C; ++c)
          off[(r * s.S + t) * s.C + c] = r * s.dh * ld + t * s.dw * s.C + c;
  // Contiguous slices of steps, two per thread, each summing into its own (T, K) buffer (slice
  // 0: dw itself, unless narrow); the buffers are added into dw at the end.
  const int64_t nslices = std::max<int64_t>(1, std::min<int64_t>(steps, 2 * num_threads()));
  const int64_t own = narrow ? nslices : nslices - 1;  // slices with a buffer of their own
  std::vector<float> partial(static_cast<size_t>(own * size));  // (own, T, K) or (own, K, T)
  direct::Bf16Kernels bk{};
  const int64_t Qp = (s.Q + 1) / 2;
  if (kern.bf16) bk = direct::kernels_avx512_bf16();
  parallel_for(nslices, 1, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      float* out = narrow ? partial.data() + i * size                 // (K, T)
                          : i == 0 ? dw : partial.data() + (i - 1) * size;  // (T, K)
      zero_floats(out, size);
      for (int64_t st = i * steps / nslices; st < (i + 1) * steps / nslices; ++st) {
        const int64_t n = st / per_image, p0 = (st % per_image) * rb;
        const int64_t p1 = std::min(s.P, p0 + rb);
        const int64_t rows = (p1 - 1 - p0) * s.sh + (s.R - 1) * s.dh + 1;
        float* buf = scratch(1, static_cast<size_t>(rows * ld));  // (rows, Wp, C)
        if (kern.bf16) {
          // (rows, Wp + sw, C) bf16 staging for the pairs (rows, Wp, C), and pad_rows' zero.
          uint16_t* tmp = reinterpret_cast<uint16_t*>(
              scratch(0, static_cast<size_t>(rows * (Wp + s.sw) * s.C / 2 + 1)));
          uint32_t* xq = reinterpret_cast<uint32_t*>(buf);
          // This step's dy rows as pairs of adjacent pixels (rb, ceil(Q / 2), K), packed here
          // so that they stay in cache for the kernel (~8K floats).
          uint32_t* dyp = reinterpret_cast<uint32_t*>(
              scratch(2, static_cast<size_t>((p1 - p0) * Qp * s.K)));
          bk.pair_rows(xq, tmp, x, n, p0 * s.sh - s.pt, rows, -s.pl, Wp, s.H, s.W, s.C, s.sw);
          bk.pack_dy(dyp, dy + (n * s.P + p0) * s.Q * s.K, p1 - p0, s.Q, s.K);
          bk.weight(out, xq, dyp, off.data(), g, p1 - p0);
        } else {
          pad_rows(buf, x, n, p0 * s.sh - s.pt, rows, -s.pl, Wp, s.H, s.W, s.C);
          const float* dyr = dy + (n * s.P + p0) * s.Q * s.K;
          if (narrow) {
            kern.fp32.narrow_weight(out, buf, dyr, g, p1 - p0);
          } else {
            kern.fp32.weight(out, buf, dyr, off.data(), g, p1 - p0);
          }
        }
      }
    }
  });
  if (narrow) {  // dw (T, K) = the slices' (K, T) sums, in slice order
    parallel_for(T, 4096, [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t)
        for (int64_t k = 0; k < s.K; ++k) {
          float a = partial[k * T + t];
          for (int64_t i = 1; i < nslices; ++i) a += partial[i * size + k * T + t];
          dw[t * s.K + k] = a;
        }
    });
  } else if (nslices > 1) {
    parallel_for(size, 4096, [&](int64_t e0, int64_t e1) {
      for (int64_t i = 1; i < nslices; ++i) {
        const float* src = partial.data() + (i - 1) * size;
        for (int64_t e = e0; e < e1; ++e) dw[e] += src[e];
      }
    });
  }
}

}  // namespace conv
}  // namespace fk
