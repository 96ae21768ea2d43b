// peak_avx512_bf16.cpp: register-only multiply-add loops that measure one core's arithmetic
// peak for the benchmarks (bench/bench_gemm.py --peak): VFMADD231PS (fp32) or VDPBF16PS (bf16
// pairs) on 24 independent zmm accumulators, as many as the GEMM microkernels keep, which covers
// the instructions' latency on both FMA ports. No memory traffic in the loop. Not used by any
// kernel; compiled with the bf16 flags, and the fp32 loop uses AVX-512F only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

#include "gemm_internal.h"

namespace fk {
namespace gemm_detail {
namespace {

constexpr int kAcc = 24;

// Sums the accumulators so that the loop's results are used.
float reduce(__m512 acc[kAcc]) {
  __m512 s = _mm512_setzero_ps();
  for (int i = 0; i < kAcc; ++i) s = _mm512_add_ps(s, acc[i]);
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, s);
  float total = 0.f;
  for (float v : lanes) total += v;
  return total;
}

}  // namespace

double peak_loop_avx512(bool bf16, int64_t iters, float* sink) {
  __m512 acc[kAcc];
  for (int i = 0; i < kAcc; ++i) acc[i] = _mm512_set1_ps(0.001f * static_cast<float>(i));
  // Values that neither overflow nor turn denormal over many iterations.
  const __m512 a = _mm512_set1_ps(0.999f), b = _mm512_set1_ps(1e-6f);
  const __m512bh ah = _mm512_cvtne2ps_pbh(a, a), bh = _mm512_cvtne2ps_pbh(b, b);
  if (bf16) {
    for (int64_t it = 0; it < iters; ++it) {
#pragma GCC unroll 24
      for (int i = 0; i < kAcc; ++i) acc[i] = _mm512_dpbf16_ps(acc[i], ah, bh);
    }
  } else {
    for (int64_t it = 0; it < iters; ++it) {
#pragma GCC unroll 24
      for (int i = 0; i < kAcc; ++i) acc[i] = _mm512_fmadd_ps(acc[i], a, b);
    }
  }
  *sink = reduce(acc);
  // Per instruction: 16 lanes x (2 flops, or 2 products + 2 adds for a bf16 pair).
  return static_cast<double>(iters) * kAcc * 16.0 * (bf16 ? 4.0 : 2.0);
}

}  // namespace gemm_detail
}  // namespace fk
