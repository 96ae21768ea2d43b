// tile_math.h: the block tile of the CUDA GEMM-shaped kernels (gemm.cu, conv.cu) and which
// thread loads which part of it. A block of kTileThreads threads computes a kTileM x kTileN tile
// of C, walking the depth kTileK at a time; each thread loads 4 elements of the A tile
// (kTileK x kTileM, stored k-major) and 4 of the B tile (kTileK x kTileN) per k-step, as one
// "quad" that is contiguous in memory either along k (k-major quad) or along m / n (m-major
// quad). Plain integer math (FK_HD): the kernels call it, and fkeras._C_cuda_host uses it to
// emulate the tile loaders on the CPU (tests/cuda/test_conv_math_host.py).
#pragma once

#include <stdint.h>

#include "fk_cuda/hd.h"

namespace fk_cuda {
namespace tile_math {

constexpr int kTileM = 128, kTileN = 128, kTileK = 8, kTileThreads = 256;

// Slot of element e (0..3) of thread t's quad in a kTileK x 128 shared tile: its k row and its
// m (or n) column.
struct Slot { int k, m; };

// Quad contiguous along k: tile column t / 2, k rows (t % 2) * 4 + e.
FK_HD Slot kmajor_slot(int t, int e) { return {(t % 2) * 4 + e, t / 2}; }
// Quad contiguous along m: k row t / 32, columns (t % 32) * 4 + e.
FK_HD Slot mmajor_slot(int t, int e) { return {t / 32, (t % 32) * 4 + e}; }
FK_HD Slot quad_slot(bool kmajor, int t, int e) {
  return kmajor ? kmajor_slot(t, e) : mmajor_slot(t, e);
}

// Quotient and remainder of a / b (a >= 0, b >= 1) with a 32-bit division when both fit:
// 64-bit integer division is a long instruction sequence on the GPU.
struct QR { int64_t q, r; };
FK_HD QR qdiv(int64_t a, int64_t b) {
  if (((a | b) >> 32) == 0) {
    const uint32_t ua = static_cast<uint32_t>(a), ub = static_cast<uint32_t>(b);
    const uint32_t q = ua / ub;
    return {static_cast<int64_t>(q), static_cast<int64_t>(ua - q * ub)};
  }
  const int64_t q = a / b;
  return {q, a - q * b};
}

}  // namespace tile_math
}  // namespace fk_cuda
