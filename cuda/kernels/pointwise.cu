// pointwise.cu: elementwise kernels (activations, bias add, dropout, embedding, sigmoid
// crossentropy) and the fused optimizer updates. The per-element math is in fk_cuda/*_math.h
// (FK_HD, shared with the host build tested in CI).
//
// Memory-bound maps: grid-stride loops; when every pointer is 16-byte aligned the body moves
// float4 vectors (n / 4 of them) and a scalar tail covers the last n % 4 elements. Grids are
// capped (launch_config), so any n is covered. Reductions are deterministic (no float atomics).
#include <cub/device/device_radix_sort.cuh>

#include <cstdint>

#include "fk_cuda/activation_math.h"
#include "fk_cuda/dropout_math.h"
#include "fk_cuda/launch.h"
#include "fk_cuda/loss_math.h"
#include "fk_cuda/optimizer_math.h"
#include "fk_cuda/runtime.h"
#include "kernels/pointwise.cuh"

namespace fk_cuda {
namespace {

constexpr int kThreads = 256;

bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

__device__ __forceinline__ int64_t gtid() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ int64_t gstride() {
  return static_cast<int64_t>(gridDim.x) * blockDim.x;
}

// out[i] = f(i, a[i], b[i], c[i]) over [0, n); null inputs read as 0. vec: all pointers are
// 16-byte aligned (then f sees the same i as the scalar path: 4 v + lane).
template <class F>
__global__ void map3_kernel(float* __restrict__ out, const float* __restrict__ a,
                            const float* __restrict__ b, const float* __restrict__ c, int64_t n,
                            bool vec, F f) {
  int64_t tail = 0;
  if (vec) {
    const int64_t n4 = n / 4;
    for (int64_t v = gtid(); v < n4; v += gstride()) {
      float4 va = a ? reinterpret_cast<const float4*>(a)[v] : make_float4(0, 0, 0, 0);
      float4 vb = b ? reinterpret_cast<const float4*>(b)[v] : make_float4(0, 0, 0, 0);
      float4 vc = c ? reinterpret_cast<const float4*>(c)[v] : make_float4(0, 0, 0, 0);
      const int64_t i = 4 * v;
      float4 r;
      r.x = f(i, va.x, vb.x, vc.x);
      r.y = f(i + 1, va.y, vb.y, vc.y);
      r.z = f(i + 2, va.z, vb.z, vc.z);
      r.w = f(i + 3, va.w, vb.w, vc.w);
      reinterpret_cast<float4*>(out)[v] = r;
    }
    tail = 4 * n4;
  }
  for (int64_t i = tail + gtid(); i < n; i += gstride())
    out[i] = f(i, a ? a[i] : 0.f, b ? b[i] : 0.f, c ? c[i] : 0.f);
}

template <class F>
void map3(float* out, const float* a, const float* b, const float* c, int64_t n, F f,
          cudaStream_t s) {
  if (n <= 0) return;
  const bool vec = aligned16(out) && (!a || aligned16(a)) && (!b || aligned16(b)) &&
                   (!c || aligned16(c));
  const Launch1D cfg = launch_config(vec ? ceil_div(n, 4) : n, kThreads);
  map3_kernel<<<cfg.blocks, cfg.threads, 0, s>>>(out, a, b, c, n, vec, f);
  FK_CUDA_CHECK_LAUNCH("pointwise map kernel");
}

template <int64_t kAct>
struct ActForward {
  float alpha;
  __device__ float operator()(int64_t, float x, float, float) const {
    return act_forward(kAct, x, alpha);
  }
};

template <int64_t kAct>
struct ActBackward {
  float alpha;
  __device__ float operator()(int64_t, float dy, float x, float y) const {
    return act_backward(kAct, dy, x, y, alpha);
  }
};

template <template <int64_t> class Op>
void act_dispatch(int64_t act, float alpha, float* out, const float* a, const float* b,
                  const float* c, int64_t n, cudaStream_t s) {
  switch (act) {
#define FK_ACT_CASE(k) \
  case k: map3(out, a, b, c, n, Op<k>{alpha}, s); break;
    FK_ACT_CASE(0) FK_ACT_CASE(1) FK_ACT_CASE(2) FK_ACT_CASE(3) FK_ACT_CASE(4) FK_ACT_CASE(5)
    FK_ACT_CASE(6) FK_ACT_CASE(7) FK_ACT_CASE(8) FK_ACT_CASE(9) FK_ACT_CASE(10)
    FK_ACT_CASE(11) FK_ACT_CASE(12) FK_ACT_CASE(13)
#undef FK_ACT_CASE
    default: break;  // validated by the binding
  }
}

struct BiasAdd {
  const float* b;
  int64_t cols;
  __device__ float operator()(int64_t i, float x, float, float) const { return x + b[i % cols]; }
};

struct Mul {
  __device__ float operator()(int64_t, float a, float b, float) const { return a * b; }
};

struct SigmoidCeForward {
  __device__ float operator()(int64_t, float x, float z, float) const {
    return sigmoid_ce_term(x, z);
  }
};

struct SigmoidCeBackward {
  __device__ float operator()(int64_t, float dl, float x, float z) const {
    return sigmoid_ce_grad(dl, x, z);
  }
};

// ---- dropout: two outputs ---------------------------------------------------------------------
__global__ void dropout_kernel(float* __restrict__ y, float* __restrict__ mask,
                               const float* __restrict__ x, int64_t n, bool vec,
                               DropoutParams p) {
  int64_t tail = 0;
  if (vec) {
    const int64_t n4 = n / 4;
    for (int64_t v = gtid(); v < n4; v += gstride()) {
      const float4 xv = reinterpret_cast<const float4*>(x)[v];
      const uint64_t i = static_cast<uint64_t>(4 * v);
      float4 m;
      m.x = dropout_mask_value(i, p);
      m.y = dropout_mask_value(i + 1, p);
      m.z = dropout_mask_value(i + 2, p);
      m.w = dropout_mask_value(i + 3, p);
      reinterpret_cast<float4*>(mask)[v] = m;
      reinterpret_cast<float4*>(y)[v] = make_float4(xv.x * m.x, xv.y * m.y, xv.z * m.z,
                                                    xv.w * m.w);
    }
    tail = 4 * n4;
  }
  for (int64_t i = tail + gtid(); i < n; i += gstride()) {
    const float m = dropout_mask_value(static_cast<uint64_t>(i), p);
    mask[i] = m;
    y[i] = x[i] * m;
  }
}

// ---- bias gradient: column sums in two deterministic passes ------------------------------------
constexpr int64_t kBiasChunkRows = 256;  // rows per partial sum

// partial (chunks, cols) double: block (x: columns, y: chunk k) sums rows [k R, (k+1) R) of its
// columns, in groups of 8 rows added pairwise in float (as the CPU), group totals in double.
__global__ void bias_partial_kernel(double* __restrict__ partial, const float* __restrict__ dy,
                                    int64_t rows, int64_t cols, int64_t chunks) {
  for (int64_t k = blockIdx.y; k < chunks; k += gridDim.y) {
    const int64_t r0 = k * kBiasChunkRows;
    const int64_t r1 = r0 + kBiasChunkRows < rows ? r0 + kBiasChunkRows : rows;
    for (int64_t j = gtid(); j < cols; j += gstride()) {
      double acc = 0.0;
      int64_t r = r0;
      for (; r + 8 <= r1; r += 8) {
        const float* p = dy + r * cols + j;
        const float a = (p[0] + p[cols]) + (p[2 * cols] + p[3 * cols]);
        const float b = (p[4 * cols] + p[5 * cols]) + (p[6 * cols] + p[7 * cols]);
        acc += static_cast<double>(a + b);
      }
      for (; r < r1; ++r) acc += dy[r * cols + j];
      partial[k * cols + j] = acc;
    }
  }
}

__global__ void bias_final_kernel(float* __restrict__ db, const double* __restrict__ partial,
                                  int64_t cols, int64_t chunks) {
  for (int64_t j = gtid(); j < cols; j += gstride()) {
    double s = 0.0;
    for (int64_t k = 0; k < chunks; ++k) s += partial[k * cols + j];
    db[j] = static_cast<float>(s);
  }
}

// ---- embedding ----------------------------------------------------------------------------------
__global__ void embedding_forward_kernel(float* __restrict__ y, const int64_t* __restrict__ idx,
                                         const float* __restrict__ table, int64_t n, int64_t D) {
  const int64_t total = n * D;
  for (int64_t e = gtid(); e < total; e += gstride()) {
    const int64_t i = e / D, d = e - i * D;
    y[e] = table[idx[i] * D + d];
  }
}

__global__ void iota_kernel(int64_t* __restrict__ pos, int64_t n) {
  for (int64_t i = gtid(); i < n; i += gstride()) pos[i] = i;
}

__global__ void zero_kernel(float* __restrict__ p, int64_t n) {
  for (int64_t i = gtid(); i < n; i += gstride()) p[i] = 0.0f;
}

// One warp per sorted position that starts a run of equal indices: the warp's lanes cover D
// and add the run's dy rows in position order (stable sort), from 0, in float.
__global__ void embedding_segment_kernel(float* __restrict__ dtable,
                                         const float* __restrict__ dy,
                                         const int64_t* __restrict__ keys,
                                         const int64_t* __restrict__ pos, int64_t n, int64_t D) {
  const int lane = threadIdx.x & 31;
  const int64_t warp = gtid() >> 5, warps = gstride() >> 5;
  for (int64_t s = warp; s < n; s += warps) {
    const int64_t v = keys[s];
    if (s > 0 && keys[s - 1] == v) continue;
    int64_t e = s + 1;
    while (e < n && keys[e] == v) ++e;
    for (int64_t d = lane; d < D; d += 32) {
      float acc = 0.0f;
      for (int64_t k = s; k < e; ++k) acc += dy[pos[k] * D + d];
      dtable[v * D + d] = acc;
    }
  }
}

__global__ void index_check_kernel(const int64_t* __restrict__ idx, int64_t n, int64_t V,
                                   unsigned long long* first_bad) {
  for (int64_t i = gtid(); i < n; i += gstride())
    if (idx[i] < 0 || idx[i] >= V) atomicMin(first_bad, static_cast<unsigned long long>(i));
}

int key_bits(int64_t V) {
  int b = 1;
  while (b < 63 && (int64_t{1} << b) < V) ++b;
  return b;
}

// ---- optimizers: param + up to 4 slots, float4 when aligned -------------------------------------
struct Slots {
  float* s[5];  // param first; null optional slots
};

template <int kSlots, class Op>
__global__ void opt_kernel(Slots sl, const float* __restrict__ g, int64_t n, bool vec, Op op) {
  int64_t tail = 0;
  if (vec) {
    const int64_t n4 = n / 4;
    for (int64_t v = gtid(); v < n4; v += gstride()) {
      float4 buf[kSlots];
#pragma unroll
      for (int k = 0; k < kSlots; ++k)
        buf[k] = sl.s[k] ? reinterpret_cast<const float4*>(sl.s[k])[v] : make_float4(0, 0, 0, 0);
      const float4 gv = reinterpret_cast<const float4*>(g)[v];
      float lane[kSlots];
#define FK_OPT_LANE(c)                                        \
  _Pragma("unroll") for (int k = 0; k < kSlots; ++k) lane[k] = buf[k].c; \
  op(lane, gv.c);                                             \
  _Pragma("unroll") for (int k = 0; k < kSlots; ++k) buf[k].c = lane[k];
      FK_OPT_LANE(x) FK_OPT_LANE(y) FK_OPT_LANE(z) FK_OPT_LANE(w)
#undef FK_OPT_LANE
#pragma unroll
      for (int k = 0; k < kSlots; ++k)
        if (sl.s[k]) reinterpret_cast<float4*>(sl.s[k])[v] = buf[k];
    }
    tail = 4 * n4;
  }
  for (int64_t i = tail + gtid(); i < n; i += gstride()) {
    float lane[kSlots];
#pragma unroll
    for (int k = 0; k < kSlots; ++k) lane[k] = sl.s[k] ? sl.s[k][i] : 0.0f;
    op(lane, g[i]);
#pragma unroll
    for (int k = 0; k < kSlots; ++k)
      if (sl.s[k]) sl.s[k][i] = lane[k];
  }
}

template <int kSlots, class Op>
void run_opt(Slots sl, const float* g, int64_t n, Op op, cudaStream_t s, const char* name) {
  if (n <= 0) return;
  bool vec = aligned16(g);
  for (int k = 0; k < kSlots; ++k) vec = vec && (!sl.s[k] || aligned16(sl.s[k]));
  const Launch1D cfg = launch_config(vec ? ceil_div(n, 4) : n, kThreads);
  opt_kernel<kSlots><<<cfg.blocks, cfg.threads, 0, s>>>(sl, g, n, vec, op);
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) throw_cuda_error(err, name, __FILE__, __LINE__);
}

struct SgdOp {
  SgdArgs a;
  __device__ void operator()(float* v, float g) const { sgd_step(v[0], v[1], g, a); }
};
struct AdamOp {
  AdamArgs a;
  __device__ void operator()(float* v, float g) const { adam_step(v[0], v[1], v[2], v[3], g, a); }
};
struct AdamaxOp {
  AdamaxArgs a;
  __device__ void operator()(float* v, float g) const { adamax_step(v[0], v[1], v[2], g, a); }
};
struct NadamOp {
  NadamArgs a;
  __device__ void operator()(float* v, float g) const { nadam_step(v[0], v[1], v[2], g, a); }
};
struct RmspropOp {
  RmspropArgs a;
  __device__ void operator()(float* v, float g) const {
    rmsprop_step(v[0], v[1], v[2], v[3], g, a);
  }
};
struct AdagradOp {
  AdagradArgs a;
  __device__ void operator()(float* v, float g) const { adagrad_step(v[0], v[1], g, a); }
};
struct AdadeltaOp {
  AdadeltaArgs a;
  __device__ void operator()(float* v, float g) const { adadelta_step(v[0], v[1], v[2], g, a); }
};

}  // namespace

void activation_forward(float* y, const float* x, int64_t n, int64_t act, float alpha,
                        cudaStream_t s) {
  act_dispatch<ActForward>(act, alpha, y, x, nullptr, nullptr, n, s);
}

void activation_backward(float* dx, const float* dy, const float* x, const float* y, int64_t n,
                         int64_t act, float alpha, cudaStream_t s) {
  act_dispatch<ActBackward>(act, alpha, dx, dy, x, y, n, s);
}

void bias_add_forward(float* y, const float* x, const float* b, int64_t rows, int64_t cols,
                      cudaStream_t s) {
  if (cols <= 0) return;
  map3(y, x, nullptr, nullptr, rows * cols, BiasAdd{b, cols}, s);
}

size_t bias_add_backward_workspace(int64_t rows, int64_t cols) {
  const int64_t chunks = rows > 0 ? ceil_div(rows, kBiasChunkRows) : 1;
  return static_cast<size_t>(chunks * cols) * sizeof(double);
}

void bias_add_backward(float* db, const float* dy, int64_t rows, int64_t cols, void* workspace,
                       cudaStream_t s) {
  if (cols <= 0) return;
  const int64_t chunks = rows > 0 ? ceil_div(rows, kBiasChunkRows) : 1;
  double* partial = static_cast<double*>(workspace);
  const Launch1D cx = launch_config(cols, kThreads);
  dim3 grid(cx.blocks, static_cast<unsigned>(chunks < 65535 ? chunks : 65535));
  bias_partial_kernel<<<grid, cx.threads, 0, s>>>(partial, dy, rows, cols, chunks);
  FK_CUDA_CHECK_LAUNCH("bias_partial_kernel");
  bias_final_kernel<<<cx.blocks, cx.threads, 0, s>>>(db, partial, cols, chunks);
  FK_CUDA_CHECK_LAUNCH("bias_final_kernel");
}

void dropout_forward(float* y, float* mask, const float* x, int64_t n, float rate, int64_t seed,
                     cudaStream_t s) {
  if (n <= 0) return;
  const bool vec = aligned16(y) && aligned16(mask) && aligned16(x);
  const Launch1D cfg = launch_config(vec ? ceil_div(n, 4) : n, kThreads);
  dropout_kernel<<<cfg.blocks, cfg.threads, 0, s>>>(y, mask, x, n, vec,
                                                     dropout_params(rate, seed));
  FK_CUDA_CHECK_LAUNCH("dropout_kernel");
}

void dropout_backward(float* dx, const float* dy, const float* mask, int64_t n, cudaStream_t s) {
  map3(dx, dy, mask, nullptr, n, Mul{}, s);
}

void embedding_forward(float* y, const int64_t* indices, const float* table, int64_t n,
                       int64_t V, int64_t D, cudaStream_t s) {
  (void)V;
  if (n <= 0 || D <= 0) return;
  const Launch1D cfg = launch_config(n * D, kThreads);
  embedding_forward_kernel<<<cfg.blocks, cfg.threads, 0, s>>>(y, indices, table, n, D);
  FK_CUDA_CHECK_LAUNCH("embedding_forward_kernel");
}

int64_t find_bad_index(const int64_t* indices, int64_t n, int64_t V, void* scratch,
                       int64_t* bad_value, cudaStream_t s) {
  if (n <= 0) return -1;
  auto* first = static_cast<unsigned long long*>(scratch);
  FK_CUDA_CHECK(cudaMemsetAsync(first, 0xff, sizeof(unsigned long long), s));
  const Launch1D cfg = launch_config(n, kThreads);
  index_check_kernel<<<cfg.blocks, cfg.threads, 0, s>>>(indices, n, V, first);
  FK_CUDA_CHECK_LAUNCH("index_check_kernel");
  unsigned long long host = 0;
  FK_CUDA_CHECK(cudaMemcpyAsync(&host, first, sizeof host, cudaMemcpyDeviceToHost, s));
  FK_CUDA_CHECK(cudaStreamSynchronize(s));
  if (host == ~0ull) return -1;
  const int64_t pos = static_cast<int64_t>(host);
  FK_CUDA_CHECK(cudaMemcpyAsync(bad_value, indices + pos, sizeof(int64_t),
                                cudaMemcpyDeviceToHost, s));
  FK_CUDA_CHECK(cudaStreamSynchronize(s));
  return pos;
}

// Workspace: sorted keys, positions in and out (n int64 each), then CUB's temporary storage.
size_t embedding_backward_workspace(int64_t n, int64_t V) {
  size_t cub_bytes = 0;
  if (n > 0) {
    FK_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(
        nullptr, cub_bytes, static_cast<const int64_t*>(nullptr), static_cast<int64_t*>(nullptr),
        static_cast<const int64_t*>(nullptr), static_cast<int64_t*>(nullptr),
        static_cast<int>(n), 0, key_bits(V)));
  }
  WorkspaceLayout w;
  w.add(static_cast<size_t>(n) * 8);
  w.add(static_cast<size_t>(n) * 8);
  w.add(static_cast<size_t>(n) * 8);
  w.add(cub_bytes);
  return w.total;
}

void embedding_backward(float* dtable, const float* dy, const int64_t* indices, int64_t n,
                        int64_t V, int64_t D, void* workspace, size_t workspace_bytes,
                        cudaStream_t s) {
  if (D <= 0 || V <= 0) return;
  const Launch1D cz = launch_config(V * D, kThreads);
  zero_kernel<<<cz.blocks, cz.threads, 0, s>>>(dtable, V * D);
  FK_CUDA_CHECK_LAUNCH("zero_kernel");
  if (n <= 0) return;
  WorkspaceLayout w;
  char* base = static_cast<char*>(workspace);
  int64_t* keys = reinterpret_cast<int64_t*>(base + w.add(static_cast<size_t>(n) * 8));
  int64_t* pos_in = reinterpret_cast<int64_t*>(base + w.add(static_cast<size_t>(n) * 8));
  int64_t* pos = reinterpret_cast<int64_t*>(base + w.add(static_cast<size_t>(n) * 8));
  const size_t used = w.total;
  void* cub_tmp = base + align_up(used, 256);
  size_t cub_bytes = workspace_bytes > align_up(used, 256) ? workspace_bytes - align_up(used, 256)
                                                           : 0;
  const Launch1D cn = launch_config(n, kThreads);
  iota_kernel<<<cn.blocks, cn.threads, 0, s>>>(pos_in, n);
  FK_CUDA_CHECK_LAUNCH("iota_kernel");
  FK_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(cub_tmp, cub_bytes, indices, keys, pos_in, pos,
                                                static_cast<int>(n), 0, key_bits(V), s));
  const Launch1D cw = launch_config(n * 32, kThreads);
  embedding_segment_kernel<<<cw.blocks, cw.threads, 0, s>>>(dtable, dy, keys, pos, n, D);
  FK_CUDA_CHECK_LAUNCH("embedding_segment_kernel");
}

void sigmoid_crossentropy_forward(float* loss, const float* logits, const float* labels,
                                  int64_t n, cudaStream_t s) {
  map3(loss, logits, labels, nullptr, n, SigmoidCeForward{}, s);
}

void sigmoid_crossentropy_backward(float* dlogits, const float* dloss, const float* logits,
                                   const float* labels, int64_t n, cudaStream_t s) {
  map3(dlogits, dloss, logits, labels, n, SigmoidCeBackward{}, s);
}

void sgd_update(float* param, float* velocity, const float* grad, int64_t n, const SgdArgs& a,
                cudaStream_t s) {
  run_opt<2>(Slots{{param, a.momentum != 0.f ? velocity : nullptr}}, grad, n, SgdOp{a}, s,
             "launch of sgd_update");
}

void adam_update(float* param, float* m, float* v, float* vhat, const float* grad, int64_t n,
                 const AdamArgs& a, cudaStream_t s) {
  AdamArgs b = a;
  b.amsgrad = vhat != nullptr;
  run_opt<4>(Slots{{param, m, v, vhat}}, grad, n, AdamOp{b}, s, "launch of adam_update");
}

void adamax_update(float* param, float* m, float* u, const float* grad, int64_t n,
                   const AdamaxArgs& a, cudaStream_t s) {
  run_opt<3>(Slots{{param, m, u}}, grad, n, AdamaxOp{a}, s, "launch of adamax_update");
}

void nadam_update(float* param, float* m, float* v, const float* grad, int64_t n,
                  const NadamArgs& a, cudaStream_t s) {
  run_opt<3>(Slots{{param, m, v}}, grad, n, NadamOp{a}, s, "launch of nadam_update");
}

void rmsprop_update(float* param, float* velocity, float* momentum_buf, float* average_grad,
                    const float* grad, int64_t n, const RmspropArgs& a, cudaStream_t s) {
  RmspropArgs b = a;
  b.centered = average_grad != nullptr;
  run_opt<4>(Slots{{param, velocity, a.momentum > 0.f ? momentum_buf : nullptr,
                    average_grad}},
             grad, n, RmspropOp{b}, s, "launch of rmsprop_update");
}

void adagrad_update(float* param, float* accumulator, const float* grad, int64_t n,
                    const AdagradArgs& a, cudaStream_t s) {
  run_opt<2>(Slots{{param, accumulator}}, grad, n, AdagradOp{a}, s, "launch of adagrad_update");
}

void adadelta_update(float* param, float* accumulated_grad, float* accumulated_delta,
                     const float* grad, int64_t n, const AdadeltaArgs& a, cudaStream_t s) {
  run_opt<3>(Slots{{param, accumulated_grad, accumulated_delta}}, grad, n, AdadeltaOp{a}, s,
             "launch of adadelta_update");
}

}  // namespace fk_cuda
