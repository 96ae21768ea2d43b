// gemm.cu: the CUDA GEMM of fkeras (row-major float32), our own tiled kernel, on the tile
// machinery of gemm_tile.cuh (shared with conv.cu: shared-tile stores, FP32 / TF32 k-steps).
//
// Block tile 128 x 128 x 8, 256 threads. Each k-step, the threads load the next A and B tiles
// from global memory into registers (16-byte vector loads where the four elements are in
// bounds, contiguous and aligned, else predicated scalar loads with zero fill) while computing
// on the current shared-memory tiles; the registers then go to the other shared buffer (double
// buffering, one barrier per k-step). Shared tiles are k-major (As[k][m], Bs[k][n]) padded to
// 136 floats so the TF32 fragment reads are conflict free.
//   FP32 path: each thread owns an 8 x 8 block of C (two 4-row x two 4-col quads, rows ty*4 and
//   64 + ty*4), outer products from float4 shared reads.
//   TF32 path (sm_80+, only when allowed): 8 warps as 2 x 4, each warp 64 x 32 of C as 4 x 4
//   mma.sync.aligned.m16n8k8 tiles (inputs rounded to TF32 with cvt.rna, FP32 accumulation).
// The epilogue (gemm_math::epilogue: alpha/beta, bias, activation) is applied in the store,
// bounds-checked per element.
#include <atomic>
#include <stdexcept>
#include <string>

#include "fk_cuda/gemm.cuh"
#include "fk_cuda/gemm_math.h"
#include "gemm_tile.cuh"

namespace fk_cuda {
namespace {

namespace gm = gemm_math;

namespace gt = gemm_tile;
using gt::kBK;
using gt::kBM;
using gt::kBN;
using gt::kPad;
using gt::kThreads;
using gt::Quad;

std::atomic<bool> g_allow_tf32{false};

void check(cudaError_t e, const char* call) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string("CUDA error in ") + call + ": " + cudaGetErrorString(e));
}

struct GemmArgs {
  float* C;
  const float* A;
  const float* B;
  const float* bias;
  int64_t M, N, K, lda, ldb, ldc, act;
  float alpha, beta, act_alpha;
};

// One thread's share of a 128 x 8 A tile (or 8 x 128 B tile): 4 elements that are contiguous in
// memory for the given layout. Non-transposed A (M x K): row t/2, k (t%2)*4 .. +3 (contiguous
// in k: a k-major quad, tile_math::kmajor_slot). Transposed A (K x M): k t/32, rows
// (t%32)*4 .. +3 (contiguous in m: an m-major quad). B likewise.
template <bool kTransA>
__device__ __forceinline__ void load_a(Quad& q, const GemmArgs& p, int64_t row0, int64_t k0,
                                       int t) {
  int64_t i, k;
  if (!kTransA) { i = row0 + t / 2; k = k0 + (t % 2) * 4; }
  else          { i = row0 + (t % 32) * 4; k = k0 + t / 32; }
  const int64_t off = gm::a_offset(i, k, kTransA, p.lda);
  const bool full = kTransA ? (i + 3 < p.M && k < p.K) : (i < p.M && k + 3 < p.K);
  if (full && gm::vec4_aligned(p.A, off)) {
    const float4 v = __ldg(reinterpret_cast<const float4*>(p.A + off));
    q.v[0] = v.x; q.v[1] = v.y; q.v[2] = v.z; q.v[3] = v.w;
    return;
  }
#pragma unroll
  for (int e = 0; e < 4; ++e) {
    const int64_t ii = kTransA ? i + e : i, kk = kTransA ? k : k + e;
    q.v[e] = (ii < p.M && kk < p.K) ? __ldg(p.A + gm::a_offset(ii, kk, kTransA, p.lda)) : 0.f;
  }
}

template <bool kTransB>
__device__ __forceinline__ void load_b(Quad& q, const GemmArgs& p, int64_t col0, int64_t k0,
                                       int t) {
  int64_t j, k;
  if (!kTransB) { j = col0 + (t % 32) * 4; k = k0 + t / 32; }
  else          { j = col0 + t / 2; k = k0 + (t % 2) * 4; }
  const int64_t off = gm::b_offset(k, j, kTransB, p.ldb);
  const bool full = kTransB ? (j < p.N && k + 3 < p.K) : (j + 3 < p.N && k < p.K);
  if (full && gm::vec4_aligned(p.B, off)) {
    const float4 v = __ldg(reinterpret_cast<const float4*>(p.B + off));
    q.v[0] = v.x; q.v[1] = v.y; q.v[2] = v.z; q.v[3] = v.w;
    return;
  }
#pragma unroll
  for (int e = 0; e < 4; ++e) {
    const int64_t jj = kTransB ? j : j + e, kk = kTransB ? k + e : k;
    q.v[e] = (jj < p.N && kk < p.K) ? __ldg(p.B + gm::b_offset(kk, jj, kTransB, p.ldb)) : 0.f;
  }
}

// Shared-tile stores of the A / B quads (non-transposed A and transposed B quads run along k).
template <bool kTransA>
__device__ __forceinline__ void store_a(gt::SmemTiles& As, int buf, const Quad& q, int t) {
  if (!kTransA) gt::store_kmajor(As, buf, q, t);
  else gt::store_mmajor(As, buf, q, t);
}

template <bool kTransB>
__device__ __forceinline__ void store_b(gt::SmemTiles& Bs, int buf, const Quad& q, int t) {
  if (!kTransB) gt::store_mmajor(Bs, buf, q, t);
  else gt::store_kmajor(Bs, buf, q, t);
}

__device__ __forceinline__ void store_c(const GemmArgs& p, int64_t i, int64_t j, float acc) {
  if (!gm::in_bounds(i, j, p.M, p.N)) return;
  float* c = p.C + i * p.ldc + j;
  const float old = p.beta != 0.f ? *c : 0.f;
  const float b = p.bias ? __ldg(p.bias + j) : 0.f;
  *c = gm::epilogue(acc, old, p.alpha, p.beta, b, p.act, p.act_alpha);
}

// kTf32: tensor-core inner product (sm_80+); otherwise exact FP32 outer products. The
// epilogue is written out here rather than through gt::for_each_result (as conv.cu does):
// through the lambda, ptxas spills NN / TT FP32 at the 128-register cap (-Xptxas -v, nvcc
// 13.0); written out it does not.
template <bool kTransA, bool kTransB, bool kTf32>
__global__ void __launch_bounds__(kThreads, 2) gemm_kernel(GemmArgs p) {
  __shared__ __align__(16) gt::SmemTiles As;
  __shared__ __align__(16) gt::SmemTiles Bs;
  const int t = threadIdx.x;
  const int64_t row0 = gm::tile_origin(blockIdx.x, kBM);
  const int64_t col0 = gm::tile_origin(blockIdx.y, kBN);
  const int64_t ktiles = gm::tile_count(p.K, kBK);

  float acc[64];
#pragma unroll
  for (int e = 0; e < 64; ++e) acc[e] = 0.f;

  Quad qa, qb;
  if (ktiles > 0) {
    load_a<kTransA>(qa, p, row0, 0, t);
    load_b<kTransB>(qb, p, col0, 0, t);
    store_a<kTransA>(As, 0, qa, t);
    store_b<kTransB>(Bs, 0, qb, t);
  }
  __syncthreads();

  const int ty = t / 16, tx = t % 16;            // FP32 layout
  const int warp = t / 32, lane = t % 32;         // TF32 layout
  const int wm = warp / 4, wn = warp % 4, g = lane / 4, tq = lane % 4;

  for (int64_t kt = 0; kt < ktiles; ++kt) {
    const int cur = static_cast<int>(kt & 1);
    const bool more = kt + 1 < ktiles;
    if (more) {
      load_a<kTransA>(qa, p, row0, (kt + 1) * kBK, t);
      load_b<kTransB>(qb, p, col0, (kt + 1) * kBK, t);
    }
    if (!kTf32) gt::fp32_step(acc, As, Bs, cur, t);
    else gt::tf32_step(acc, As, Bs, cur, t);
    if (more) {
      store_a<kTransA>(As, cur ^ 1, qa, t);
      store_b<kTransB>(Bs, cur ^ 1, qb, t);
    }
    __syncthreads();
  }

  if (!kTf32) {
#pragma unroll
    for (int r = 0; r < 8; ++r) {
      const int64_t i = row0 + (r < 4 ? ty * 4 + r : 64 + ty * 4 + (r - 4));
#pragma unroll
      for (int c = 0; c < 8; ++c) {
        const int64_t j = col0 + (c < 4 ? tx * 4 + c : 64 + tx * 4 + (c - 4));
        store_c(p, i, j, acc[r * 8 + c]);
      }
    }
  } else {
    // Accumulator fragment of m16n8: d0 (g, 2tq), d1 (g, 2tq+1), d2 (g+8, 2tq), d3 (g+8, 2tq+1).
#pragma unroll
    for (int mi = 0; mi < 4; ++mi)
#pragma unroll
      for (int ni = 0; ni < 4; ++ni) {
        const float* d = &acc[(mi * 4 + ni) * 4];
        const int64_t i = row0 + wm * 64 + mi * 16 + g;
        const int64_t j = col0 + wn * 32 + ni * 8 + 2 * tq;
        store_c(p, i, j, d[0]);
        store_c(p, i, j + 1, d[1]);
        store_c(p, i + 8, j, d[2]);
        store_c(p, i + 8, j + 1, d[3]);
      }
  }
}

template <bool kTf32>
void launch(cudaStream_t s, dim3 grid, const GemmArgs& p, bool ta, bool tb) {
  if (!ta && !tb) gemm_kernel<false, false, kTf32><<<grid, kThreads, 0, s>>>(p);
  else if (!ta && tb) gemm_kernel<false, true, kTf32><<<grid, kThreads, 0, s>>>(p);
  else if (ta && !tb) gemm_kernel<true, false, kTf32><<<grid, kThreads, 0, s>>>(p);
  else gemm_kernel<true, true, kTf32><<<grid, kThreads, 0, s>>>(p);
}

bool device_has_tf32() {
  int dev = 0, major = 0;
  check(cudaGetDevice(&dev), "cudaGetDevice");
  check(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev),
        "cudaDeviceGetAttribute");
  return major >= 8;
}

// dz = dy * act'(y); one thread per element (grid-stride).
__global__ void dz_kernel(float* dz, const float* dy, const float* y, int64_t n, int64_t act,
                          float alpha) {
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < n;
       e += int64_t(gridDim.x) * blockDim.x)
    dz[e] = gm::dz_value(dy[e], act == gm::kLinear ? 0.f : y[e], act, alpha);
}

// dbias[j] = sum over rows of dz[:, j] (recomputed from dy, y), float64 in a fixed order:
// a 32 x 8 block handles 32 columns; the 8 row-lanes take rows r, r+8, ... and are reduced in
// shared memory in lane order (deterministic).
__global__ void colsum_kernel(float* dbias, const float* dy, const float* y, int64_t M,
                              int64_t N, int64_t act, float alpha) {
  __shared__ double part[8][33];
  const int64_t j = blockIdx.x * int64_t(32) + threadIdx.x;
  double s = 0.0;
  if (j < N)
    for (int64_t i = threadIdx.y; i < M; i += 8) {
      const int64_t e = i * N + j;
      s += static_cast<double>(gm::dz_value(dy[e], act == gm::kLinear ? 0.f : y[e], act, alpha));
    }
  part[threadIdx.y][threadIdx.x] = s;
  __syncthreads();
  if (threadIdx.y == 0 && j < N) {
    double tot = 0.0;
    for (int r = 0; r < 8; ++r) tot += part[r][threadIdx.x];
    dbias[j] = static_cast<float>(tot);
  }
}

}  // namespace

void set_allow_tf32(bool allow) { g_allow_tf32.store(allow); }
bool allow_tf32() { return g_allow_tf32.load(); }

void gemm_ex(cudaStream_t stream, float* C, const float* A, const float* B, int64_t M, int64_t N,
             int64_t K, bool trans_a, bool trans_b, float alpha, float beta, int64_t lda,
             int64_t ldb, int64_t ldc, bool allow_tf32_, const float* bias, int64_t act,
             float act_alpha) {
  if (M < 0 || N < 0 || K < 0) throw std::invalid_argument("gemm: M, N, K must be >= 0");
  if (M == 0 || N == 0) return;
  const int64_t gx = gm::tile_count(M, kBM), gy = gm::tile_count(N, kBN);
  if (gx > 2147483647LL || gy > 65535)
    throw std::invalid_argument("gemm: N = " + std::to_string(N) +
                                " needs more than 65535 column tiles of 128");
  GemmArgs p{C, A, B, bias, M, N, K, lda, ldb, ldc, act, alpha, beta, act_alpha};
  if (alpha == 0.f) p.K = 0;  // never reads A or B, as the CPU gemm
  const dim3 grid(static_cast<unsigned>(gx), static_cast<unsigned>(gy));
  if (allow_tf32_ && p.K > 0 && device_has_tf32())
    launch<true>(stream, grid, p, trans_a, trans_b);
  else
    launch<false>(stream, grid, p, trans_a, trans_b);
  check(cudaGetLastError(), "gemm kernel launch");
}

void gemm(cudaStream_t stream, float* C, const float* A, const float* B, int64_t M, int64_t N,
          int64_t K, bool trans_a, bool trans_b, float alpha, float beta, int64_t lda,
          int64_t ldb, int64_t ldc, bool allow_tf32_) {
  gemm_ex(stream, C, A, B, M, N, K, trans_a, trans_b, alpha, beta, lda, ldb, ldc, allow_tf32_,
          nullptr, gm::kLinear, 0.f);
}

void dense_dz_colsum(cudaStream_t stream, float* dz, float* dbias, const float* dy,
                     const float* y, int64_t M, int64_t N, int64_t act, float act_alpha) {
  if (N == 0) return;
  if (dz && M > 0) {
    const int64_t n = M * N;
    const int64_t blocks = (n + 255) / 256 < 65536 ? (n + 255) / 256 : 65536;
    dz_kernel<<<static_cast<unsigned>(blocks), 256, 0, stream>>>(dz, dy, y, n, act, act_alpha);
    check(cudaGetLastError(), "dense dz kernel launch");
  }
  if (dbias) {
    colsum_kernel<<<static_cast<unsigned>((N + 31) / 32), dim3(32, 8), 0, stream>>>(
        dbias, dy, y, M, N, act, act_alpha);
    check(cudaGetLastError(), "dense colsum kernel launch");
  }
}

}  // namespace fk_cuda
