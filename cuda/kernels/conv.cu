// conv.cu: CUDA conv2d (forward, input and weight gradients) and max/avg pooling, NHWC.
//
// Each kernel computes one output element per thread (grid-stride), gathering through the
// implicit-GEMM index maps of fk_cuda/conv_math.h: no im2col buffer, no atomics, a fixed
// summation order (deterministic). Forward: sum over the (r, s, c) depth of one group, then the
// GEMM epilogue (bias, fused activation, gemm_math.h). Input gradient: for each input element,
// the (r, s) taps whose inverse map lands on an output position. Weight gradient: for each
// filter element, the sum over (n, p, q) accumulated in float64.
// TODO(perf): tile these through the GEMM kernel's shared-memory machinery (gemm.cu).
#include <stdexcept>
#include <string>

#include "fk_cuda/conv.cuh"
#include "fk_cuda/gemm_math.h"

namespace fk_cuda {
namespace {

namespace cm = conv_math;

void check(cudaError_t e, const char* call) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string("CUDA error in ") + call + ": " + cudaGetErrorString(e));
}

unsigned blocks_for(int64_t n) {
  const int64_t b = (n + 255) / 256;
  return static_cast<unsigned>(b < 1 ? 1 : (b > 1048576 ? 1048576 : b));
}

#define FK_GRID_LOOP(e, n)                                                   \
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < (n); \
       e += int64_t(gridDim.x) * blockDim.x)

__global__ void conv_fwd_kernel(float* y, const float* x, const float* w, const float* bias,
                                cm::Geom g, int64_t act, float alpha) {
  const int64_t rows = g.N * g.P * g.Q, depth = cm::depth_size(g);
  FK_GRID_LOOP(e, rows * g.K) {
    const int64_t row = e / g.K, k = e % g.K, grp = cm::group_of(k, g);
    float acc = 0.f;
    for (int64_t kk = 0; kk < depth; ++kk) {
      const int64_t off = cm::a_offset(row, kk, grp, g);
      if (off < 0) continue;
      const cm::Pos3 t = cm::depth_to_rsc(kk, g);
      acc = fmaf(__ldg(x + off), __ldg(w + cm::w_offset(t.a, t.b, t.c, k, g)), acc);
    }
    y[e] = gemm_math::epilogue(acc, 0.f, 1.f, 0.f, bias ? __ldg(bias + k) : 0.f, act, alpha);
  }
}

__global__ void conv_bwd_input_kernel(float* dx, const float* dy, const float* w, cm::Geom g) {
  const int64_t cg = g.C / g.groups, kg = g.K / g.groups;
  FK_GRID_LOOP(e, g.N * g.H * g.W * g.C) {
    const int64_t c = e % g.C, t1 = e / g.C, wi = t1 % g.W, t2 = t1 / g.W, h = t2 % g.H,
                  n = t2 / g.H;
    const int64_t grp = c / cg, cc = c % cg;
    float acc = 0.f;
    for (int64_t r = 0; r < g.R; ++r) {
      int64_t p;
      if (!cm::out_coord(h, r, g.stride_h, g.dil_h, g.pad_top, g.P, &p)) continue;
      for (int64_t s = 0; s < g.S; ++s) {
        int64_t q;
        if (!cm::out_coord(wi, s, g.stride_w, g.dil_w, g.pad_left, g.Q, &q)) continue;
        const float* d = dy + cm::y_offset(n, p, q, grp * kg, g);
        const float* f = w + cm::w_offset(r, s, cc, grp * kg, g);
        for (int64_t k = 0; k < kg; ++k) acc = fmaf(__ldg(d + k), __ldg(f + k), acc);
      }
    }
    dx[e] = acc;
  }
}

__global__ void conv_bwd_weight_kernel(float* dw, const float* dy, const float* x, cm::Geom g) {
  const int64_t cg = g.C / g.groups;
  FK_GRID_LOOP(e, g.R * g.S * cg * g.K) {
    const int64_t k = e % g.K, t1 = e / g.K, cc = t1 % cg, t2 = t1 / cg, s = t2 % g.S,
                  r = t2 / g.S;
    const int64_t c = cm::group_of(k, g) * cg + cc;
    double acc = 0.0;
    for (int64_t n = 0; n < g.N; ++n)
      for (int64_t p = 0; p < g.P; ++p) {
        const int64_t h = cm::in_coord(p, r, g.stride_h, g.dil_h, g.pad_top);
        if (!cm::in_range(h, g.H)) continue;
        for (int64_t q = 0; q < g.Q; ++q) {
          const int64_t wi = cm::in_coord(q, s, g.stride_w, g.dil_w, g.pad_left);
          if (!cm::in_range(wi, g.W)) continue;
          acc += static_cast<double>(__ldg(x + cm::x_offset(n, h, wi, c, g))) *
                 static_cast<double>(__ldg(dy + cm::y_offset(n, p, q, k, g)));
        }
      }
    dw[e] = static_cast<float>(acc);
  }
}

// NaN counts as the largest value, the first maximum (lowest flat offset) wins.
__global__ void maxpool_fwd_kernel(float* y, int64_t* idx, const float* x, cm::Geom g) {
  FK_GRID_LOOP(e, g.N * g.P * g.Q * g.C) {
    const int64_t c = e % g.C, t1 = e / g.C, q = t1 % g.Q, t2 = t1 / g.Q, p = t2 % g.P,
                  n = t2 / g.P;
    int64_t r0, r1, s0, s1;
    cm::window(p, g.R, g.stride_h, g.pad_top, g.H, &r0, &r1);
    cm::window(q, g.S, g.stride_w, g.pad_left, g.W, &s0, &s1);
    float best = 0.f;
    int64_t at = -1;
    for (int64_t r = r0; r < r1; ++r)
      for (int64_t s = s0; s < s1; ++s) {
        const int64_t off = cm::x_offset(n, p * g.stride_h - g.pad_top + r,
                                         q * g.stride_w - g.pad_left + s, c, g);
        const float v = x[off];
        if (at < 0 || (!(best != best) && (v > best || v != v))) { best = v; at = off; }
      }
    y[e] = best;
    idx[e] = at;
  }
}

// dx[indices[...]] += dy over a zeroed dx: one thread per (n, c) walks its (p, q) in order (the
// CPU's order); the indices of (n, c) address only x[n, :, :, c], so threads write disjoint
// elements (no atomics). An index outside that slice sets *bad (checked by the binding).
__global__ void maxpool_bwd_kernel(float* dx, const float* dy, const int64_t* idx, cm::Geom g,
                                   int* bad) {
  FK_GRID_LOOP(e, g.N * g.C) {
    const int64_t n = e / g.C, c = e % g.C, lo = n * g.H * g.W * g.C, hi = lo + g.H * g.W * g.C;
    for (int64_t pq = 0; pq < g.P * g.Q; ++pq) {
      const int64_t o = (n * g.P * g.Q + pq) * g.C + c;
      const int64_t at = idx[o];
      if (at < lo || at >= hi || at % g.C != c) { *bad = 1; continue; }
      dx[at] += dy[o];
    }
  }
}

__global__ void avgpool_fwd_kernel(float* y, const float* x, cm::Geom g) {
  FK_GRID_LOOP(e, g.N * g.P * g.Q * g.C) {
    const int64_t c = e % g.C, t1 = e / g.C, q = t1 % g.Q, t2 = t1 / g.Q, p = t2 % g.P,
                  n = t2 / g.P;
    int64_t r0, r1, s0, s1;
    cm::window(p, g.R, g.stride_h, g.pad_top, g.H, &r0, &r1);
    cm::window(q, g.S, g.stride_w, g.pad_left, g.W, &s0, &s1);
    float acc = 0.f;
    for (int64_t r = r0; r < r1; ++r)
      for (int64_t s = s0; s < s1; ++s)
        acc += x[cm::x_offset(n, p * g.stride_h - g.pad_top + r, q * g.stride_w - g.pad_left + s,
                              c, g)];
    y[e] = acc * (1.f / static_cast<float>((r1 - r0) * (s1 - s0)));
  }
}

__global__ void avgpool_bwd_kernel(float* dx, const float* dy, cm::Geom g) {
  FK_GRID_LOOP(e, g.N * g.H * g.W * g.C) {
    const int64_t c = e % g.C, t1 = e / g.C, wi = t1 % g.W, t2 = t1 / g.W, h = t2 % g.H,
                  n = t2 / g.H;
    float acc = 0.f;
    for (int64_t r = g.R - 1; r >= 0; --r) {
      int64_t p;
      if (!cm::out_coord(h, r, g.stride_h, 1, g.pad_top, g.P, &p)) continue;
      int64_t r0, r1;
      cm::window(p, g.R, g.stride_h, g.pad_top, g.H, &r0, &r1);
      for (int64_t s = g.S - 1; s >= 0; --s) {
        int64_t q;
        if (!cm::out_coord(wi, s, g.stride_w, 1, g.pad_left, g.Q, &q)) continue;
        int64_t s0, s1;
        cm::window(q, g.S, g.stride_w, g.pad_left, g.W, &s0, &s1);
        const float inv = 1.f / static_cast<float>((r1 - r0) * (s1 - s0));
        acc += dy[cm::y_offset(n, p, q, c, g)] * inv;
      }
    }
    dx[e] = acc;
  }
}

}  // namespace

void conv2d_forward(cudaStream_t s, float* y, const float* x, const float* w, const float* bias,
                    const cm::Geom& g, int64_t activation, float alpha) {
  const int64_t n = g.N * g.P * g.Q * g.K;
  if (n == 0) return;
  conv_fwd_kernel<<<blocks_for(n), 256, 0, s>>>(y, x, w, bias, g, activation, alpha);
  check(cudaGetLastError(), "conv2d_forward kernel launch");
}

void conv2d_backward_input(cudaStream_t s, float* dx, const float* dy, const float* w,
                           const cm::Geom& g) {
  const int64_t n = g.N * g.H * g.W * g.C;
  if (n == 0) return;
  conv_bwd_input_kernel<<<blocks_for(n), 256, 0, s>>>(dx, dy, w, g);
  check(cudaGetLastError(), "conv2d_backward_input kernel launch");
}

void conv2d_backward_weight(cudaStream_t s, float* dw, const float* dy, const float* x,
                            const cm::Geom& g) {
  const int64_t n = g.R * g.S * (g.C / g.groups) * g.K;
  if (n == 0) return;
  conv_bwd_weight_kernel<<<blocks_for(n), 256, 0, s>>>(dw, dy, x, g);
  check(cudaGetLastError(), "conv2d_backward_weight kernel launch");
}

void maxpool2d_forward(cudaStream_t s, float* y, int64_t* indices, const float* x,
                       const cm::Geom& g) {
  const int64_t n = g.N * g.P * g.Q * g.C;
  if (n == 0) return;
  maxpool_fwd_kernel<<<blocks_for(n), 256, 0, s>>>(y, indices, x, g);
  check(cudaGetLastError(), "maxpool2d_forward kernel launch");
}

void maxpool2d_backward(cudaStream_t s, float* dx, const float* dy, const int64_t* indices,
                        const cm::Geom& g, int* bad) {
  const int64_t n = g.N * g.C;
  check(cudaMemsetAsync(bad, 0, sizeof(int), s), "cudaMemsetAsync");
  if (g.N * g.H * g.W * g.C == 0) return;
  check(cudaMemsetAsync(dx, 0, sizeof(float) * g.N * g.H * g.W * g.C, s), "cudaMemsetAsync");
  if (g.P * g.Q == 0) return;
  maxpool_bwd_kernel<<<blocks_for(n), 256, 0, s>>>(dx, dy, indices, g, bad);
  check(cudaGetLastError(), "maxpool2d_backward kernel launch");
}

void avgpool2d_forward(cudaStream_t s, float* y, const float* x, const cm::Geom& g) {
  const int64_t n = g.N * g.P * g.Q * g.C;
  if (n == 0) return;
  avgpool_fwd_kernel<<<blocks_for(n), 256, 0, s>>>(y, x, g);
  check(cudaGetLastError(), "avgpool2d_forward kernel launch");
}

void avgpool2d_backward(cudaStream_t s, float* dx, const float* dy, const cm::Geom& g) {
  const int64_t n = g.N * g.H * g.W * g.C;
  if (n == 0) return;
  avgpool_bwd_kernel<<<blocks_for(n), 256, 0, s>>>(dx, dy, g);
  check(cudaGetLastError(), "avgpool2d_backward kernel launch");
}

}  // namespace fk_cuda
