// losses.cpp: the fused crossentropy kernels of kernels.h (softmax, sparse softmax and sigmoid
// crossentropy from logits), plus the portable build of their kernels (losses.inc).
//
// Softmax losses split whole rows over fk::parallel_for (about kGrain elements per chunk); the
// sigmoid loss splits its flat range. Outputs OVERWRITTEN. Sparse labels are trusted here: the
// binding range-checks them.
#define FK_EW_NS scalar
#include "losses.inc"

#include "fkeras/kernels.h"
#include "fkeras/runtime.h"

namespace fk {
namespace {

constexpr int64_t kGrain = 1 << 14;  // elements per chunk

const ew::LossKernels& kernels() {
  return ew::for_isa(ew::scalar::loss_kernels, ew::avx2::loss_kernels, ew::avx512::loss_kernels);
}

// Runs fn(first_row, row_count) over chunks of rows of `cols` elements.
template <typename Fn>
void over_rows(int64_t rows, int64_t cols, Fn fn) {
  const int64_t grain = cols >= kGrain ? 1 : kGrain / (cols > 0 ? cols : 1);
  parallel_for(rows, grain, [&](int64_t b, int64_t e) { fn(b, e - b); });
}

}  // namespace

void softmax_crossentropy_forward(float* loss, float* probs, const float* logits,
                                  const float* labels, int64_t rows, int64_t cols) {
  const ew::LossKernels& k = kernels();
  over_rows(rows, cols, [&](int64_t r, int64_t n) {
    const int64_t o = r * cols;
    k.softmax_ce_forward(loss + r, probs + o, logits + o, labels + o, n, cols);
  });
}

void softmax_crossentropy_backward(float* dlogits, const float* dloss, const float* probs,
                                   const float* labels, int64_t rows, int64_t cols) {
  const ew::LossKernels& k = kernels();
  over_rows(rows, cols, [&](int64_t r, int64_t n) {
    const int64_t o = r * cols;
    k.softmax_ce_backward(dlogits + o, dloss + r, probs + o, labels + o, n, cols);
  });
}

void sparse_softmax_crossentropy_forward(float* loss, float* probs, const float* logits,
                                         const int64_t* labels, int64_t rows, int64_t cols) {
  const ew::LossKernels& k = kernels();
  over_rows(rows, cols, [&](int64_t r, int64_t n) {
    const int64_t o = r * cols;
    k.sparse_ce_forward(loss + r, probs + o, logits + o, labels + r, n, cols);
  });
}

void sparse_softmax_crossentropy_backward(float* dlogits, const float* dloss, const float* probs,
                                          const int64_t* labels, int64_t rows, int64_t cols) {
  const ew::LossKernels& k = kernels();
  over_rows(rows, cols, [&](int64_t r, int64_t n) {
    const int64_t o = r * cols;
    k.sparse_ce_backward(dlogits + o, dloss + r, probs + o, labels + r, n, cols);
  });
}

void sigmoid_crossentropy_forward(float* loss, const float* logits, const float* labels,
                                  int64_t n) {
  const ew::LossKernels& k = kernels();
  parallel_for(n, kGrain, [&](int64_t b, int64_t e) {
    k.sigmoid_ce_forward(loss + b, logits + b, labels + b, e - b);
  });
}

void sigmoid_crossentropy_backward(float* dlogits, const float* dloss, const float* logits,
                                   const float* labels, int64_t n) {
  const ew::LossKernels& k = kernels();
  parallel_for(n, kGrain, [&](int64_t b, int64_t e) {
    k.sigmoid_ce_backward(dlogits + b, dloss + b, logits + b, labels + b, e - b);
  });
}

}  // namespace fk
