// quantize_avx2.cpp: the int8 loops (quantize_kernels.h) compiled with the avx2 flags
// (CMakeLists.txt); quantize.cpp calls this table only when fk::cpu_isa() is avx2.
#define FK_QNT_NS qnt_avx2
#include "quantize_kernels.h"

namespace fk {
namespace qnt {
const QuantizeKernels kAvx2Kernels = qnt_avx2::kQuantizeKernels;
}  // namespace qnt
}  // namespace fk
