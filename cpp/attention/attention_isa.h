// attention_isa.h: the per-ISA block kernels of the fused scaled-dot-product attention.
//
// attention.inc holds the work of one forward chunk (query blocks) and one backward task (a
// batch entry and key/value head), compiled three times like the elementwise family:
// attention.cpp (portable, namespace scalar), attention_avx2.cpp and attention_avx512.cpp
// (their own -m flags from CMake). The portable unit picks the table for fk::cpu_isa(), splits
// the work with fk::parallel_for and owns the scratch memory, so no ISA unit holds thread code
// or std:: templates.
#pragma once

#include <cstdint>

namespace fk {
namespace attn {

constexpr int64_t kBq = 64;   // query rows per block
constexpr int64_t kBk = 64;   // keys per block (a multiple of every vector width)
constexpr int64_t kPad = 16;  // head sizes are padded to a multiple of this in scratch

static inline int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

// Everything a block kernel needs to know about one call (see kernels.h, attention_forward).
struct Problem {
  int64_t N, Tq, Tk, heads, kv_heads, D, Dv;
  const uint8_t* mask;           // [opt] (mask_batch, mask_heads, Tq, Tk)
  int64_t mask_batch, mask_heads;
  bool causal;
  float scale;
  bool dropout;                  // rate > 0
  uint32_t keep_threshold;       // ceil(rate * 2^24), as dropout_forward
  float drop_scale;              // 1 / (1 - rate)
  uint64_t seed;
  // Derived: Tkp = Tk rounded up to kBk, Dp / Dvp = D / Dv rounded up to kPad.
  int64_t Tkp, Dp, Dvp, query_blocks;
};

struct AttentionKernels {
  // Forward over items [i0, i1) of (n, head, query block), row-major in that order; scratch
  // holds forward_scratch_floats(p) floats. Writes out and lse for those query blocks.
  void (*forward)(const Problem& p, float* out, float* lse, const float* q, const float* k,
                  const float* v, int64_t i0, int64_t i1, float* scratch);
  // Backward of one (n, kv head): dq for its query heads, dk and dv for the kv head.
  // scratch holds backward_scratch_floats(p) floats.
  void (*backward)(const Problem& p, float* dq, float* dk, float* dv, const float* dout,
                   const float* q, const float* k, const float* v, const float* out,
                   const float* lse, int64_t n, int64_t kv_head, float* scratch);
};

namespace scalar { const AttentionKernels& attention_kernels(); }
namespace avx2 { const AttentionKernels& attention_kernels(); }
namespace avx512 { const AttentionKernels& attention_kernels(); }

}  // namespace attn
}  // namespace fk
