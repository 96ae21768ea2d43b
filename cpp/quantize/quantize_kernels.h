// quantize_kernels.h: the plain loops of the int8 kernels, included once per ISA translation
// unit with FK_QNT_NS set to that unit's namespace (quantize.cpp, quantize_avx2.cpp,
// quantize_avx512.cpp). Written so the compiler vectorizes the inner loops; no intrinsics.
// Semantics: fkeras/kernels.h (int8 quantization).
#include <algorithm>
#include <cstdint>
#include <limits>

#include "quantize_isa.h"

namespace fk {
namespace FK_QNT_NS {
namespace {

// 1.5 * 2**23: (v + kMagic) - kMagic rounds a float32 |v| < 2**22 to an integer, ties to even
// (the default rounding mode), as numpy's and torch's round; it vectorizes where nearbyint may
// not. |x * scale| <= ~127 here, far inside that range.
constexpr float kMagic = 12582912.0f;
constexpr float kEpsilon = 1e-7f;  // Keras's backend.epsilon(), as a float32 operand
constexpr float kBound = 127.0f;   // Keras's value_range (-127, 127)

void quantize_rows(int8_t* q, float* scale, const float* x, int64_t m0, int64_t m1, int64_t K) {
  for (int64_t m = m0; m < m1; ++m) {
    const float* xr = x + m * K;  // (K)
    int8_t* qr = q + m * K;       // (K)
    float amax = 0.f;
    bool nan = false;
    for (int64_t k = 0; k < K; ++k) {
      const float a = xr[k] < 0.f ? -xr[k] : xr[k];
      amax = a > amax ? a : amax;
      nan |= a != a;
    }
    // Keras: value_range[1] / (max|x| + epsilon), each step rounded to float32.
    const float s = nan ? std::numeric_limits<float>::quiet_NaN() : kBound / (amax + kEpsilon);
    scale[m] = s;
    for (int64_t k = 0; k < K; ++k) {
      float r = (xr[k] * s + kMagic) - kMagic;
      r = r < -kBound ? -kBound : (r > kBound ? kBound : r);
      qr[k] = r == r ? static_cast<int8_t>(static_cast<int32_t>(r)) : int8_t(0);
    }
  }
}

// R rows of c (R, nc) = a (R rows of stride K) @ b (K, nc of stride N), in uint32 so that a sum
// past int32 wraps (defined) instead of overflowing (undefined); the bits are int32's.
template <int R>
void tile(int32_t* c, const int8_t* a, const int8_t* b, int64_t nc, int64_t N, int64_t K) {
  constexpr int64_t kNc = 256;
  uint32_t acc[R][kNc];
  for (int r = 0; r < R; ++r)
    for (int64_t j = 0; j < nc; ++j) acc[r][j] = 0u;
  for (int64_t k = 0; k < K; ++k) {
    const int8_t* br = b + k * N;  // (nc) of row k
    for (int r = 0; r < R; ++r) {
      // |a * b| <= 128 * 128 = 16384 fits int16: a 16-bit multiply (vpmullw), then widened.
      const int16_t av = a[r * K + k];
      uint32_t* ar = acc[r];
      for (int64_t j = 0; j < nc; ++j)
        ar[j] += static_cast<uint32_t>(static_cast<int32_t>(
            static_cast<int16_t>(av * static_cast<int16_t>(br[j]))));
    }
  }
  for (int r = 0; r < R; ++r)
    for (int64_t j = 0; j < nc; ++j) c[r * N + j] = static_cast<int32_t>(acc[r][j]);
}

// Column blocks of 256 int32 sums (1 KiB a row: 4 rows stay in L1) over bands of 4 rows; each
// row of b's block is loaded once per 4 rows of a.
void matmul_rows(int32_t* c, const int8_t* a, const int8_t* b, int64_t m0, int64_t m1,
                 int64_t N, int64_t K) {
  constexpr int64_t kNc = 256;
  for (int64_t j0 = 0; j0 < N; j0 += kNc) {
    const int64_t nc = std::min(kNc, N - j0);
    int64_t m = m0;
    for (; m + 4 <= m1; m += 4) tile<4>(c + m * N + j0, a + m * K, b + j0, nc, N, K);
    for (; m < m1; ++m) tile<1>(c + m * N + j0, a + m * K, b + j0, nc, N, K);
  }
}

}  // namespace

const qnt::QuantizeKernels kQuantizeKernels = {quantize_rows, matmul_rows};

}  // namespace FK_QNT_NS
}  // namespace fk
