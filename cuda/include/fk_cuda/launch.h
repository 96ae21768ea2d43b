// launch.h: grid and workspace arithmetic shared by the CUDA launchers and their CPU tests.
// Plain integer math (FK_HD): compiled by nvcc into fkeras._C_cuda and by g++ into
// fkeras._C_cuda_host, where tests/cuda/test_launch_host.py checks it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "fk_cuda/hd.h"

namespace fk_cuda {

// Largest 1-D grid the launchers ask for: kernels use grid-stride loops, so a grid capped here
// still covers any n (gridDim.x may be up to 2^31-1; more blocks than this only add overhead).
constexpr int64_t kMaxBlocks1D = 65535LL * 32;

// A 1-D launch: `blocks` blocks of `threads` threads; blocks * threads >= n unless capped.
struct Launch1D {
  unsigned blocks;
  unsigned threads;
};

FK_HD int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Rounds bytes up to a multiple of align (a power of two).
FK_HD size_t align_up(size_t bytes, size_t align) { return (bytes + align - 1) & ~(align - 1); }

// Grid for n elements at `threads` per block (threads in [1, 1024]); n <= 0 gives 0 blocks
// (launchers skip the launch). Capped at max_blocks: kernels must grid-stride.
FK_HD Launch1D launch_config(int64_t n, int threads = 256, int64_t max_blocks = kMaxBlocks1D) {
  Launch1D c;
  c.threads = static_cast<unsigned>(threads < 1 ? 1 : (threads > 1024 ? 1024 : threads));
  if (n <= 0) {
    c.blocks = 0;
    return c;
  }
  int64_t b = ceil_div(n, static_cast<int64_t>(c.threads));
  if (b > max_blocks) b = max_blocks;
  c.blocks = static_cast<unsigned>(b);
  return c;
}

// A 2-D launch over a rows x cols matrix with tile_rows x tile_cols elements per block:
// grid.x covers columns, grid.y rows (y capped at 65535: kernels stride over rows).
struct Launch2D {
  unsigned grid_x, grid_y;
};

FK_HD Launch2D launch_config_2d(int64_t rows, int64_t cols, int tile_rows, int tile_cols) {
  Launch2D c;
  if (rows <= 0 || cols <= 0 || tile_rows <= 0 || tile_cols <= 0) {
    c.grid_x = c.grid_y = 0;
    return c;
  }
  int64_t gx = ceil_div(cols, tile_cols), gy = ceil_div(rows, tile_rows);
  if (gx > 2147483647LL) gx = 2147483647LL;
  if (gy > 65535) gy = 65535;
  c.grid_x = static_cast<unsigned>(gx);
  c.grid_y = static_cast<unsigned>(gy);
  return c;
}

// Workspace sizing: a kernel that needs several scratch buffers asks for one block and carves
// it. add() returns the byte offset of a sub-buffer, each aligned to `align` (256: the
// allocator's and cudaMalloc's alignment, enough for 16-byte vector loads).
struct WorkspaceLayout {
  size_t total = 0;
  size_t align = 256;
  FK_HD size_t add(size_t bytes) {
    size_t off = align_up(total, align);
    total = off + bytes;
    return off;
  }
  FK_HD size_t bytes() const { return align_up(total, align); }
};

}  // namespace fk_cuda
