// quantize_avx512.cpp: the int8 loops (quantize_kernels.h) compiled with the avx512 flags
// (CMakeLists.txt); quantize.cpp calls this table only when fk::cpu_isa() is avx512.
#define FK_QNT_NS qnt_avx512
#include "quantize_kernels.h"

namespace fk {
namespace qnt {
const QuantizeKernels kAvx512Kernels = qnt_avx512::kQuantizeKernels;
}  // namespace qnt
}  // namespace fk
