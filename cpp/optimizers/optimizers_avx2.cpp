// optimizers_avx2.cpp: the optimizer update loops (optimizers_kernels.h) compiled with the
// avx2 flags (CMakeLists.txt); optimizers.cpp calls this table only when fk::cpu_isa() is avx2.
#define FK_OPT_NS opt_avx2
#include "optimizers_kernels.h"

namespace fk {
namespace opt {
const UpdateKernels kAvx2Kernels = opt_avx2::kUpdateKernels;
}  // namespace opt
}  // namespace fk
