// optimizers_avx512.cpp: the optimizer update loops (optimizers_kernels.h) compiled with the
// avx512 flags (CMakeLists.txt); optimizers.cpp calls this table only when fk::cpu_isa() is avx512.
#define FK_OPT_NS opt_avx512
#include "optimizers_kernels.h"

namespace fk {
namespace opt {
const UpdateKernels kAvx512Kernels = opt_avx512::kUpdateKernels;
}  // namespace opt
}  // namespace fk
