// attention.cpp: attention_forward / attention_backward (kernels.h), plus the portable build of
// the block kernels (attention.inc, namespace scalar).
//
// Work split (fk::parallel_for): the forward over (n, head, query block) items, in chunks that
// keep consecutive query blocks of one head together (each chunk loads a head's k^T and v once
// and reuses them); the backward over (n, kv head) tasks, each owning its dk, dv rows and the
// dq rows of its query heads, so no two threads write the same output. Each chunk or task has
// its own scratch (attention.inc lists the buffers): O(Tk * (D + Dv)) for the head's keys plus
// O(kBq * (kBk + D + Dv)) for the block.
// Outputs OVERWRITTEN: out, lse (forward); dq, dk, dv (backward).
#define FK_ATTN_NS scalar
#include "attention.inc"

#include <cmath>
#include <vector>

#include "fkeras/kernels.h"
#include "fkeras/runtime.h"

namespace fk {
namespace {

const attn::AttentionKernels& kernels() {
  switch (cpu_isa()) {
    case Isa::kAvx512: return attn::avx512::attention_kernels();
    case Isa::kAvx2: return attn::avx2::attention_kernels();
    default: return attn::scalar::attention_kernels();
  }
}

attn::Problem make_problem(int64_t N, int64_t Tq, int64_t Tk, int64_t heads, int64_t kv_heads,
                           int64_t D, int64_t Dv, const uint8_t* mask, int64_t mask_batch,
                           int64_t mask_heads, bool causal, float scale, float dropout_rate,
                           int64_t seed, const char* kernel) {
  FK_CHECK(kv_heads > 0 ? heads % kv_heads == 0 : heads == 0, kernel,
           ": heads must be a multiple of kv_heads, got heads=", heads, ", kv_heads=", kv_heads);
  FK_CHECK(dropout_rate >= 0.0f && dropout_rate <= 1.0f, kernel,
           ": dropout_rate must be in [0, 1], got ", dropout_rate);
  FK_CHECK(!mask || ((mask_batch == 1 || mask_batch == N) &&
                     (mask_heads == 1 || mask_heads == heads)),
           kernel, ": mask_batch must be 1 or N and mask_heads 1 or heads");
  attn::Problem p{};
  p.N = N, p.Tq = Tq, p.Tk = Tk, p.heads = heads, p.kv_heads = kv_heads, p.D = D, p.Dv = Dv;
  p.mask = mask, p.mask_batch = mask_batch, p.mask_heads = mask_heads;
  p.causal = causal, p.scale = scale;
  p.dropout = dropout_rate > 0.0f;
  // As dropout_forward: keep iff (splitmix64(seed + i) >> 40) >= ceil(rate * 2^24).
  p.keep_threshold =
      static_cast<uint32_t>(std::ceil(static_cast<double>(dropout_rate) * 16777216.0));
  p.drop_scale = 1.0f / (1.0f - dropout_rate);
  p.seed = static_cast<uint64_t>(seed);
  p.Tkp = attn::round_up(Tk, attn::kBk);
  p.Dp = attn::round_up(D, attn::kPad);
  p.Dvp = attn::round_up(Dv, attn::kPad);
  p.query_blocks = (Tq + attn::kBq - 1) / attn::kBq;
  return p;
}

}  // namespace

void attention_forward(float* out, float* lse, const float* q, const float* k, const float* v,
                       const uint8_t* mask, int64_t N, int64_t Tq, int64_t Tk, int64_t heads,
                       int64_t kv_heads, int64_t D, int64_t Dv, int64_t mask_batch,
                       int64_t mask_heads, bool causal, float scale, float dropout_rate,
                       int64_t seed) {
  const attn::Problem p = make_problem(N, Tq, Tk, heads, kv_heads, D, Dv, mask, mask_batch,
                                       mask_heads, causal, scale, dropout_rate, seed,
                                       "attention_forward");
  const int64_t items = N * heads * p.query_blocks;
  if (items == 0) return;
  const int64_t scratch = p.D * p.Tkp + p.Tkp * p.Dvp + attn::kBq * (attn::kBk + p.Dvp + 2) +
                          attn::kBk;
  // About 4 chunks per thread, never splitting finer than one query block.
  const int64_t threads = available_threads();
  int64_t grain = items / (4 * threads);
  if (grain < 1) grain = 1;
  const attn::AttentionKernels& kern = kernels();
  parallel_for(items, grain, [&](int64_t b, int64_t e) {
    std::vector<float> buf(static_cast<size_t>(scratch));
    kern.forward(p, out, lse, q, k, v, b, e, buf.data());
  });
}

void attention_backward(float* dq, float* dk, float* dv, const float* dout, const float* q,
                        const float* k, const float* v, const float* out, const float* lse,
                        const uint8_t* mask, int64_t N, int64_t Tq, int64_t Tk, int64_t heads,
                        int64_t kv_heads, int64_t D, int64_t Dv, int64_t mask_batch,
                        int64_t mask_heads, bool causal, float scale, float dropout_rate,
                        int64_t seed) {
  const attn::Problem p = make_problem(N, Tq, Tk, heads, kv_heads, D, Dv, mask, mask_batch,
                                       mask_heads, causal, scale, dropout_rate, seed,
                                       "attention_backward");
  const int64_t tasks = N * kv_heads;
  if (tasks == 0) return;
  const int64_t scratch = (p.D + p.Dv) * p.Tkp + 2 * p.Tkp * p.Dp + p.Tkp * p.Dvp +
                          attn::kBq * (2 * p.Dp + p.Dvp + 2 * attn::kBk + 1) + attn::kBk;
  const attn::AttentionKernels& kern = kernels();
  parallel_for(tasks, 1, [&](int64_t b, int64_t e) {
    std::vector<float> buf(static_cast<size_t>(scratch));
    for (int64_t t = b; t < e; ++t)
      kern.backward(p, dq, dk, dv, dout, q, k, v, out, lse, t / kv_heads, t % kv_heads,
                    buf.data());
  });
}

}  // namespace fk
