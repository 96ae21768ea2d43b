// rowops.h: per-row building blocks of softmax, log-softmax and the softmax crossentropies,
// compiled into each per-ISA unit (static inline, like vmath.h).
//
// Reductions keep kLanes independent float accumulators (the compiler vectorizes them: one
// AVX-512 register, two AVX2 ones) over blocks of at most kBlock elements, then add each block's
// float total into a double. The float error is bounded by one block (about 36 roundings, ~2e-6
// worst case) whatever the row length, and the result does not depend on the thread count.
// Max ignores NaN; the exp pass that follows turns a NaN input into a NaN row, as numpy does.
#pragma once

#include <cstdint>

#include "vmath.h"

namespace {

constexpr int kLanes = 16;
constexpr int64_t kBlock = 512;

inline int64_t block_len(int64_t begin, int64_t cols) {
  return cols - begin < kBlock ? cols - begin : kBlock;
}

inline float row_max(const float* x, int64_t cols) {  // x (cols)
  float lane[kLanes];
  for (int j = 0; j < kLanes; ++j) lane[j] = -__builtin_inff();
  int64_t i = 0;
  for (; i + kLanes <= cols; i += kLanes) {
    // Kept a loop (not unrolled first) so that GCC vectorizes it as lanes of max instructions.
#pragma GCC unroll 1
    for (int j = 0; j < kLanes; ++j) lane[j] = x[i + j] > lane[j] ? x[i + j] : lane[j];
  }
  float m = -__builtin_inff();
  for (int j = 0; j < kLanes; ++j) m = vm_select(lane[j] > m, lane[j], m);
  for (; i < cols; ++i) m = vm_select(x[i] > m, x[i], m);
  return m;
}

// Sum of a (n) * b (n) for n <= kBlock, or of a alone when b is null.
inline float block_dot(const float* a, const float* b, int64_t n) {
  float lane[kLanes] = {};
  int64_t i = 0;
  if (b) {
    for (; i + kLanes <= n; i += kLanes)
      for (int j = 0; j < kLanes; ++j) lane[j] += a[i + j] * b[i + j];
  } else {
    for (; i + kLanes <= n; i += kLanes)
      for (int j = 0; j < kLanes; ++j) lane[j] += a[i + j];
  }
  float s = 0.0f;
  for (int j = 0; j < kLanes; ++j) s += lane[j];
  for (; i < n; ++i) s += b ? a[i] * b[i] : a[i];
  return s;
}

inline double row_dot(const float* a, const float* b, int64_t cols) {  // a, b [opt] (cols)
  double total = 0.0;
  for (int64_t i = 0; i < cols; i += kBlock)
    total += block_dot(a + i, b ? b + i : nullptr, block_len(i, cols));
  return total;
}

// y (n) = exp(x (n) - m); returns the sum of y (in double, by blocks).
inline double exp_shift_sum(float* y, const float* x, int64_t cols, float m) {
  double total = 0.0;
  for (int64_t b = 0; b < cols; b += kBlock) {
    const int64_t n = block_len(b, cols);
    for (int64_t i = b; i < b + n; ++i) y[i] = vm_exp_nonpos(x[i] - m);  // x - m <= 0
    total += block_dot(y + b, nullptr, n);
  }
  return total;
}

// Sum of exp(x (cols) - m) without writing it anywhere (blocks go through a stack buffer).
inline double exp_shift_sum(const float* x, int64_t cols, float m) {
  float buf[kBlock];
  double total = 0.0;
  for (int64_t b = 0; b < cols; b += kBlock) {
    const int64_t n = block_len(b, cols);
    for (int64_t i = 0; i < n; ++i) buf[i] = vm_exp_nonpos(x[b + i] - m);
    total += block_dot(buf, nullptr, n);
  }
  return total;
}

inline void scale_row(float* y, int64_t cols, float s) {
  for (int64_t i = 0; i < cols; ++i) y[i] *= s;
}

}  // namespace
