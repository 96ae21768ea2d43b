// attention.cu: fused scaled-dot-product attention on the GPU, the mirror of
// cpp/attention/ (contract: cpp/include/fkeras/kernels.h; mask int32 here, nonzero = visible).
//
// Layouts: q (N, Tq, heads, D), k (N, Tk, kv_heads, D), v (N, Tk, kv_heads, Dv),
// out / dout (N, Tq, heads, Dv), lse (N, heads, Tq); dq, dk, dv as q, k, v. Every output is
// OVERWRITTEN. Saved state: lse = log sum_j visible exp(scale q_i . k_j) (the forward's), from
// which the backward recomputes the probabilities (FlashAttention, Dao et al. 2022).
//
// Forward: one block of kRows threads per (n, head, tile of kRows query rows), grid-striding
// over such items; each thread owns one query row (its q row and output accumulator in shared
// memory), keys come in shared tiles of kBk (k and v rows, transposed, zero past Tk) that every
// thread reads with 16-byte broadcast loads (four per column of kBk keys), and each thread
// runs the online softmax of its row (fk_cuda/attention_math.h's forward_tile): no
// cross-thread reduction, so results do not depend on scheduling. The tile's
// output rows are written back coalesced.
// Backward: (1) delta_i = dout_i . out_i, one thread per row; (2) dq: the forward's layout, each
// thread adding ds k over all key tiles (dq_tile); (3) dk / dv: one block per (n, kv head, tile
// of kRows keys), each thread owning one key (k, v, dk, dv rows in shared memory) and reading
// tiles of kBq query rows (q, dout transposed, lse, delta) of every query head of its group,
// 4 rows per step with 16-byte broadcast loads (dkv_rows).
// Two kernels recompute the scores instead of one kernel adding dq with atomics: no float
// atomics anywhere, bitwise reproducible. Causal tiles past the diagonal are skipped.
// Shared memory: forward_floats / dq_floats / dkv_floats(D, Dv) floats per block (41 KB, 58 KB,
// 75 KB at D = Dv = 64), with the opt-in limit raised as needed; head sizes too large for even
// that run the same code over a per-block slice of a global scratch buffer (fewer blocks).
// Not tensor-core or register-tiled: about 5 shared-memory loads per 16 FMAs of a thread.
#include <algorithm>

#include "attention.cuh"
#include "fk_cuda/attention_math.h"
#include "fk_cuda/launch.h"
#include "fk_cuda/runtime.h"

namespace fk_cuda {
namespace {

using attn::kBk;
using attn::kBq;
using attn::kRows;
using attn::Problem;

extern __shared__ float4 fk_attn_smem[];  // float4: 16-byte aligned

// The block's working set: shared memory, or its slice of the global scratch (floats is a
// multiple of 4 and the scratch 256-byte aligned, so every slice is 16-byte aligned).
// kGlobal is a template parameter so that the shared-memory instances address shared memory
// directly (ld.shared) instead of through generic pointers.
template <bool kGlobal>
__device__ __forceinline__ float* block_base(float* gscratch, int64_t floats) {
  if (kGlobal) return gscratch + static_cast<int64_t>(blockIdx.x) * floats;
  return reinterpret_cast<float*>(fk_attn_smem);
}

// fn(r, c) over a rows x cols block (rows <= kRows, cols < kMaxHead: below 2^31 elements),
// spread over the block's threads, c fastest (coalesced). 32-bit index arithmetic: a 64-bit
// division is a slow call that makes ptxas spill registers around it.
template <class Fn>
__device__ __forceinline__ void for_block_elems(int64_t rows, int64_t cols, Fn fn) {
  const uint32_t n = static_cast<uint32_t>(rows * cols), w = static_cast<uint32_t>(cols);
  for (uint32_t idx = threadIdx.x; idx < n; idx += blockDim.x) {
    const uint32_t r = idx / w;
    fn(static_cast<int64_t>(r), static_cast<int64_t>(idx - r * w));
  }
}

// rows (r < rows) of `cols` floats from a strided global matrix into dst (ld), all threads.
__device__ __forceinline__ void load_rows(float* dst, int64_t ld, const float* src,
                                          int64_t src_stride, int64_t rows, int64_t cols) {
  for_block_elems(rows, cols,
                  [&](int64_t r, int64_t c) { dst[r * ld + c] = src[r * src_stride + c]; });
}

// rows of `cols` floats from src (ld) to a strided global matrix, all threads.
__device__ __forceinline__ void store_rows(float* dst, int64_t dst_stride, const float* src,
                                           int64_t ld, int64_t rows, int64_t cols) {
  for_block_elems(rows, cols,
                  [&](int64_t r, int64_t c) { dst[r * dst_stride + c] = src[r * ld + c]; });
}

// The key tile [j0, j0 + kBk) of head (n, kv), TRANSPOSED: kt (D, kBk) and vt (Dv, kBk), zero
// past Tk. Consecutive threads take consecutive keys of one column (conflict-free stores; the
// strided global reads of a tile's rows are served from L1).
__device__ __forceinline__ void load_key_tile(float* kt, float* vt, const float* k,
                                              const float* v, const Problem& p, int64_t n,
                                              int64_t kv, int64_t j0) {
  for (int64_t idx = threadIdx.x; idx < kBk * p.D; idx += blockDim.x) {
    const int64_t d = idx / kBk, c = idx % kBk, j = j0 + c;
    kt[idx] = j < p.Tk ? k[((n * p.Tk + j) * p.kv_heads + kv) * p.D + d] : 0.f;
  }
  for (int64_t idx = threadIdx.x; idx < kBk * p.Dv; idx += blockDim.x) {
    const int64_t d = idx / kBk, c = idx % kBk, j = j0 + c;
    vt[idx] = j < p.Tk ? v[((n * p.Tk + j) * p.kv_heads + kv) * p.Dv + d] : 0.f;
  }
}

// kBq query rows of a strided matrix (rows beyond `rows` zero), TRANSPOSED: dst (cols, kBq).
__device__ __forceinline__ void load_query_tile(float* dst, const float* src, int64_t stride,
                                                int64_t rows, int64_t cols) {
  for (int64_t idx = threadIdx.x; idx < kBq * cols; idx += blockDim.x) {
    const int64_t c = idx / kBq, r = idx % kBq;
    dst[idx] = r < rows ? src[r * stride + c] : 0.f;
  }
}

template <bool kGlobal>
__global__ void __launch_bounds__(kRows)
    forward_kernel(float* __restrict__ out, float* __restrict__ lse, const float* __restrict__ q,
                   const float* __restrict__ k, const float* __restrict__ v, Problem p,
                   float* gscratch, int64_t floats) {
  const int64_t ldq = attn::odd_ld(p.D), ldo = attn::odd_ld(p.Dv);
  float* Kt = block_base<kGlobal>(gscratch, floats);  // (D, kBk) key tile, transposed
  float* Vt = Kt + kBk * p.D;                // (Dv, kBk), aligned: kBk is a multiple of 4
  float* Qs = Vt + kBk * p.Dv;               // (kRows, ldq) own q rows
  float* Os = Qs + kRows * ldq;              // (kRows, ldo) own output rows
  const int t = threadIdx.x;
  const int64_t qtiles = ceil_div(p.Tq, kRows), items = p.N * p.heads * qtiles;
  for (int64_t item = blockIdx.x; item < items; item += gridDim.x) {
    const int64_t qt = item % qtiles, nh = item / qtiles;
    const int64_t n = nh / p.heads, h = nh % p.heads, kv = h / (p.heads / p.kv_heads);
    const int64_t r0 = qt * kRows, rows = std::min<int64_t>(kRows, p.Tq - r0), i = r0 + t;
    const bool valid = t < rows;
    const int32_t* mrows = attn::mask_rows(p, n, h);
    __syncthreads();  // the previous item's reads of Qs / Os are done
    load_rows(Qs, ldq, q + ((n * p.Tq + r0) * p.heads + h) * p.D, p.heads * p.D, rows, p.D);
    float* o = Os + t * ldo;
    if (valid)
      for (int64_t d = 0; d < p.Dv; ++d) o[d] = 0.f;
    attn::RowState st = attn::row_start();
    const int64_t kend = attn::key_end(p, r0, rows);
    for (int64_t j0 = 0; j0 < kend; j0 += kBk) {
      __syncthreads();  // Qs loaded; the previous tile consumed
      load_key_tile(Kt, Vt, k, v, p, n, kv, j0);
      __syncthreads();
      if (valid) attn::forward_tile(st, o, Qs + t * ldq, Kt, Vt, p, mrows, n, h, i, j0);
    }
    if (valid) {
      const bool uniform = attn::is_uniform(st, p, mrows, i);
      if (uniform)
        for (int64_t j = 0; j < p.Tk; ++j)
          attn::uniform_add(o, v + ((n * p.Tk + j) * p.kv_heads + kv) * p.Dv,
                            attn::drop_factor(p, n, h, i, j), p.Dv);
      lse[(n * p.heads + h) * p.Tq + i] = attn::forward_finish(st, o, p, uniform);
    }
    __syncthreads();
    store_rows(out + ((n * p.Tq + r0) * p.heads + h) * p.Dv, p.heads * p.Dv, Os, ldo, rows, p.Dv);
  }
}

// delta (N, heads, Tq) = rowwise dout . out.
__global__ void delta_kernel(float* __restrict__ delta, const float* __restrict__ dout,
                             const float* __restrict__ out, Problem p) {
  const int64_t rows = p.N * p.heads * p.Tq;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < rows;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t i = e % p.Tq, nh = e / p.Tq, n = nh / p.heads, h = nh % p.heads;
    const int64_t off = ((n * p.Tq + i) * p.heads + h) * p.Dv;
    delta[e] = attn::row_delta(dout + off, out + off, p.Dv);
  }
}

template <bool kGlobal>
__global__ void __launch_bounds__(kRows)
    dq_kernel(float* __restrict__ dq, const float* __restrict__ dout, const float* __restrict__ q,
              const float* __restrict__ k, const float* __restrict__ v,
              const float* __restrict__ lse, const float* __restrict__ delta, Problem p,
              float* gscratch, int64_t floats) {
  const int64_t ldq = attn::odd_ld(p.D), ldo = attn::odd_ld(p.Dv);
  float* Kt = block_base<kGlobal>(gscratch, floats);  // (D, kBk) key tile, transposed
  float* Vt = Kt + kBk * p.D;                // (Dv, kBk)
  float* Qs = Vt + kBk * p.Dv;               // (kRows, ldq) own q rows
  float* Gs = Qs + kRows * ldq;              // (kRows, ldo) own dout rows
  float* dQs = Gs + kRows * ldo;             // (kRows, ldq) own dq accumulators
  const int t = threadIdx.x;
  const int64_t qtiles = ceil_div(p.Tq, kRows), items = p.N * p.heads * qtiles;
  for (int64_t item = blockIdx.x; item < items; item += gridDim.x) {
    const int64_t qt = item % qtiles, nh = item / qtiles;
    const int64_t n = nh / p.heads, h = nh % p.heads, kv = h / (p.heads / p.kv_heads);
    const int64_t r0 = qt * kRows, rows = std::min<int64_t>(kRows, p.Tq - r0), i = r0 + t;
    const bool valid = t < rows;
    const int32_t* mrows = attn::mask_rows(p, n, h);
    __syncthreads();
    load_rows(Qs, ldq, q + ((n * p.Tq + r0) * p.heads + h) * p.D, p.heads * p.D, rows, p.D);
    load_rows(Gs, ldo, dout + ((n * p.Tq + r0) * p.heads + h) * p.Dv, p.heads * p.Dv, rows,
              p.Dv);
    float* acc = dQs + t * ldq;
    float l = attn::neg_inf(), dl = 0.f;
    if (valid) {
      for (int64_t d = 0; d < p.D; ++d) acc[d] = 0.f;
      l = lse[(n * p.heads + h) * p.Tq + i];
      dl = delta[(n * p.heads + h) * p.Tq + i];
    }
    const int64_t kend = attn::key_end(p, r0, rows);
    for (int64_t j0 = 0; j0 < kend; j0 += kBk) {
      __syncthreads();
      load_key_tile(Kt, Vt, k, v, p, n, kv, j0);
      __syncthreads();
      if (valid && l != attn::neg_inf())
        attn::dq_tile(acc, Qs + t * ldq, Gs + t * ldo, l, dl, Kt, Vt, p, mrows, n, h, i, j0);
    }
    __syncthreads();
    store_rows(dq + ((n * p.Tq + r0) * p.heads + h) * p.D, p.heads * p.D, dQs, ldq, rows, p.D);
  }
}

template <bool kGlobal>
__global__ void __launch_bounds__(kRows)
    dkv_kernel(float* __restrict__ dk, float* __restrict__ dv, const float* __restrict__ dout,
               const float* __restrict__ q, const float* __restrict__ k,
               const float* __restrict__ v, const float* __restrict__ lse,
               const float* __restrict__ delta, Problem p, float* gscratch, int64_t floats) {
  const int64_t ldk = attn::odd_ld(p.D), ldv = attn::odd_ld(p.Dv);
  float* Qt = block_base<kGlobal>(gscratch, floats);  // (D, kBq) query tile, transposed
  float* Gt = Qt + kBq * p.D;                         // (Dv, kBq) dout tile, transposed
  float* Lt = Gt + kBq * p.Dv;                        // (kBq) lse
  float* Dt = Lt + kBq;                               // (kBq) delta
  float* Ut = Dt + kBq;                               // (kBq) 1 for a uniform row
  float* Ks = Ut + kBq;                               // (kRows, ldk) own k rows
  float* Vs = Ks + kRows * ldk;                       // (kRows, ldv) own v rows
  float* dKs = Vs + kRows * ldv;                      // (kRows, ldk) own dk accumulators
  float* dVs = dKs + kRows * ldk;                     // (kRows, ldv) own dv accumulators
  const int t = threadIdx.x;
  const int64_t group = p.kv_heads > 0 ? p.heads / p.kv_heads : 0;
  const int64_t ktiles = ceil_div(p.Tk, kRows), items = p.N * p.kv_heads * ktiles;
  const int64_t qtiles = ceil_div(p.Tq, kBq);
  for (int64_t item = blockIdx.x; item < items; item += gridDim.x) {
    const int64_t kt = item % ktiles, nk = item / ktiles;
    const int64_t n = nk / p.kv_heads, kv = nk % p.kv_heads;
    const int64_t j0 = kt * kRows, keys = std::min<int64_t>(kRows, p.Tk - j0), j = j0 + t;
    const bool valid = t < keys;
    __syncthreads();
    load_rows(Ks, ldk, k + ((n * p.Tk + j0) * p.kv_heads + kv) * p.D, p.kv_heads * p.D, keys,
              p.D);
    load_rows(Vs, ldv, v + ((n * p.Tk + j0) * p.kv_heads + kv) * p.Dv, p.kv_heads * p.Dv, keys,
              p.Dv);
    if (valid) {
      for (int64_t d = 0; d < p.D; ++d) dKs[t * ldk + d] = 0.f;
      for (int64_t d = 0; d < p.Dv; ++d) dVs[t * ldv + d] = 0.f;
    }
    for (int64_t h = kv * group; h < (kv + 1) * group; ++h) {
      const int32_t* mrows = attn::mask_rows(p, n, h);
      for (int64_t qt = 0; qt < qtiles; ++qt) {
        const int64_t r0 = qt * kBq, rows = std::min<int64_t>(kBq, p.Tq - r0);
        __syncthreads();  // own rows loaded; the previous query tile consumed
        bool uniform = false;
        if (t < rows) {
          const int64_t e = (n * p.heads + h) * p.Tq + r0 + t;
          Lt[t] = lse[e];
          Dt[t] = delta[e];
          uniform = Lt[t] == attn::neg_inf() && !attn::row_visible(p, mrows, r0 + t);
          Ut[t] = uniform ? 1.f : 0.f;
        }
        const bool any_uniform = __syncthreads_or(uniform);
        // Causal: rows all before the block's first key see none of its keys.
        if (p.causal && r0 + rows - 1 < j0 && !any_uniform) continue;
        const int64_t qrow = (n * p.Tq + r0) * p.heads + h;
        load_query_tile(Qt, q + qrow * p.D, p.heads * p.D, rows, p.D);
        load_query_tile(Gt, dout + qrow * p.Dv, p.heads * p.Dv, rows, p.Dv);
        __syncthreads();
        if (!valid) continue;
        for (int64_t r = 0; r < rows; r += 4)
          attn::dkv_rows(dKs + t * ldk, dVs + t * ldv, Ks + t * ldk, Vs + t * ldv, Qt + r, Gt + r,
                         Lt + r, Dt + r, Ut + r, static_cast<int>(std::min<int64_t>(4, rows - r)),
                         p, mrows, n, h, r0 + r, j);
      }
    }
    __syncthreads();
    store_rows(dk + ((n * p.Tk + j0) * p.kv_heads + kv) * p.D, p.kv_heads * p.D, dKs, ldk, keys,
               p.D);
    store_rows(dv + ((n * p.Tk + j0) * p.kv_heads + kv) * p.Dv, p.kv_heads * p.Dv, dVs, ldv, keys,
               p.Dv);
  }
}

// Launch shape of one kernel: shared memory when the working set fits the opt-in limit, else
// a global scratch slice per block and a grid of a few blocks per SM.
struct Plan {
  unsigned blocks;
  size_t smem;             // dynamic shared bytes (0 with global scratch)
  int64_t global_floats;   // floats of global scratch per block (0 with shared memory)
};

Plan plan(int64_t items, int64_t floats) {
  const cudaDeviceProp& prop = device_properties();
  const size_t bytes = sizeof(float) * static_cast<size_t>(floats);
  Plan pl;
  if (bytes <= prop.sharedMemPerBlockOptin) {
    pl.blocks = static_cast<unsigned>(std::min<int64_t>(items, kMaxBlocks1D));
    pl.smem = bytes;
    pl.global_floats = 0;
  } else {
    pl.blocks = static_cast<unsigned>(std::min<int64_t>(items, 2 * prop.multiProcessorCount));
    pl.smem = 0;
    pl.global_floats = floats;
  }
  return pl;
}

int64_t forward_items(const Problem& p) { return p.N * p.heads * ceil_div(p.Tq, kRows); }
int64_t dkv_items(const Problem& p) { return p.N * p.kv_heads * ceil_div(p.Tk, kRows); }

template <class Kernel>
void allow_smem(Kernel kernel, size_t bytes) {
  if (bytes > 48 * 1024)
    FK_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       static_cast<int>(bytes)));
}

struct Parts {
  size_t delta, scratch;
};

Parts carve(const Problem& p, bool backward, WorkspaceLayout* ws) {
  Parts parts;
  int64_t scratch = 0;
  const Plan f = plan(forward_items(p), attn::forward_floats(p.D, p.Dv));
  scratch = std::max<int64_t>(scratch, f.global_floats * f.blocks);
  if (backward) {
    const Plan q = plan(forward_items(p), attn::dq_floats(p.D, p.Dv));
    const Plan kv = plan(dkv_items(p), attn::dkv_floats(p.D, p.Dv));
    scratch = std::max<int64_t>(scratch, q.global_floats * q.blocks);
    scratch = std::max<int64_t>(scratch, kv.global_floats * kv.blocks);
  }
  parts.delta = ws->add(backward ? sizeof(float) * static_cast<size_t>(p.N * p.heads * p.Tq) : 0);
  parts.scratch = ws->add(sizeof(float) * static_cast<size_t>(scratch));
  return parts;
}

float* at(void* base, size_t off) {
  return reinterpret_cast<float*>(static_cast<char*>(base) + off);
}

}  // namespace

size_t attention_workspace_bytes(const attn::Problem& p, bool backward) {
  WorkspaceLayout ws;
  carve(p, backward, &ws);
  return ws.bytes();
}

void attention_forward(float* out, float* lse, const float* q, const float* k, const float* v,
                       const attn::Problem& p, void* workspace, cudaStream_t stream) {
  const int64_t items = forward_items(p);
  if (items <= 0) return;
  WorkspaceLayout ws;
  const Parts parts = carve(p, false, &ws);
  const int64_t floats = attn::forward_floats(p.D, p.Dv);
  const Plan pl = plan(items, floats);
  if (pl.global_floats) {
    forward_kernel<true><<<pl.blocks, kRows, 0, stream>>>(out, lse, q, k, v, p,
                                                           at(workspace, parts.scratch), floats);
  } else {
    allow_smem(forward_kernel<false>, pl.smem);
    forward_kernel<false><<<pl.blocks, kRows, pl.smem, stream>>>(out, lse, q, k, v, p, nullptr,
                                                                 floats);
  }
  FK_CUDA_CHECK_LAUNCH("attention forward_kernel");
}

void attention_backward(float* dq, float* dk, float* dv, const float* dout, const float* q,
                        const float* k, const float* v, const float* out, const float* lse,
                        const attn::Problem& p, void* workspace, cudaStream_t stream) {
  WorkspaceLayout ws;
  const Parts parts = carve(p, true, &ws);
  float* delta = at(workspace, parts.delta);
  float* scratch = at(workspace, parts.scratch);
  const int64_t rows = p.N * p.heads * p.Tq;
  if (rows > 0) {
    const Launch1D c = launch_config(rows, 256);
    delta_kernel<<<c.blocks, c.threads, 0, stream>>>(delta, dout, out, p);
    FK_CUDA_CHECK_LAUNCH("attention delta_kernel");
    const int64_t floats = attn::dq_floats(p.D, p.Dv);
    const Plan pl = plan(forward_items(p), floats);
    if (pl.global_floats) {
      dq_kernel<true><<<pl.blocks, kRows, 0, stream>>>(dq, dout, q, k, v, lse, delta, p, scratch,
                                                       floats);
    } else {
      allow_smem(dq_kernel<false>, pl.smem);
      dq_kernel<false><<<pl.blocks, kRows, pl.smem, stream>>>(dq, dout, q, k, v, lse, delta, p,
                                                              nullptr, floats);
    }
    FK_CUDA_CHECK_LAUNCH("attention dq_kernel");
  }
  const int64_t items = dkv_items(p);
  if (items > 0) {
    const int64_t floats = attn::dkv_floats(p.D, p.Dv);
    const Plan pl = plan(items, floats);
    if (pl.global_floats) {
      dkv_kernel<true><<<pl.blocks, kRows, 0, stream>>>(dk, dv, dout, q, k, v, lse, delta, p,
                                                        scratch, floats);
    } else {
      allow_smem(dkv_kernel<false>, pl.smem);
      dkv_kernel<false><<<pl.blocks, kRows, pl.smem, stream>>>(dk, dv, dout, q, k, v, lse, delta,
                                                               p, nullptr, floats);
    }
    FK_CUDA_CHECK_LAUNCH("attention dkv_kernel");
  }
}

}  // namespace fk_cuda
