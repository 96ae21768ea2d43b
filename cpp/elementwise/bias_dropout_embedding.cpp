// bias_dropout_embedding.cpp: bias_add_*, dropout_* and embedding_* (kernels.h), plus the
// portable build of the dropout mask kernel (dropout.inc). The rest is memory-bound and
// vectorizes well enough at the portable baseline.
//
// Layouts and write semantics (every output OVERWRITTEN):
//   bias_add_forward   y (rows, cols) = x (rows, cols) + b (cols)
//   bias_add_backward  db (cols) = sum over rows of dy (rows, cols): groups of 8 rows in float,
//                      their totals in double, in a fixed order (independent of thread count)
//   dropout_forward    y, mask (n) from x (n), rate, seed: the counter-based mask of kernels.h;
//                      mask is the saved state
//   dropout_backward   dx (n) = dy (n) * mask (n)
//   embedding_forward  y (n, D) = table (V, D)[indices (n)]
//   embedding_backward dtable (V, D) = scatter-add of dy (n, D) at indices (n); zero elsewhere.
//                      Threads own disjoint ranges of table rows and each scans all indices, so
//                      repeated indices add up in index order: no atomics, deterministic.
// Indices are range-checked by the bindings.
#define FK_EW_NS scalar
#include "dropout.inc"

#include <cmath>
#include <cstring>
#include <memory>

#include "fkeras/common.h"
#include "fkeras/kernels.h"
#include "fkeras/runtime.h"

namespace fk {
namespace {

constexpr int64_t kGrain = 1 << 16;  // elements per chunk for memory-bound loops

int64_t rows_per_chunk(int64_t cols) { return cols >= kGrain ? 1 : kGrain / (cols > 0 ? cols : 1); }

constexpr int64_t kColumnBlock = 2048;  // columns per bias-gradient task (16 KB of doubles)
// acc (c1 - c0) = sums of dy (rows, cols) over rows [r0, r1), columns [c0, c1) (overwritten).
// Rows are added in float in groups of 8 (pairwise: ~1 ulp), each group total in double:
// double accuracy at nearly the speed of a float sum.
void column_sums(double* acc, const float* dy, int64_t r0, int64_t r1, int64_t cols, int64_t c0,
                 int64_t c1) {
  const int64_t w = c1 - c0;
  for (int64_t j = 0; j < w; ++j) acc[j] = 0.0;
  int64_t r = r0;
  for (; r + 8 <= r1; r += 8) {
    const float* p = dy + r * cols + c0;  // 8 rows of (w), stride cols
    const int64_t s = cols;
    for (int64_t j = 0; j < w; ++j) {
      const float a = (p[j] + p[s + j]) + (p[2 * s + j] + p[3 * s + j]);
      const float b = (p[4 * s + j] + p[5 * s + j]) + (p[6 * s + j] + p[7 * s + j]);
      acc[j] += static_cast<double>(a + b);
    }
  }
  for (; r < r1; ++r) {
    const float* row = dy + r * cols + c0;  // (w)
    for (int64_t j = 0; j < w; ++j) acc[j] += row[j];
  }
}

}  // namespace

void bias_add_forward(float* y, const float* x, const float* b, int64_t rows, int64_t cols) {
  parallel_for(rows, rows_per_chunk(cols), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const float* xr = x + r * cols;  // (cols)
      float* yr = y + r * cols;        // (cols)
      for (int64_t j = 0; j < cols; ++j) yr[j] = xr[j] + b[j];
    }
  });
}

void bias_add_backward(float* db, const float* dy, int64_t rows, int64_t cols) {
  // A grid of tasks: column blocks of kColumnBlock x row chunks, the chunks only as many as it
  // takes to reach ~kTasks tasks. Each task reads its rows' segments contiguously into double
  // partial sums; the partials are added in chunk order. The grid depends on the sizes only, so
  // the result is the same for any thread count.
  constexpr int64_t kTasks = 16;
  if (cols == 0) return;
  const int64_t total = rows * cols;
  const int64_t blocks = (cols + kColumnBlock - 1) / kColumnBlock;
  int64_t chunks = kTasks / blocks;
  if (total / kGrain < chunks) chunks = total / kGrain;
  if (rows < chunks) chunks = rows;
  if (chunks < 1) chunks = 1;
  const int64_t chunk_rows = (rows + chunks - 1) / chunks;
  // (chunks, cols), every element written by one task.
  std::unique_ptr<double[]> partial(new double[static_cast<size_t>(chunks * cols)]);
  parallel_for(chunks * blocks, 1, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t k = t / blocks, c0 = (t % blocks) * kColumnBlock;
      const int64_t c1 = c0 + kColumnBlock < cols ? c0 + kColumnBlock : cols;
      const int64_t r0 = k * chunk_rows < rows ? k * chunk_rows : rows;
      const int64_t r1 = r0 + chunk_rows < rows ? r0 + chunk_rows : rows;
      column_sums(partial.get() + k * cols + c0, dy, r0, r1, cols, c0, c1);
    }
  });
  parallel_for(cols, kGrain, [&](int64_t c0, int64_t c1) {
    for (int64_t j = c0; j < c1; ++j) {
      double s = 0.0;
      for (int64_t k = 0; k < chunks; ++k) s += partial[static_cast<size_t>(k * cols + j)];
      db[j] = static_cast<float>(s);
    }
  });
}

void dropout_forward(float* y, float* mask, const float* x, int64_t n, float rate, int64_t seed) {
  FK_CHECK(rate >= 0.0f && rate <= 1.0f, "dropout_forward: rate must be in [0, 1], got ", rate);
  // u >= rate  <=>  (z >> 40) >= rate * 2^24  <=>  (z >> 40) >= ceil(rate * 2^24): exact.
  const uint32_t threshold =
      static_cast<uint32_t>(std::ceil(static_cast<double>(rate) * 16777216.0));
  const float scale = 1.0f / (1.0f - rate);  // inf for rate 1, never selected then
  const ew::DropoutKernels& k = ew::for_isa(ew::scalar::dropout_kernels, ew::avx2::dropout_kernels,
                                            ew::avx512::dropout_kernels);
  parallel_for(n, kGrain / 2, [&](int64_t b, int64_t e) {
    k.forward(y + b, mask + b, x + b, e - b, b, static_cast<uint64_t>(seed), threshold, scale);
  });
}

void dropout_backward(float* dx, const float* dy, const float* mask, int64_t n) {
  parallel_for(n, kGrain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) dx[i] = dy[i] * mask[i];
  });
}

void embedding_forward(float* y, const int64_t* indices, const float* table, int64_t n,
                       int64_t V, int64_t D) {
  (void)V;
  if (D == 0) return;
  parallel_for(n, rows_per_chunk(D), [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i)
      std::memcpy(y + i * D, table + indices[i] * D, static_cast<size_t>(D) * sizeof(float));
  });
}

void embedding_backward(float* dtable, const float* dy, const int64_t* indices, int64_t n,
                        int64_t V, int64_t D) {
  if (D == 0) return;
  // Each chunk of table rows costs its zeroing plus a scan of all n indices: keep the scans
  // (chunks * n) below a quarter of the useful work (V * D + n * D).
  const int64_t work = V * D + n * D;
  const int64_t by_cost = work / (4 * (n > 0 ? n : 1));
  const int64_t by_threads = 4 * static_cast<int64_t>(num_threads());
  int64_t chunks = by_cost < by_threads ? by_cost : by_threads;
  if (work <= kGrain || chunks < 1) chunks = 1;
  const int64_t rows_per = (V + chunks - 1) / chunks;
  parallel_for(V, rows_per > 0 ? rows_per : 1, [&](int64_t v0, int64_t v1) {
    std::memset(dtable + v0 * D, 0, static_cast<size_t>((v1 - v0) * D) * sizeof(float));
    for (int64_t i = 0; i < n; ++i) {
      const int64_t v = indices[i];
      if (v < v0 || v >= v1) continue;
      float* dst = dtable + v * D;     // (D)
      const float* src = dy + i * D;   // (D)
      for (int64_t j = 0; j < D; ++j) dst[j] += src[j];
    }
  });
}

}  // namespace fk
