// conv.cu: CUDA conv2d (forward, input and weight gradients) and max/avg pooling, NHWC.
//
// conv2d: three tiled implicit GEMMs (per group: grid.z) on the GEMM's tile machinery
// (gemm_tile.cuh: 128 x 128 x 8 block tiles, 256 threads, register prefetch + two shared
// buffers, FP32 8 x 8 register blocking or TF32 mma.sync when allowed). The A operand is never
// materialised: each thread's quads are gathered from x (or dy) through the tile loaders of
// fk_cuda/conv_math.h (zero for padding and past the edges), with 16-byte loads where a quad's
// 4 elements are consecutive and aligned (channels per group a multiple of 4, or any run that
// happens to be contiguous). No atomics; fixed summation orders (deterministic).
//   forward          y = act(im2col(x) W + bias): the epilogue is gemm_math::epilogue.
//   input gradient   one GEMM per (group, stride phase pair): the dx rows with the same
//                    (h + pt) % sh, (w + pl) % sw, over only the taps reaching them, dy
//                    gathered through the inverse map (zero outside [0, P) x [0, Q)); grid.x
//                    = phases x row tiles. No multiply-by-zero taps, as the CPU kernel.
//   weight gradient  dw = im2col(x)^T dy, the N*P*Q reduction cut into chunks (grid.z) whose
//                    partial tiles go to a workspace, summed by a second kernel in ascending
//                    chunk order in float64; the split depends on the shape only.
// The old one-element-per-thread conv kernels are gone: the tiled ones handle any size (a tiny
// conv is one block; the launch dominates either way).
// Pooling: one output element per thread (grid-stride) through the conv_math.h maps.
#include <stdexcept>
#include <string>

#include "fk_cuda/conv.cuh"
#include "fk_cuda/gemm.cuh"
#include "fk_cuda/gemm_math.h"
#include "fk_cuda/runtime.h"
#include "gemm_tile.cuh"

namespace fk_cuda {
namespace {

namespace cm = conv_math;
namespace gt = gemm_tile;
using gt::kBK;
using gt::kBM;
using gt::kBN;
using gt::kPad;
using gt::kThreads;

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

// ---- conv2d: tiled implicit GEMMs (gemm_tile.cuh machinery, conv_math.h tile loaders) ----

enum Kind { kFwd, kDgrad, kWgrad };
template <int kKind> struct TileOf;
template <> struct TileOf<kFwd> { using type = cm::ConvFwdTile; };
template <> struct TileOf<kDgrad> { using type = cm::ConvDgradTile; };
template <> struct TileOf<kWgrad> { using type = cm::ConvWgradTile; };

struct ConvArgs {
  float* out;         // y, dx, dw, or the weight gradient's partial sums
  const float* a;     // gathered GEMM operand A's source: x, dy, x
  const float* b;     // B's source: w, w, dy
  const float* bias;  // forward only (may be null)
  cm::TileGeom g;
  int64_t row_tiles;  // input gradient: grid.x = stride phases x row_tiles
  cm::SplitK sk;      // weight gradient's split of N*P*Q
  int64_t act;
  float alpha;
  bool partial;       // weight gradient: out is the (splits, groups, M, N) workspace
};

// Gathers one quad: a 16-byte load when its 4 offsets are consecutive and aligned, else
// predicated scalar loads (offset < 0 reads zero: padding, or past the matrix edge).
__device__ __forceinline__ void gather(gt::Quad& q, const float* base, const cm::Gather& o) {
  if (o.vec && gemm_math::vec4_aligned(base, o.off[0])) {
    const float4 v = __ldg(reinterpret_cast<const float4*>(base + o.off[0]));
    q.v[0] = v.x; q.v[1] = v.y; q.v[2] = v.z; q.v[3] = v.w;
    return;
  }
#pragma unroll
  for (int e = 0; e < 4; ++e) q.v[e] = o.off[e] >= 0 ? __ldg(base + o.off[e]) : 0.f;
}

// Registers -> shared buffer buf, in the slot layout the tile loader's quads have.
template <class Tile>
__device__ __forceinline__ void store_quads(gt::SmemTiles& As, gt::SmemTiles& Bs, int buf,
                                            const gt::Quad& qa, const gt::Quad& qb, int t) {
  if (Tile::kAKMajor) gt::store_kmajor(As, buf, qa, t);
  else gt::store_mmajor(As, buf, qa, t);
  if (Tile::kBKMajor) gt::store_kmajor(Bs, buf, qb, t);
  else gt::store_mmajor(Bs, buf, qb, t);
}

template <int kKind>
__device__ __forceinline__ cm::Job job_of(int64_t z, const ConvArgs& p) {
  return kKind == kFwd ? cm::fwd_job(z, p.g)
                       : (kKind == kDgrad ? cm::dgrad_job(z, p.g) : cm::wgrad_job(z, p.sk, p.g));
}

// Block (row tile, blockIdx.y) of job z (cm::fwd_job / dgrad_job / wgrad_job): the GEMM of
// one group (forward: z = blockIdx.z), of one (group, stride phase) (input gradient:
// blockIdx.x = phase * row_tiles + row tile, z = blockIdx.z + groups * phase) or of one
// (group, depth chunk) (weight gradient: z = blockIdx.z). A block past its job's extents
// returns at once (the whole block: no barrier is half-reached).
template <int kKind, bool kTf32>
__device__ __forceinline__ void conv_block(const ConvArgs& p) {
  __shared__ __align__(16) gt::SmemTiles As;
  __shared__ __align__(16) gt::SmemTiles Bs;
  const int t = threadIdx.x;
  int64_t z = blockIdx.z, row0 = int64_t(blockIdx.x) * kBM;
  if (kKind == kDgrad) {
    z += p.g.g.groups * (blockIdx.x / p.row_tiles);
    row0 = int64_t(blockIdx.x % p.row_tiles) * kBM;
  }
  const int64_t col0 = int64_t(blockIdx.y) * kBN;
  const cm::Job jb = job_of<kKind>(z, p);
  if (row0 >= jb.M || col0 >= jb.N) return;
  const int64_t ktiles = (jb.kend - jb.kbeg + kBK - 1) / kBK;
  using Tile = typename TileOf<kKind>::type;
  const Tile tile(p.g, row0, col0, z, jb.kend, t);

  // The GEMM's k loop (gemm.cu): register prefetch of the next k-step, two shared buffers.
  float acc[64];
#pragma unroll
  for (int e = 0; e < 64; ++e) acc[e] = 0.f;
  gt::Quad qa, qb;
  if (ktiles > 0) {
    gather(qa, p.a, tile.a(jb.kbeg, p.g));
    gather(qb, p.b, tile.b(jb.kbeg, p.g));
    store_quads<Tile>(As, Bs, 0, qa, qb, t);
  }
  __syncthreads();
  for (int64_t kt = 0; kt < ktiles; ++kt) {
    const int cur = static_cast<int>(kt & 1);
    const bool more = kt + 1 < ktiles;
    if (more) {
      const int64_t k0 = jb.kbeg + (kt + 1) * kBK;
      gather(qa, p.a, tile.a(k0, p.g));
      gather(qb, p.b, tile.b(k0, p.g));
    }
    if (!kTf32) gt::fp32_step(acc, As, Bs, cur, t);
    else gt::tf32_step<kKind == kDgrad>(acc, As, Bs, cur, t);
    if (more) store_quads<Tile>(As, Bs, cur ^ 1, qa, qb, t);
    __syncthreads();
  }

  if (kKind == kDgrad) {
    const cm::DgradRows rw = cm::dgrad_rows(z, p.g);
    gt::for_each_result<kTf32>(acc, t, [&](int il, int jl, float v) {
      const int64_t i = row0 + il, j = col0 + jl;
      if (i < jb.M && j < jb.N) p.out[cm::dgrad_out_offset(i, j, rw, p.g)] = v;
    });
  } else {
    const int64_t grp = z % p.g.g.groups;
    const cm::OutMap om = kKind == kFwd ? cm::fwd_out(grp, p.g)
                                        : cm::wgrad_out(z / p.g.g.groups, grp, p.partial, p.g);
    float* const out = p.out + om.base;
    const float* const bias = (kKind == kFwd && p.bias) ? p.bias + om.base : nullptr;
    gt::for_each_result<kTf32>(acc, t, [&](int il, int jl, float v) {
      const int64_t i = row0 + il, j = col0 + jl;
      if (i >= jb.M || j >= jb.N) return;
      if (kKind == kFwd)
        v = gemm_math::epilogue(v, 0.f, 1.f, 0.f, bias ? __ldg(bias + j) : 0.f, p.act, p.alpha);
      out[i * om.ld + j] = v;
    });
  }
}

// The three kernels (separate names for the resource report). Two blocks per SM, as the GEMM:
// 128 registers, which the 8 x 8 accumulators plus the gather state fit with no spills (sm_80
// and sm_90, -Xptxas -v) only because coordinates are 32-bit, the derived sizes come
// precomputed in TileGeom and the k loop is written out (docs/cuda.md has the counts).
constexpr int kConvMinBlocks = 2;
template <bool kTf32>
__global__ void __launch_bounds__(kThreads, kConvMinBlocks)
    conv_fwd_kernel(const __grid_constant__ ConvArgs p) {
  conv_block<kFwd, kTf32>(p);
}
// The TF32 input gradient (only with set_matmul_precision("high")) runs one block per SM: at
// two, its stride-phase state and the MMA fragments spill 8-56 bytes on sm_90.
template <bool kTf32>
__global__ void __launch_bounds__(kThreads, kTf32 ? 1 : kConvMinBlocks)
    conv_bwd_input_kernel(const __grid_constant__ ConvArgs p) {
  conv_block<kDgrad, kTf32>(p);
}
template <bool kTf32>
__global__ void __launch_bounds__(kThreads, kConvMinBlocks)
    conv_bwd_weight_kernel(const __grid_constant__ ConvArgs p) {
  conv_block<kWgrad, kTf32>(p);
}

// Second pass of the split weight gradient: dw[i, grp*N + j] = sum over splits in ascending
// order (float64) of the partial sums; one thread per element of dw (coalesced along k).
__global__ void conv_wgrad_reduce_kernel(float* dw, const float* part, cm::TileGeom g,
                                         cm::GemmDims d, int64_t splits) {
  FK_GRID_LOOP(e, d.M * g.g.K) {
    const int64_t i = e / g.g.K, k = e % g.g.K, grp = k / d.N, j = k % d.N;
    double s = 0.0;
    for (int64_t sp = 0; sp < splits; ++sp)
      s += static_cast<double>(part[cm::out_offset(cm::wgrad_out(sp, grp, true, g), i, j)]);
    dw[cm::out_offset(cm::wgrad_out(0, grp, false, g), i, j)] = static_cast<float>(s);
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


// Grid of a conv kernel: (row tiles of its largest job) x x_mult, column tiles, z; refused
// (ValueError, before any launch) beyond CUDA's limits.
dim3 conv_grid(const char* name, const cm::GemmDims& d, int64_t x_mult, int64_t z) {
  const int64_t gx = (d.M + kBM - 1) / kBM * x_mult, gy = (d.N + kBN - 1) / kBN;
  if (gx > 2147483647LL || gy > 65535 || z > 65535)
    throw std::invalid_argument(std::string(name) + ": the CUDA kernel's grid (" +
                                std::to_string(gx) + ", " + std::to_string(gy) + ", " +
                                std::to_string(z) + ") exceeds CUDA's limits (groups <= 65535, "
                                "channels per group <= 8388480)");
  return dim3(static_cast<unsigned>(gx), static_cast<unsigned>(gy), static_cast<unsigned>(z));
}

// TF32 only when the process allows it (set_matmul_precision("high")), as the GEMM.
bool use_tf32(int64_t depth) {
  return allow_tf32() && depth > 0 && device_properties().major >= 8;
}

}  // namespace

void conv2d_forward(cudaStream_t s, float* y, const float* x, const float* w, const float* bias,
                    const cm::Geom& g, int64_t activation, float alpha) {
  const cm::TileGeom tg = cm::tile_geom(g);
  const cm::GemmDims d = cm::fwd_dims(tg);
  if (d.M == 0 || d.N == 0) return;
  const dim3 grid = conv_grid("conv2d_forward", d, 1, g.groups);
  const ConvArgs p{y, x, w, bias, tg, 0, cm::SplitK{1, d.D}, activation, alpha, false};
  if (use_tf32(d.D)) conv_fwd_kernel<true><<<grid, kThreads, 0, s>>>(p);
  else conv_fwd_kernel<false><<<grid, kThreads, 0, s>>>(p);
  check(cudaGetLastError(), "conv2d_forward kernel launch");
}

void conv2d_backward_input(cudaStream_t s, float* dx, const float* dy, const float* w,
                           const cm::Geom& g) {
  const cm::TileGeom tg = cm::tile_geom(g);
  const cm::GemmDims d = cm::dgrad_dims(tg);  // the largest stride phase
  if (d.M == 0 || d.N == 0) return;
  const int64_t phases = cm::dgrad_jobs(tg) / g.groups;
  const dim3 grid = conv_grid("conv2d_backward_input", d, phases, g.groups);
  const ConvArgs p{dx, dy, w, nullptr, tg, (d.M + kBM - 1) / kBM, cm::SplitK{1, d.D}, 0, 0.f,
                   false};
  if (use_tf32(d.D)) conv_bwd_input_kernel<true><<<grid, kThreads, 0, s>>>(p);
  else conv_bwd_input_kernel<false><<<grid, kThreads, 0, s>>>(p);
  check(cudaGetLastError(), "conv2d_backward_input kernel launch");
}

int64_t conv2d_backward_weight_workspace(const cm::Geom& g) {
  return cm::wgrad_workspace_floats(cm::tile_geom(g));
}

void conv2d_backward_weight(cudaStream_t s, float* dw, const float* dy, const float* x,
                            const cm::Geom& g, float* workspace) {
  const cm::TileGeom tg = cm::tile_geom(g);
  const cm::GemmDims d = cm::wgrad_dims(tg);
  if (d.M == 0 || d.N == 0) return;
  const cm::SplitK sk = cm::wgrad_split(tg);
  const bool partial = sk.splits > 1;
  if (partial && !workspace)
    throw std::invalid_argument("conv2d_backward_weight: missing workspace of " +
                                std::to_string(cm::wgrad_workspace_floats(tg)) + " floats");
  const dim3 grid = conv_grid("conv2d_backward_weight", d, 1, sk.splits * g.groups);
  const ConvArgs p{partial ? workspace : dw, x, dy, nullptr, tg, 0, sk, 0, 0.f, partial};
  if (use_tf32(d.D)) conv_bwd_weight_kernel<true><<<grid, kThreads, 0, s>>>(p);
  else conv_bwd_weight_kernel<false><<<grid, kThreads, 0, s>>>(p);
  check(cudaGetLastError(), "conv2d_backward_weight kernel launch");
  if (partial) {
    conv_wgrad_reduce_kernel<<<blocks_for(d.M * g.K), 256, 0, s>>>(dw, workspace, tg, d,
                                                                   sk.splits);
    check(cudaGetLastError(), "conv2d_backward_weight reduce kernel launch");
  }
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
