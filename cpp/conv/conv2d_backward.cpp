// conv2d_backward.cpp: conv2d_backward_input and conv2d_backward_weight.
//
// Layouts: dy (N, P, Q, K), w (R, S, C/groups, K), x and dx (N, H, W, C), dw (R, S, C/groups, K).
// Both outputs are OVERWRITTEN. The bias gradient is bias_add_backward's job and the fused
// activation's derivative is applied to dy by the op before these kernels.
//
// backward_input, as a gather (every dx element written exactly once, so blocks of dx pixels
// run in parallel without atomics or a reduction):
//   dx[n,h,w,c] = sum over taps (r, s) with p = (h + pt - r*dh) / sh and q = (w + pl - s*dw) / sw
//                 integral and inside [0, P) x [0, Q) of sum_k dy[n,p,q,k] * w[r,s,c,k].
// Whether (h + pt - r*dh) is divisible by sh depends only on h mod sh, so the dx pixels split
// into sh*sw "phases" (h mod sh, w mod sw), each with a fixed set of taps (each tap belongs to
// exactly one phase). Per phase and block of its pixels: gather dy rows (taps, Kg) into a
// buffer, one GEMM with that phase's transposed filter (taps*Kg, Cg). Stride 1 is one phase
// with every tap; strided convolutions do no multiply-by-zero work.
//
// For few pixels under a large filter the transposed copy would dominate: a col2im form
// (backward_input_col2im) reads w as it is instead.
//
// backward_weight: dw (R*S*Cg, Kg) per group = sum over blocks of output pixels of
//   cols^T (R*S*Cg, rows) @ dy[block] (rows, Kg), cols being the forward's im2col rows; when
//   R*S*Cg > Kg computed transposed, dw^T (Kg, R*S*Cg) = dy[block]^T @ cols (wider GEMM tiles),
//   and transposed into dw by the final pass.
// Blocks are split into a few contiguous slices, each accumulating into a private buffer
// (slice 0 straight into dw when not transposed), summed into dw at the end.
// 1x1 stride-1 convolutions read x and dy in place (no gather); depthwise ones (groups == C)
// go to depthwise.cpp.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "conv_internal.h"
#include "fkeras/common.h"
#include "fkeras/gemm.h"
#include "fkeras/kernels.h"
#include "fkeras/runtime.h"

namespace fk {
namespace {

// The taps of one axis that reach input positions i with i mod stride == phase:
// (phase + pad - t * dil) divisible by stride.
std::vector<int64_t> phase_taps(int64_t taps, int64_t stride, int64_t dil, int64_t pad,
                                int64_t phase) {
  std::vector<int64_t> out;
  for (int64_t t = 0; t < taps; ++t)
    if (((phase + pad - t * dil) % stride + stride) % stride == 0) out.push_back(t);
  // Descending taps read ascending dy positions: with unit stride and dilation the dy rows of a
  // filter row are one contiguous run (see gather_dy).
  std::reverse(out.begin(), out.end());
  return out;
}

struct PhaseWork {
  int64_t a, b;            // h mod sh, w mod sw
  int64_t Ha, Wb;          // pixels of the phase per image: rows, columns
  std::vector<int64_t> rs, ss;
  const float* wt;         // (G, rs.size() * ss.size() * Kg, Cg)
  int64_t rows, first_block, nblocks;
};

// Gathers dy rows for phase pixels [m0, m1) of group g: buf (m1 - m0, |rs| * |ss| * Kg).
void gather_dy(float* buf, const float* dy, const conv::Shape& s, const PhaseWork& ph,
               int64_t m0, int64_t m1, int64_t g) {
  const int64_t Tw = static_cast<int64_t>(ph.ss.size());
  const int64_t len = static_cast<int64_t>(ph.rs.size()) * Tw * s.Kg;
  // The taps of a filter row read adjacent dy columns holding all channels: one copy per row.
  const bool runs = s.G == 1 && s.sw == 1 && s.dw == 1;
  int64_t n = m0 / (ph.Ha * ph.Wb), i = (m0 / ph.Wb) % ph.Ha, j = m0 % ph.Wb;
  for (int64_t m = m0; m < m1; ++m) {
    float* row = buf + (m - m0) * len;
    const int64_t h = ph.a + i * s.sh, w = ph.b + j * s.sw;
    const int64_t q0 = Tw > 0 ? (w + s.pl - ph.ss[0] * s.dw) / s.sw : 0;
    for (size_t ri = 0; ri < ph.rs.size(); ++ri) {
      const int64_t p = (h + s.pt - ph.rs[ri] * s.dh) / s.sh;  // exact by the phase choice
      if (runs && p >= 0 && p < s.P && q0 >= 0 && q0 + Tw <= s.Q) {
        conv::copy_floats(row + static_cast<int64_t>(ri) * Tw * s.K,
                          dy + ((n * s.P + p) * s.Q + q0) * s.K, Tw * s.K);
        continue;
      }
      for (int64_t si = 0; si < Tw; ++si) {
        const int64_t q = (w + s.pl - ph.ss[si] * s.dw) / s.sw;
        float* dst = row + (static_cast<int64_t>(ri) * Tw + si) * s.Kg;
        if (p < 0 || p >= s.P || q < 0 || q >= s.Q) {
          conv::zero_floats(dst, s.Kg);
        } else {
          conv::copy_floats(dst, dy + ((n * s.P + p) * s.Q + q) * s.K + g * s.Kg, s.Kg);
        }
      }
    }
    if (++j == ph.Wb) {
      j = 0;
      if (++i == ph.Ha) {
        i = 0;
        ++n;
      }
    }
  }
}

// dst (cols, rows; row stride ldd) = src (rows, cols; row stride lds)^T, in 16 x 16 tiles so
// that both sides are read and written a cache line at a time.
void transpose(float* dst, int64_t ldd, const float* src, int64_t lds, int64_t rows,
               int64_t cols) {
  constexpr int64_t kTile = 16;
  for (int64_t i0 = 0; i0 < rows; i0 += kTile)
    for (int64_t j0 = 0; j0 < cols; j0 += kTile) {
      const int64_t i1 = std::min(rows, i0 + kTile), j1 = std::min(cols, j0 + kTile);
      for (int64_t j = j0; j < j1; ++j)
        for (int64_t i = i0; i < i1; ++i) dst[j * ldd + i] = src[i * lds + j];
    }
}

// Builds every phase's transposed filter into wt and sizes its blocks.
// wt: R*S*Cg*K floats (as many as w).
std::vector<PhaseWork> plan_phases(float* wt, const float* w, const conv::Shape& s) {
  std::vector<PhaseWork> phases;
  int64_t offset = 0, blocks = 0;
  for (int64_t a = 0; a < std::min(s.sh, s.H); ++a) {
    for (int64_t b = 0; b < std::min(s.sw, s.W); ++b) {
      PhaseWork ph;
      ph.a = a, ph.b = b;
      ph.Ha = (s.H - a + s.sh - 1) / s.sh, ph.Wb = (s.W - b + s.sw - 1) / s.sw;
      ph.rs = phase_taps(s.R, s.sh, s.dh, s.pt, a);
      ph.ss = phase_taps(s.S, s.sw, s.dw, s.pl, b);
      const int64_t T = static_cast<int64_t>(ph.rs.size() * ph.ss.size());
      float* dst = wt + offset;  // (G, T * Kg, Cg)
      ph.wt = dst;
      // Per group and tap: w[r, s] (Cg, Kg of K) transposed to (Kg, Cg). Large filters (deep
      // layers on small images) make this worth threads.
      const int64_t Ts = static_cast<int64_t>(ph.ss.size());
      parallel_for(s.G * T, std::max<int64_t>(1, 65536 / std::max<int64_t>(1, s.Kg * s.Cg)),
                   [&](int64_t u0, int64_t u1) {
        for (int64_t u = u0; u < u1; ++u) {
          const int64_t g = u / T, t = u % T;
          const int64_t r = ph.rs[t / Ts], sc = ph.ss[t % Ts];
          transpose(dst + u * s.Kg * s.Cg, s.Cg, w + (r * s.S + sc) * s.Cg * s.K + g * s.Kg, s.K,
                    s.Cg, s.Kg);
        }
      });
      offset += s.G * T * s.Kg * s.Cg;
      const int64_t Mab = s.N * ph.Ha * ph.Wb;
      ph.rows = conv::block_rows(s.N * s.H * s.W, std::max<int64_t>(T * s.Kg, s.Cg));
      ph.first_block = blocks;
      ph.nblocks = (Mab + ph.rows - 1) / ph.rows;
      blocks += ph.nblocks;
      phases.push_back(std::move(ph));
    }
  }
  return phases;
}

// dx for phase pixels [m0, m1) (all groups). packed [opt]: the phase's filter packed once
// (one group), else each GEMM packs it.
void backward_input_block(float* dx, const float* dy, const conv::Shape& s, const PhaseWork& ph,
                          int64_t m0, int64_t m1, const GemmPackedB* packed) {
  const int64_t T = static_cast<int64_t>(ph.rs.size() * ph.ss.size()), len = T * s.Kg;
  const int64_t rows = m1 - m0;
  const bool contiguous = s.sh == 1 && s.sw == 1;  // phase pixels are dx's own pixel order
  float* tmp = contiguous ? nullptr : conv::scratch(1, static_cast<size_t>(rows * s.C));
  float* out = contiguous ? dx + m0 * s.C : tmp;  // (rows, C)
  if (T == 0 || s.K == 0) {
    for (int64_t i = 0; i < rows; ++i) conv::zero_floats(out + i * s.C, s.C);
  } else {
    float* buf = conv::scratch(0, static_cast<size_t>(rows * len));  // (rows, T * Kg)
    for (int64_t g = 0; g < s.G; ++g) {
      gather_dy(buf, dy, s, ph, m0, m1, g);
      if (packed) {
        gemm_prepacked(out, s.C, buf, len, *packed, rows, false, 1.f, 0.f);
      } else {
        gemm_strided(out + g * s.Cg, s.C, buf, len, ph.wt + g * len * s.Cg, s.Cg, rows, s.Cg,
                     len, false, false, 1.f, 0.f);
      }
    }
  }
  if (contiguous) return;
  int64_t n = m0 / (ph.Ha * ph.Wb), i = (m0 / ph.Wb) % ph.Ha, j = m0 % ph.Wb;
  for (int64_t m = m0; m < m1; ++m) {
    const int64_t h = ph.a + i * s.sh, w = ph.b + j * s.sw;
    conv::copy_floats(dx + ((n * s.H + h) * s.W + w) * s.C, tmp + (m - m0) * s.C, s.C);
    if (++j == ph.Wb) {
      j = 0;
      if (++i == ph.Ha) {
        i = 0;
        ++n;
      }
    }
  }
}

// The col2im form of backward_input, for few pixels and a large filter: per block of output
// pixels and group, dcols (rows, R*S*Cg) = dy[block] (rows, Kg) @ w_g^T, read straight from
// w's (R*S*Cg, K) layout (no transposed copy), then scatter-added into dx. Blocks run one after
// the other (their dx regions overlap), each GEMM uses the threads, and the scatter runs in
// parallel over channel ranges, which never collide.
void backward_input_col2im(float* dx, const float* dy, const float* w, const conv::Shape& s) {
  const int64_t M = s.M(), L = s.row_len(), image = s.H * s.W * s.C;
  parallel_for(s.N * image, 1 << 16, [&](int64_t e0, int64_t e1) {
    conv::zero_floats(dx + e0, e1 - e0);
  });
  if (M == 0 || L == 0 || s.K == 0) return;
  const int64_t rows = std::min<int64_t>(M, std::max<int64_t>(64, (1 << 18) / L));
  const int64_t chunk = std::max<int64_t>(16, (s.Cg + 4 * num_threads() - 1) / (4 * num_threads()));
  float* dcols = conv::scratch(0, static_cast<size_t>(rows * L));  // (rows, R, S, Cg)
  for (int64_t m0 = 0; m0 < M; m0 += rows) {
    const int64_t m1 = std::min(M, m0 + rows);
    for (int64_t g = 0; g < s.G; ++g) {
      gemm_strided(dcols, L, dy + m0 * s.K + g * s.Kg, s.K, w + g * s.Kg, s.K, m1 - m0, L, s.Kg,
                   false, true, 1.f, 0.f);
      parallel_for(s.Cg, chunk, [&](int64_t c0, int64_t c1) {
        for (int64_t m = m0; m < m1; ++m) {
          const int64_t n = m / (s.P * s.Q), p = (m / s.Q) % s.P, q = m % s.Q;
          const float* col = dcols + (m - m0) * L;  // (R, S, Cg)
          for (int64_t r = 0; r < s.R; ++r) {
            const int64_t h = p * s.sh + r * s.dh - s.pt;
            if (h < 0 || h >= s.H) continue;
            for (int64_t t = 0; t < s.S; ++t) {
              const int64_t v = q * s.sw + t * s.dw - s.pl;
              if (v < 0 || v >= s.W) continue;
              float* d = dx + n * image + (h * s.W + v) * s.C + g * s.Cg;  // (Cg)
              const float* src = col + (r * s.S + t) * s.Cg;               // (Cg)
              for (int64_t c = c0; c < c1; ++c) d[c] += src[c];
            }
          }
        }
      });
    }
  }
}

// Whether col2im beats the gather for this problem: by the width of the gather's GEMM, Cg
// output channels. Below one AVX-512 vector (Cg < 16) its output tiles are mostly padding and
// the scatter-add of col2im is short; from 16 channels the gather wins. Measured (session 10,
// 3x3 and 4x4 stride-2 transposed-convolution shapes, 2 threads; 1 thread in parentheses):
// gather / col2im 1.52 (2.54) at Cg = 4, 1.16 (1.93) at 8, 0.79 (1.33) at 16, 0.58 (0.85) at
// 32 (64x28x28 32 <- 32), 0.61-0.95 at 64-256, 1.08 (0.89) at 512; at Cg = 1 and 3, 2-3.7x
// the other way. The earlier cost model (scatter moves against transpose + gather moves) chose
// col2im on the 32..256-channel shapes, 1.2-1.7x slower. Few dx pixels under a large filter
// (fewer than Cg / 2: one small image of a deep layer) still take col2im, which reads w in
// place instead of transposing it for them.
// FKERAS_CONV_BACKWARD_INPUT=gather|col2im forces one form (tests run both on every shape;
// a filter holding inf or NaN always takes col2im, see conv2d_backward_input).
bool prefer_col2im(const conv::Shape& s) {
  if (const char* force = std::getenv("FKERAS_CONV_BACKWARD_INPUT")) {
    if (std::strcmp(force, "col2im") == 0) return true;
    if (std::strcmp(force, "gather") == 0) return false;
  }
  return s.Cg < 16 || 2 * s.N * s.H * s.W < s.Cg;
}

}  // namespace

void conv2d_backward_input(float* dx, const float* dy, const float* w, int64_t N, int64_t H,
                           int64_t W, int64_t C, int64_t K, int64_t R, int64_t S, int64_t P,
                           int64_t Q, int64_t stride_h, int64_t stride_w, int64_t dil_h,
                           int64_t dil_w, int64_t pad_top, int64_t pad_left, int64_t groups) {
  const conv::Shape s = conv::make_shape("conv2d_backward_input", N, H, W, C, K, R, S, P, Q,
                                         stride_h, stride_w, dil_h, dil_w, pad_top, pad_left,
                                         groups);
  if (N * H * W * C == 0) return;
  if (K == 0 || P == 0 || Q == 0) {  // an empty reduction: no tap loops (R, S may be huge)
    conv::zero_floats(dx, N * H * W * C);
    return;
  }
  if (conv::is_depthwise(s)) {
    conv::depthwise_backward_input(dx, dy, w, s);
    return;
  }
  // The gather and the direct convolution multiply w by zero-filled dy rows and columns outside
  // the output: a non-finite weight would give NaN where the scatter of the definition (and
  // the reference) adds nothing, so such a filter takes the col2im form.
  const bool finite_w = !conv::any_non_finite(w, R * S * s.Cg * K);
  if (finite_w && conv::direct_backward_input_ok(s)) {
    conv::direct_backward_input(dx, dy, w, s);
    return;
  }
  if (s.pointwise() && K > 0) {  // dx (M, C) = dy (M, K) @ w (C, K)^T, per group
    for (int64_t g = 0; g < s.G; ++g)
      gemm_strided(dx + g * s.Cg, C, dy + g * s.Kg, K, w + g * s.Kg, K, s.M(), s.Cg, s.Kg, false,
                   true, 1.f, 0.f);
    return;
  }
  if (prefer_col2im(s) || !finite_w) {
    backward_input_col2im(dx, dy, w, s);
    return;
  }
  // The phases' transposed filters, as many floats as w; written before read, so not zeroed
  // (a large filter's zeroing would be a serial pass as long as the transposition).
  std::unique_ptr<float[]> wt(new float[static_cast<size_t>(R * S * s.Cg * K)]);
  const std::vector<PhaseWork> phases = plan_phases(wt.get(), w, s);
  const int64_t nblocks = phases.back().first_block + phases.back().nblocks;
  // One group: each phase's transposed filter packed once for all of its blocks.
  std::vector<GemmPackedB> packed(s.G == 1 ? phases.size() : 0);
  for (size_t i = 0; i < packed.size(); ++i) {
    const int64_t len = static_cast<int64_t>(phases[i].rs.size() * phases[i].ss.size()) * s.Kg;
    if (len > 0 && phases[i].nblocks > 1) gemm_pack_b(packed[i], phases[i].wt, s.Cg, len, s.Cg, false);
  }
  conv::run_blocks(nblocks, [&](int64_t blk) {
    size_t i = 0;
    while (i + 1 < phases.size() && phases[i + 1].first_block <= blk) ++i;
    const PhaseWork& ph = phases[i];
    const int64_t m0 = (blk - ph.first_block) * ph.rows;
    const int64_t m1 = std::min(N * ph.Ha * ph.Wb, m0 + ph.rows);
    const bool pre = !packed.empty() && packed[i].B != nullptr;
    backward_input_block(dx, dy, s, ph, m0, m1, pre ? &packed[i] : nullptr);
  });
}

void conv2d_backward_weight(float* dw, const float* dy, const float* x, int64_t N, int64_t H,
                            int64_t W, int64_t C, int64_t K, int64_t R, int64_t S, int64_t P,
                            int64_t Q, int64_t stride_h, int64_t stride_w, int64_t dil_h,
                            int64_t dil_w, int64_t pad_top, int64_t pad_left, int64_t groups) {
  const conv::Shape s = conv::make_shape("conv2d_backward_weight", N, H, W, C, K, R, S, P, Q,
                                         stride_h, stride_w, dil_h, dil_w, pad_top, pad_left,
                                         groups);
  const int64_t M = s.M(), L = s.row_len(), size = L * K;
  if (size == 0) return;
  if (M == 0) {
    conv::zero_floats(dw, size);
    return;
  }
  if (conv::is_depthwise(s)) {
    conv::depthwise_backward_weight(dw, dy, x, s);
    return;
  }
  if (conv::direct_backward_weight_ok(s) || conv::direct_backward_weight_narrow_ok(s)) {
    conv::direct_backward_weight(dw, dy, x, s);
    return;
  }
  const bool direct = s.pointwise();  // x rows are the im2col rows
  const int64_t rows = conv::block_rows(M, L), nblocks = (M + rows - 1) / rows;
  // Orientation: the GEMM's microkernel is widest in N (48 columns), so when the im2col rows
  // are longer than the filters per group (L > Kg, the usual case: 288 vs 64) it computes the
  // transpose, dw_g^T (Kg, L) = dy_g^T @ cols (measured 1.5x faster for L = 288, Kg = 64 than
  // (L, Kg) = cols^T @ dy_g, whose 64 columns leave a third of the 48-wide tiles idle),
  // into a (G, Kg, L) buffer transposed into dw at the end.
  const bool transposed = L > s.Kg;
  // Accumulates blocks [b0, b1) into out: (L, K), or (G, Kg, L) when transposed; the first
  // block overwrites.
  auto accumulate = [&](float* out, int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t m0 = b * rows, m1 = std::min(M, m0 + rows);
      float* cols = direct ? nullptr : conv::scratch(0, static_cast<size_t>(rows * L));
      const float beta = b == b0 ? 0.f : 1.f;
      for (int64_t g = 0; g < s.G; ++g) {
        const float* a = x + m0 * C + g * s.Cg;  // (rows, L), row stride C (direct) or L
        if (!direct) {
          conv::im2col(cols, x, s, m0, m1, g);
          a = cols;
        }
        const int64_t lda = direct ? C : L;
        const float* d = dy + m0 * K + g * s.Kg;  // (rows, Kg), row stride K
        if (transposed) {
          gemm_strided(out + g * s.Kg * L, L, d, K, a, lda, s.Kg, L, m1 - m0, true, false, 1.f,
                       beta);
        } else {
          gemm_strided(out + g * s.Kg, K, a, lda, d, K, L, s.Kg, m1 - m0, true, false, 1.f, beta);
        }
      }
    }
  };
  // dw = the sum of n partial results. Not transposed: dw already holds the first, parts the
  // other n - 1 (L, K); transposed: parts holds all n, each (G, Kg, L).
  auto reduce = [&](const float* parts, int64_t n) {
    if (!transposed) {
      parallel_for(size, 16384, [&](int64_t e0, int64_t e1) {
        for (int64_t i = 1; i < n; ++i) {
          const float* src = parts + (i - 1) * size;
          for (int64_t e = e0; e < e1; ++e) dw[e] += src[e];
        }
      });
      return;
    }
    parallel_for(L, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, K)),
                 [&](int64_t l0, int64_t l1) {
      for (int64_t l = l0; l < l1; ++l) {
        float* row = dw + l * K;  // (K) = (G, Kg)
        for (int64_t kk = 0; kk < K; ++kk) {
          const int64_t g = kk / s.Kg, k = kk % s.Kg;
          const float* src = parts + (g * s.Kg + k) * L + l;
          float sum = src[0];
          for (int64_t i = 1; i < n; ++i) sum += src[i * size];
          row[kk] = sum;
        }
      }
    });
  };
  const int64_t threads = num_threads();
  if (nblocks < 2 * threads) {  // few blocks: serial, each GEMM uses the threads
    if (!transposed) {
      accumulate(dw, 0, nblocks);
      return;
    }
    std::vector<float> dwt(static_cast<size_t>(size));  // (G, Kg, L)
    accumulate(dwt.data(), 0, nblocks);
    reduce(dwt.data(), 1);
    return;
  }
  // Several slices per thread let the dynamic hand-out absorb a slow (descheduled) thread;
  // fewer when the partial filters, and the final sum over them, would be large.
  const int64_t per_thread = size <= (1 << 16) ? 4 : size <= (1 << 20) ? 2 : 1;
  const int64_t nslices = std::min(nblocks, per_thread * threads);
  // Slice 0 accumulates into dw itself when not transposed; every slice has its own buffer
  // when transposed: (nslices - 1 or nslices, size).
  const int64_t own = transposed ? 0 : 1;
  std::vector<float> partial(static_cast<size_t>((nslices - own) * size));
  parallel_for(nslices, 1, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      float* out = i < own ? dw : partial.data() + (i - own) * size;
      accumulate(out, i * nblocks / nslices, (i + 1) * nblocks / nslices);
    }
  });
  reduce(partial.data(), nslices);
}

}  // namespace fk
