// dropout_math.h: the counter-based dropout mask shared with the CPU kernel
// (cpp/elementwise/dropout.inc): element i is kept iff (splitmix64(seed + i) >> 40) >=
// ceil(rate * 2^24), an integer test with no float rounding; kept elements get
// mask = 1 / (1 - rate), dropped ones 0, y = x * mask. No state: any split of [0, n) over
// threads or blocks draws the same mask, bit for bit equal to fkeras._C.dropout_forward's.
#pragma once

#include <cmath>
#include <cstdint>

#include "fk_cuda/hd.h"

namespace fk_cuda {

FK_HD uint64_t dropout_splitmix64(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Host-side constants of one call (rate validated in [0, 1] by the caller).
struct DropoutParams {
  uint64_t seed;
  uint32_t threshold;  // ceil(rate * 2^24)
  float scale;         // 1 / (1 - rate): inf for rate 1, never selected then
};

inline DropoutParams dropout_params(float rate, int64_t seed) {
  DropoutParams p;
  p.seed = static_cast<uint64_t>(seed);
  p.threshold = static_cast<uint32_t>(std::ceil(static_cast<double>(rate) * 16777216.0));
  p.scale = 1.0f / (1.0f - rate);
  return p;
}

// The mask value of global element i.
FK_HD float dropout_mask_value(uint64_t i, const DropoutParams& p) {
  const uint32_t top = static_cast<uint32_t>(dropout_splitmix64(p.seed + i) >> 40);
  return top >= p.threshold ? p.scale : 0.0f;
}

}  // namespace fk_cuda
