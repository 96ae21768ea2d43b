// column_sums.h: the column sums of a bias gradient, one rule for every kernel that computes
// one (bias_activation_backward and dense_backward in cpp/gemm/dense.cpp,
// conv2d_maxpool2d_backward in cpp/conv/conv_pool.cpp), so that a fused kernel's bias gradient
// is bit-identical to the unfused pair's:
//   - the M rows are cut into chunks by size only: each of >= 16K elements (a pool wake-up is
//     worth it), at most 16, so the result is the same for every thread count;
//   - a chunk sums its rows in groups of 8 in float (added pairwise), each group's sums added
//     to the chunk's float64 column totals, and the rows left over added one by one;
//   - the chunks' totals are added in chunk order, then rounded to float once.
// Everything is in an anonymous namespace: per-ISA translation units include this header with
// their own -m flags, and each must get its own copy of the loops.
#pragma once

#include <cstdint>

namespace fk {
namespace colsum {
namespace {

struct Chunks {
  int64_t rows, blocks;  // rows per chunk (the last may be shorter), number of chunks
};

inline Chunks chunks(int64_t M, int64_t N) {
  int64_t n = 16;
  if (M * N / (int64_t(1) << 14) < n) n = M * N / (int64_t(1) << 14);
  if (M < n) n = M;
  if (n < 1) n = 1;
  const int64_t rows = (M + n - 1) / n;
  return {rows, (M + rows - 1) / rows};
}

// acc (w) += the float sums of 8 rows p (8, w) (stride ld), added pairwise, then in float64.
inline void add_group(double* __restrict acc, const float* __restrict p, int64_t ld, int64_t w) {
  for (int64_t j = 0; j < w; ++j) {
    const float a = (p[j] + p[ld + j]) + (p[2 * ld + j] + p[3 * ld + j]);
    const float b = (p[4 * ld + j] + p[5 * ld + j]) + (p[6 * ld + j] + p[7 * ld + j]);
    acc[j] += static_cast<double>(a + b);
  }
}

// acc (w) += one leftover row p (w).
inline void add_row(double* __restrict acc, const float* __restrict p, int64_t w) {
  for (int64_t j = 0; j < w; ++j) acc[j] += static_cast<double>(p[j]);
}

// out (N) = the chunks' totals partial (blocks, N) added in chunk order, rounded once.
inline void finish(float* out, const double* partial, int64_t blocks, int64_t N) {
  for (int64_t j = 0; j < N; ++j) {
    double s = 0.0;
    for (int64_t b = 0; b < blocks; ++b) s += partial[b * N + j];
    out[j] = static_cast<float>(s);
  }
}

}  // namespace
}  // namespace colsum
}  // namespace fk
