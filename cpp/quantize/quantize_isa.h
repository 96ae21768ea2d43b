// quantize_isa.h: the per-ISA loops behind cpp/quantize/quantize.cpp (private).
// Three tables of the same plain loops (quantize_kernels.h): scalar (quantize.cpp, portable
// flags), avx2 (quantize_avx2.cpp), avx512 (quantize_avx512.cpp), vectorized by the compiler
// under each file's flags (CMakeLists.txt). Each function handles a band of rows [m0, m1).
#pragma once

#include <cstdint>

namespace fk {
namespace qnt {

struct QuantizeKernels {
  // q, scale for rows [m0, m1) of x (M, K); see fkeras/kernels.h.
  void (*quantize_rows)(int8_t* q, float* scale, const float* x, int64_t m0, int64_t m1,
                        int64_t K);
  // c[m0:m1, :] = a[m0:m1, :] @ b, int32 sums.
  void (*matmul_rows)(int32_t* c, const int8_t* a, const int8_t* b, int64_t m0, int64_t m1,
                      int64_t N, int64_t K);
};

extern const QuantizeKernels kScalarKernels;
extern const QuantizeKernels kAvx2Kernels;
extern const QuantizeKernels kAvx512Kernels;

}  // namespace qnt
}  // namespace fk
