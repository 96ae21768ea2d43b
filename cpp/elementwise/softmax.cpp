// softmax.cpp: softmax_* and log_softmax_* (kernels.h) over the last axis of a (rows, cols)
// view, plus the portable build of their row kernels (softmax.inc, namespace scalar).
//
// Rows are independent: fk::parallel_for hands out chunks of whole rows, about kGrain elements
// each, so a small tensor stays on the calling thread. Outputs OVERWRITTEN.
#define FK_EW_NS scalar
#include "softmax.inc"

#include "fkeras/kernels.h"
#include "fkeras/runtime.h"

namespace fk {
namespace {

constexpr int64_t kGrain = 1 << 14;  // elements per chunk

const ew::SoftmaxKernels& kernels() {
  return ew::for_isa(ew::scalar::softmax_kernels, ew::avx2::softmax_kernels,
                     ew::avx512::softmax_kernels);
}

// Runs fn(first_row, row_count) over chunks of rows.
template <typename Fn>
void over_rows(int64_t rows, int64_t cols, Fn fn) {
  if (cols == 0) return;
  const int64_t grain = cols >= kGrain ? 1 : kGrain / cols;
  parallel_for(rows, grain, [&](int64_t b, int64_t e) { fn(b, e - b); });
}

}  // namespace

void softmax_forward(float* y, const float* x, int64_t rows, int64_t cols) {
  const ew::SoftmaxKernels& k = kernels();
  over_rows(rows, cols, [&](int64_t r, int64_t n) {
    k.softmax_forward(y + r * cols, x + r * cols, n, cols);
  });
}

void softmax_backward(float* dx, const float* dy, const float* y, int64_t rows, int64_t cols) {
  const ew::SoftmaxKernels& k = kernels();
  over_rows(rows, cols, [&](int64_t r, int64_t n) {
    k.softmax_backward(dx + r * cols, dy + r * cols, y + r * cols, n, cols);
  });
}

void log_softmax_forward(float* y, const float* x, int64_t rows, int64_t cols) {
  const ew::SoftmaxKernels& k = kernels();
  over_rows(rows, cols, [&](int64_t r, int64_t n) {
    k.log_softmax_forward(y + r * cols, x + r * cols, n, cols);
  });
}

void log_softmax_backward(float* dx, const float* dy, const float* y, int64_t rows,
                          int64_t cols) {
  const ew::SoftmaxKernels& k = kernels();
  over_rows(rows, cols, [&](int64_t r, int64_t n) {
    k.log_softmax_backward(dx + r * cols, dy + r * cols, y + r * cols, n, cols);
  });
}

}  // namespace fk
