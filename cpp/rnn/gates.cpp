// gates.cpp: the portable (scalar) build of the recurrent gate passes (math in gates_impl.h).
// This is the path FKERAS_CPU_ISA=scalar runs, and the fallback on CPUs without AVX2.
#include "gates_impl.h"

namespace fk {
namespace rnn {

const GateKernels& gate_kernels_scalar() {
  static const GateKernels kernels = make_gate_kernels<Scalar>();
  return kernels;
}

}  // namespace rnn
}  // namespace fk
