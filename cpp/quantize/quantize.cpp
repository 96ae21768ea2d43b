// quantize.cpp: the int8 quantization kernels (semantics, layouts and write rules:
// fkeras/kernels.h, "int8 quantization").
// Here: argument checks, the per-ISA table, the split of rows over the thread pool, and the
// fused int8 Dense product (quantize the rows of x, int8 x int8 -> int32, dequantize).
// Reference: python/fkeras/backend/reference/quantize.py (NumPy, int64 sums).
#include "fkeras/kernels.h"

#include <algorithm>
#include <vector>

#include "fkeras/common.h"
#include "fkeras/runtime.h"

#define FK_QNT_NS qnt_scalar
#include "quantize_kernels.h"

namespace fk {
namespace qnt {
const QuantizeKernels kScalarKernels = qnt_scalar::kQuantizeKernels;
}  // namespace qnt

namespace {

const qnt::QuantizeKernels& table() {
  switch (cpu_isa()) {
    case Isa::kAvx512: return qnt::kAvx512Kernels;
    case Isa::kAvx2: return qnt::kAvx2Kernels;
    default: return qnt::kScalarKernels;
  }
}

// Rows per task: about 64K multiply-adds (or elements) each, a multiple of the 4-row tile.
int64_t row_grain(int64_t work_per_row) {
  const int64_t rows = (int64_t(1) << 16) / std::max<int64_t>(1, work_per_row);
  return std::max<int64_t>(4, (rows + 3) / 4 * 4);
}

void check_sizes(const char* kernel, int64_t M, int64_t N, int64_t K) {
  FK_CHECK(M >= 0 && N >= 0 && K >= 0, kernel, ": sizes must be >= 0, received M=", M, ", N=",
           N, ", K=", K);
}

}  // namespace

void quantize_int8_rows(int8_t* q, float* scale, const float* x, int64_t M, int64_t K) {
  check_sizes("quantize_int8_rows", M, 0, K);
  const auto& t = table();
  parallel_for(M, row_grain(K), [&](int64_t m0, int64_t m1) {
    t.quantize_rows(q, scale, x, m0, m1, K);
  });
}

void matmul_int8(int32_t* c, const int8_t* a, const int8_t* b, int64_t M, int64_t N, int64_t K) {
  check_sizes("matmul_int8", M, N, K);
  const auto& t = table();
  parallel_for(M, row_grain(N * K), [&](int64_t m0, int64_t m1) {
    t.matmul_rows(c, a, b, m0, m1, N, K);
  });
}

void dense_int8_forward(float* y, const float* x, const int8_t* kernel, const float* kernel_scale,
                        int64_t M, int64_t N, int64_t K) {
  check_sizes("dense_int8_forward", M, N, K);
  const auto& t = table();
  std::vector<int8_t> qx(static_cast<size_t>(M * K));    // (M, K) quantized rows of x
  std::vector<float> sx(static_cast<size_t>(M));          // (M) their scales
  std::vector<int32_t> acc(static_cast<size_t>(M * N));  // (M, N) int32 products
  parallel_for(M, row_grain(N * K + K), [&](int64_t m0, int64_t m1) {
    t.quantize_rows(qx.data(), sx.data(), x, m0, m1, K);
    t.matmul_rows(acc.data(), qx.data(), kernel, m0, m1, N, K);
    // Keras: cast(x, float32) / (kernel_scale * inputs_scale), the scale product rounded first.
    for (int64_t m = m0; m < m1; ++m)
      for (int64_t n = 0; n < N; ++n)
        y[m * N + n] = static_cast<float>(acc[m * N + n]) / (kernel_scale[n] * sx[m]);
  });
}

}  // namespace fk
