// activations.cpp: activation_forward and activation_backward (kernels.h), plus the portable
// build of their range kernels (activations.inc, namespace scalar).
//
// Layout: flat (n) float32 buffers; outputs OVERWRITTEN. The work is split into chunks of
// `grain` elements handed to fk::parallel_for (a tensor below one grain stays on the calling
// thread, free of pool overhead); each chunk runs the range kernel of the current ISA.
#define FK_EW_NS scalar
#include "activations.inc"

#include "fkeras/common.h"
#include "fkeras/runtime.h"

namespace fk {
namespace {

const ew::ActivationKernels& kernels() {
  return ew::for_isa(ew::scalar::activation_kernels, ew::avx2::activation_kernels,
                     ew::avx512::activation_kernels);
}

// Elements per chunk: memory-bound codes need bigger chunks to pay for a thread hand-off.
int64_t grain(int64_t activation) {
  switch (activation) {
    case kLinear: case kRelu: case kLeakyRelu: case kHardSigmoid: case kSoftsign:
      return 1 << 16;
    default:
      return 1 << 14;
  }
}

void check_code(int64_t activation, const char* kernel) {
  FK_CHECK(activation >= kLinear && activation <= kLeakyRelu, kernel,
           ": unknown activation code ", activation);
}

}  // namespace

void activation_forward(float* y, const float* x, int64_t n, int64_t activation, float alpha) {
  check_code(activation, "activation_forward");
  const ew::ActivationKernels& k = kernels();
  parallel_for(n, grain(activation), [&](int64_t b, int64_t e) {
    k.forward(y + b, x + b, e - b, activation, alpha);
  });
}

void activation_backward(float* dx, const float* dy, const float* x, const float* y, int64_t n,
                         int64_t activation, float alpha) {
  check_code(activation, "activation_backward");
  const ew::ActivationKernels& k = kernels();
  parallel_for(n, grain(activation), [&](int64_t b, int64_t e) {
    k.backward(dx + b, dy + b, x + b, y + b, e - b, activation, alpha);
  });
}

}  // namespace fk
