// elementwise_isa.h: the per-ISA kernel tables of the elementwise family.
//
// Each concern (activations, softmax, losses, dropout) has a range kernel written once in a
// .inc file and compiled three times: <concern>.cpp (portable, namespace scalar),
// <concern>_avx2.cpp and <concern>_avx512.cpp (their own -m flags from CMake). Each unit fills a
// table of plain function pointers; the public kernels (kernels.h) pick the table for
// fk::cpu_isa() and split the work with fk::parallel_for. The ISA units hold no thread code and
// no std:: templates, so no code built with AVX flags can leak into the portable path.
//
// The range kernels take the same arguments as the public kernels, restricted to a sub-range:
// elements [0, n) of the given pointers, or `rows` whole rows. They OVERWRITE their outputs.
#pragma once

#include <cstdint>

#include "fkeras/runtime.h"

namespace fk {
namespace ew {

struct ActivationKernels {
  // y (n) = act(x (n)).
  void (*forward)(float* y, const float* x, int64_t n, int64_t activation, float alpha);
  // dx (n) = dy (n) * act'(x), x (n) and y (n) from the forward.
  void (*backward)(float* dx, const float* dy, const float* x, const float* y, int64_t n,
                   int64_t activation, float alpha);
};

struct SoftmaxKernels {
  // All over `rows` rows of `cols` values.
  void (*softmax_forward)(float* y, const float* x, int64_t rows, int64_t cols);
  void (*softmax_backward)(float* dx, const float* dy, const float* y, int64_t rows,
                           int64_t cols);
  void (*log_softmax_forward)(float* y, const float* x, int64_t rows, int64_t cols);
  void (*log_softmax_backward)(float* dx, const float* dy, const float* y, int64_t rows,
                               int64_t cols);
};

struct LossKernels {
  // Row kernels: loss (rows), probs/logits/labels/dlogits (rows, cols), dloss (rows).
  void (*softmax_ce_forward)(float* loss, float* probs, const float* logits,
                             const float* labels, int64_t rows, int64_t cols);
  void (*softmax_ce_backward)(float* dlogits, const float* dloss, const float* probs,
                              const float* labels, int64_t rows, int64_t cols);
  void (*sparse_ce_forward)(float* loss, float* probs, const float* logits,
                            const int64_t* labels, int64_t rows, int64_t cols);
  void (*sparse_ce_backward)(float* dlogits, const float* dloss, const float* probs,
                             const int64_t* labels, int64_t rows, int64_t cols);
  // Elementwise over n.
  void (*sigmoid_ce_forward)(float* loss, const float* logits, const float* labels, int64_t n);
  void (*sigmoid_ce_backward)(float* dlogits, const float* dloss, const float* logits,
                              const float* labels, int64_t n);
};

struct DropoutKernels {
  // Elements [0, n) of a tensor whose element 0 has global index `first` (the mask counter).
  // keep_threshold = ceil(rate * 2^24): keep iff (splitmix64(seed + i) >> 40) >= keep_threshold,
  // which is exactly u >= rate for u = (z >> 40) * 2^-24.
  void (*forward)(float* y, float* mask, const float* x, int64_t n, int64_t first,
                  uint64_t seed, uint32_t keep_threshold, float scale);
};

// Each unit defines these in its own namespace.
namespace scalar {
const ActivationKernels& activation_kernels();
const SoftmaxKernels& softmax_kernels();
const LossKernels& loss_kernels();
const DropoutKernels& dropout_kernels();
}  // namespace scalar
namespace avx2 {
const ActivationKernels& activation_kernels();
const SoftmaxKernels& softmax_kernels();
const LossKernels& loss_kernels();
const DropoutKernels& dropout_kernels();
}  // namespace avx2
namespace avx512 {
const ActivationKernels& activation_kernels();
const SoftmaxKernels& softmax_kernels();
const LossKernels& loss_kernels();
const DropoutKernels& dropout_kernels();
}  // namespace avx512

// The table for fk::cpu_isa() (called by the portable units only). AVX-512 units are never
// entered unless cpu_isa() says the CPU has AVX-512.
template <typename Table>
const Table& for_isa(const Table& (*portable)(), const Table& (*with_avx2)(),
                     const Table& (*with_avx512)()) {
  switch (cpu_isa()) {
    case Isa::kAvx512: return with_avx512();
    case Isa::kAvx2: return with_avx2();
    default: return portable();
  }
}

}  // namespace ew
}  // namespace fk
