// pooling.cpp: maxpool2d_forward/backward and avgpool2d_forward/backward (kernels.h), plus the
// portable build of the per-ISA loops (pool_impl.h) that the `scalar` ISA runs.
//
// Layouts: x and dx (N, H, W, C); y and dy (N, P, Q, C); indices (N, P, Q, C) int64, the flat
// offset into x of each window's maximum (so it always lies in the same image and channel).
// Window (p, q) covers rows p*sh - pt .. p*sh - pt + R - 1 (columns likewise), clipped to the
// input: padding never wins a max and never counts in an average (TensorFlow 'same'). Every
// window must overlap the input. All outputs are OVERWRITTEN (dx is zero where nothing lands).
// Schedule: forward in parallel over output rows (n, p); backward over (image, channel block)
// tasks, which write disjoint parts of dx (a scatter without atomics).
#include <algorithm>

#include "fkeras/common.h"
#include "fkeras/kernels.h"
#include "fkeras/runtime.h"
#include "pool_impl.h"

namespace fk {
namespace pool {

Kernels kernels_scalar() { return make_kernels(); }

Kernels active_kernels() {
  switch (cpu_isa()) {
    case Isa::kAvx512: return kernels_avx512();
    case Isa::kAvx2: return kernels_avx2();
    default: return kernels_scalar();
  }
}

namespace {

Geom make_geom(const char* kernel, int64_t N, int64_t H, int64_t W, int64_t C, int64_t P,
               int64_t Q, int64_t R, int64_t S, int64_t sh, int64_t sw, int64_t pt, int64_t pl) {
  FK_CHECK(N >= 0 && H >= 0 && W >= 0 && C >= 0 && P >= 0 && Q >= 0 && R >= 0 && S >= 0, kernel,
           ": sizes must be >= 0");
  FK_CHECK(sh >= 1 && sw >= 1, kernel, ": strides must be >= 1, received (", sh, ", ", sw, ")");
  FK_CHECK(pt >= 0 && pl >= 0, kernel, ": padding must be >= 0, received (", pt, ", ", pl, ")");
  // Window starts grow with p, so checking the first and the last window of each axis suffices.
  FK_CHECK(P == 0 || (R - 1 - pt >= 0 && (P - 1) * sh - pt < H), kernel,
           ": some pooling window lies entirely in the padding (H=", H, ", P=", P, ", R=", R,
           ", stride=", sh, ", pad_top=", pt, ")");
  FK_CHECK(Q == 0 || (S - 1 - pl >= 0 && (Q - 1) * sw - pl < W), kernel,
           ": some pooling window lies entirely in the padding (W=", W, ", Q=", Q, ", S=", S,
           ", stride=", sw, ", pad_left=", pl, ")");
  return Geom{N, H, W, C, P, Q, R, S, sh, sw, pt, pl};
}

// Grain over output rows: a few thousand floats per chunk.
int64_t row_grain(const Geom& g) {
  return std::max<int64_t>(1, 4096 / std::max<int64_t>(1, g.Q * g.C));
}

// Channel blocks for the backward scatters: (image, block) tasks with enough of them to share.
int64_t channel_block(const Geom& g) {
  const int64_t want = 4 * num_threads();
  if (g.N == 0 || g.N >= want || g.C <= 16) return std::max<int64_t>(g.C, 1);  // N = 0: no task
  const int64_t blocks = (want + g.N - 1) / g.N;
  return std::max<int64_t>(16, (g.C + blocks - 1) / blocks);
}

}  // namespace
}  // namespace pool

void maxpool2d_forward(float* y, int64_t* indices, const float* x, int64_t N, int64_t H,
                       int64_t W, int64_t C, int64_t P, int64_t Q, int64_t R, int64_t S,
                       int64_t stride_h, int64_t stride_w, int64_t pad_top, int64_t pad_left) {
  const pool::Geom g = pool::make_geom("maxpool2d_forward", N, H, W, C, P, Q, R, S, stride_h,
                                       stride_w, pad_top, pad_left);
  const pool::Kernels kern = pool::active_kernels();
  if (indices == nullptr) {  // inference: the values only
    parallel_for(N * P, pool::row_grain(g), [&](int64_t r0, int64_t r1) {
      for (int64_t np = r0; np < r1; ++np)
        kern.max_values_row(y + np * Q * C, x, g, np / P, np % P);
    });
    return;
  }
  parallel_for(N * P, pool::row_grain(g), [&](int64_t r0, int64_t r1) {
    for (int64_t np = r0; np < r1; ++np)
      kern.max_row(y + np * Q * C, indices + np * Q * C, x, g, np / P, np % P, 0);
  });
}

void maxpool2d_backward(float* dx, const float* dy, const int64_t* indices, int64_t N, int64_t H,
                        int64_t W, int64_t C, int64_t P, int64_t Q) {
  FK_CHECK(N >= 0 && H >= 0 && W >= 0 && C >= 0 && P >= 0 && Q >= 0,
           "maxpool2d_backward: sizes must be >= 0");
  const pool::Geom g{N, H, W, C, P, Q, 1, 1, 1, 1, 0, 0};
  const int64_t cb = pool::channel_block(g), nb = C > 0 ? (C + cb - 1) / cb : 0;
  const int64_t image = H * W * C, PQ = P * Q;
  parallel_for(N * nb, 1, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t n = t / nb, c0 = (t % nb) * cb, c1 = std::min(C, c0 + cb);
      const int64_t* idx = indices + n * PQ * C;  // (P, Q, C) of image n
      const float* dyn = dy + n * PQ * C;         // (P, Q, C)
      float* dxn = dx + n * image;                // (H, W, C)
      for (int64_t i = 0; i < H * W; ++i)
        for (int64_t c = c0; c < c1; ++c) dxn[i * C + c] = 0.f;
      // This is the only check of the indices, made before each write: the (image, channel
      // block) split is race-free, and every write in bounds, when each index lies in its own
      // image and, if the channels are split, in its own channel, as maxpool2d_forward writes
      // them. A bad index is skipped, then reported.
      bool bad = false;
      for (int64_t pq = 0; pq < PQ; ++pq)
        for (int64_t c = c0; c < c1; ++c) {
          const uint64_t off = static_cast<uint64_t>(idx[pq * C + c] - n * image);
          if (off >= static_cast<uint64_t>(image) ||
              (nb > 1 && off % static_cast<uint64_t>(C) != static_cast<uint64_t>(c))) {
            bad = true;
            continue;
          }
          dxn[off] += dyn[pq * C + c];
        }
      FK_CHECK(!bad, "maxpool2d_backward: argument 'indices' holds an index outside its own ",
               "image and channel (image ", n, "); indices must be those maxpool2d_forward wrote");
    }
  });
}

void avgpool2d_forward(float* y, const float* x, int64_t N, int64_t H, int64_t W, int64_t C,
                       int64_t P, int64_t Q, int64_t R, int64_t S, int64_t stride_h,
                       int64_t stride_w, int64_t pad_top, int64_t pad_left) {
  const pool::Geom g = pool::make_geom("avgpool2d_forward", N, H, W, C, P, Q, R, S, stride_h,
                                       stride_w, pad_top, pad_left);
  const pool::AvgRowFn row = pool::active_kernels().avg_row;
  parallel_for(N * P, pool::row_grain(g), [&](int64_t r0, int64_t r1) {
    for (int64_t np = r0; np < r1; ++np) row(y + np * Q * C, x, g, np / P, np % P);
  });
}

void avgpool2d_backward(float* dx, const float* dy, int64_t N, int64_t H, int64_t W, int64_t C,
                        int64_t P, int64_t Q, int64_t R, int64_t S, int64_t stride_h,
                        int64_t stride_w, int64_t pad_top, int64_t pad_left) {
  const pool::Geom g = pool::make_geom("avgpool2d_backward", N, H, W, C, P, Q, R, S, stride_h,
                                       stride_w, pad_top, pad_left);
  const pool::AvgBackFn back = pool::active_kernels().avg_backward;
  const int64_t cb = pool::channel_block(g), nb = C > 0 ? (C + cb - 1) / cb : 0;
  parallel_for(N * nb, 1, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t c0 = (t % nb) * cb;
      back(dx, dy, g, t / nb, c0, std::min(C, c0 + cb));
    }
  });
}

}  // namespace fk
