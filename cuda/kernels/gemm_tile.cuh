// gemm_tile.cuh: the block-tile machinery shared by the GEMM (gemm.cu) and the implicit-GEMM
// convolutions (conv.cu): 128 x 128 x 8 tiles, 256 threads, k-major shared tiles padded to 136
// floats, register prefetch of the next k-tile into two shared buffers (one barrier per
// k-step), and two inner products:
//   FP32: each thread owns an 8 x 8 block of C (two 4-row x two 4-col quads, rows ty*4 and
//   64 + ty*4), outer products from float4 shared reads, exact FP32 FMA in ascending k.
//   TF32 (sm_80+, callers choose it only when allowed): 8 warps as 2 x 4, each warp 64 x 32 of
//   C as 4 x 4 mma.sync.aligned.m16n8k8 tiles (inputs rounded with cvt.rna, FP32 accumulation).
// Each kernel writes its own k loop (load the next quads into registers, one k-step on the
// current buffer, store the quads into the other buffer, one barrier): behind a generic loop
// with a loader object, ptxas spilled at the 128-register cap. Which thread fills which shared
// slot is fk_cuda/tile_math.h (checked on the host).
#pragma once

#include <cuda_runtime.h>
#include <stdint.h>

#include "fk_cuda/tile_math.h"

namespace fk_cuda {
namespace gemm_tile {

constexpr int kBM = 128, kBN = 128, kBK = 8, kThreads = 256, kPad = 136;
static_assert(kBM == tile_math::kTileM && kBN == tile_math::kTileN &&
                  kBK == tile_math::kTileK && kThreads == tile_math::kTileThreads,
              "gemm_tile and tile_math must describe the same tile");

// One thread's 4 elements of an A or B tile for one k-step.
struct Quad { float v[4]; };

// The two shared buffers of one operand tile. Functions take the whole array and a buffer index
// (not a pointer to one buffer) so the compiler keeps shared-space 32-bit addressing.
using SmemTiles = float[2][kBK][kPad];

// Quad contiguous along k (tile_math::kmajor_slot): S[(t%2)*4 + e][t/2].
__device__ __forceinline__ void store_kmajor(SmemTiles& S, int buf, const Quad& q, int t) {
#pragma unroll
  for (int e = 0; e < 4; ++e) S[buf][(t % 2) * 4 + e][t / 2] = q.v[e];
}
// Quad contiguous along m / n (tile_math::mmajor_slot): one float4 at S[t/32][(t%32)*4].
__device__ __forceinline__ void store_mmajor(SmemTiles& S, int buf, const Quad& q, int t) {
  *reinterpret_cast<float4*>(&S[buf][t / 32][(t % 32) * 4]) =
      make_float4(q.v[0], q.v[1], q.v[2], q.v[3]);
}

__device__ __forceinline__ uint32_t to_tf32(float x) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
  return r;
#else
  return __float_as_uint(x);
#endif
}

// acc += As^T Bs over one k-tile (FP32 outer products).
__device__ __forceinline__ void fp32_step(float (&acc)[64], const SmemTiles& As,
                                          const SmemTiles& Bs, int cur, int t) {
  const int ty = t / 16, tx = t % 16;
#pragma unroll
  for (int k = 0; k < kBK; ++k) {
    float a[8], b[8];
    const float4 a0 = *reinterpret_cast<const float4*>(&As[cur][k][ty * 4]);
    const float4 a1 = *reinterpret_cast<const float4*>(&As[cur][k][64 + ty * 4]);
    const float4 b0 = *reinterpret_cast<const float4*>(&Bs[cur][k][tx * 4]);
    const float4 b1 = *reinterpret_cast<const float4*>(&Bs[cur][k][64 + tx * 4]);
    a[0] = a0.x; a[1] = a0.y; a[2] = a0.z; a[3] = a0.w;
    a[4] = a1.x; a[5] = a1.y; a[6] = a1.z; a[7] = a1.w;
    b[0] = b0.x; b[1] = b0.y; b[2] = b0.z; b[3] = b0.w;
    b[4] = b1.x; b[5] = b1.y; b[6] = b1.z; b[7] = b1.w;
#pragma unroll
    for (int r = 0; r < 8; ++r)
#pragma unroll
      for (int c = 0; c < 8; ++c) acc[r * 8 + c] = fmaf(a[r], b[c], acc[r * 8 + c]);
  }
}

// acc += As^T Bs over one k-tile (TF32 tensor cores; a no-op below sm_80, never launched there).
// kLean (conv.cu's input gradient): the A fragments of one 16-row slice at a time instead of
// all four up front, 12 fragment registers instead of 24, the same MMAs in the same order.
template <bool kLean = false>
__device__ __forceinline__ void tf32_step(float (&acc)[64], const SmemTiles& As,
                                          const SmemTiles& Bs, int cur, int t) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const int warp = t / 32, lane = t % 32;
  const int wm = warp / 4, wn = warp % 4, g = lane / 4, tq = lane % 4;
  uint32_t af[4][4], bf[4][2];
  auto load_a = [&](int mi) {
    const int m = wm * 64 + mi * 16 + g;
    af[mi][0] = to_tf32(As[cur][tq][m]);
    af[mi][1] = to_tf32(As[cur][tq][m + 8]);
    af[mi][2] = to_tf32(As[cur][tq + 4][m]);
    af[mi][3] = to_tf32(As[cur][tq + 4][m + 8]);
  };
  if (!kLean) {
#pragma unroll
    for (int mi = 0; mi < 4; ++mi) load_a(mi);
  }
#pragma unroll
  for (int ni = 0; ni < 4; ++ni) {
    const int n = wn * 32 + ni * 8 + g;
    bf[ni][0] = to_tf32(Bs[cur][tq][n]);
    bf[ni][1] = to_tf32(Bs[cur][tq + 4][n]);
  }
#pragma unroll
  for (int mi = 0; mi < 4; ++mi) {
    if (kLean) load_a(mi);
#pragma unroll
    for (int ni = 0; ni < 4; ++ni) {
      float* d = &acc[(mi * 4 + ni) * 4];
      asm volatile(
          "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
          "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
          : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
          : "r"(af[mi][0]), "r"(af[mi][1]), "r"(af[mi][2]), "r"(af[mi][3]),
            "r"(bf[ni][0]), "r"(bf[ni][1]));
    }
  }
#endif
}

// Calls put(i, j, value) for each accumulator of thread t, (i, j) within the block tile.
template <bool kTf32, class Put>
__device__ __forceinline__ void for_each_result(const float (&acc)[64], int t, Put&& put) {
  if (!kTf32) {
    const int ty = t / 16, tx = t % 16;
#pragma unroll
    for (int r = 0; r < 8; ++r) {
      const int i = r < 4 ? ty * 4 + r : 64 + ty * 4 + (r - 4);
#pragma unroll
      for (int c = 0; c < 8; ++c)
        put(i, c < 4 ? tx * 4 + c : 64 + tx * 4 + (c - 4), acc[r * 8 + c]);
    }
  } else {
    // Accumulator fragment of m16n8: d0 (g, 2tq), d1 (g, 2tq+1), d2 (g+8, 2tq), d3 (g+8, 2tq+1).
    const int warp = t / 32, lane = t % 32;
    const int wm = warp / 4, wn = warp % 4, g = lane / 4, tq = lane % 4;
#pragma unroll
    for (int mi = 0; mi < 4; ++mi)
#pragma unroll
      for (int ni = 0; ni < 4; ++ni) {
        const float* d = &acc[(mi * 4 + ni) * 4];
        const int i = wm * 64 + mi * 16 + g, j = wn * 32 + ni * 8 + 2 * tq;
        put(i, j, d[0]);
        put(i, j + 1, d[1]);
        put(i + 8, j, d[2]);
        put(i + 8, j + 1, d[3]);
      }
  }
}

}  // namespace gemm_tile
}  // namespace fk_cuda
