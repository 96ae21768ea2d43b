// optimizers_more.cu: Lion, Ftrl, Lamb, Adafactor, Muon (elementwise parts) and
// ScheduleFreeAdamW on the GPU, the mirrors of cpp/optimizers/optimizers.cpp (kernels.h).
//
// Layouts: param, grad, ortho and every slot flat (n) float32; param and slots are READ AND
// WRITTEN in place (muon_momentum_update OVERWRITES out), grad / ortho are read only. The
// per-element math is fk_cuda/optimizer_more_math.h (the CPU loops' float32 expressions).
// Elementwise updates: one grid-stride map, 16-byte (float4) accesses when every buffer is
// 16-byte aligned (the caching allocator's blocks are), a scalar tail for n % 4.
// Lamb / Adafactor (trust ratio / RMS over the whole variable): pass 1 updates the moments and
// the decayed param in place and reduces two float64 sums per block (grid-stride over a fixed
// grid of reduce_blocks(n) blocks, halving tree in shared memory); one thread adds the block
// partials in block order and writes the step's scalars (coef, or alpha and denom) to the
// workspace; pass 2 applies them. No atomics: deterministic for a given n. Nothing goes
// through the host between the passes (no synchronisation).
#include "fk_cuda/launch.h"
#include "fk_cuda/optimizer_more_math.h"
#include "fk_cuda/runtime.h"
#include "optimizers_more.cuh"

namespace fk_cuda {
namespace {

constexpr int kThreads = 256;

__device__ __forceinline__ int64_t gtid() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ int64_t gstride() {
  return static_cast<int64_t>(gridDim.x) * blockDim.x;
}

// kRW buffers read and written, kRO read only (at least one of each slot kind is declared).
template <int kRW, int kRO>
struct Bufs {
  float* rw[kRW];
  const float* ro[kRO];
};

template <int kRW, int kRO>
bool aligned(const Bufs<kRW, kRO>& b) {
  bool ok = true;
  for (int k = 0; k < kRW; ++k) ok = ok && reinterpret_cast<uintptr_t>(b.rw[k]) % 16 == 0;
  for (int k = 0; k < kRO; ++k) ok = ok && reinterpret_cast<uintptr_t>(b.ro[k]) % 16 == 0;
  return ok;
}

__device__ __forceinline__ float& lane_of(float4& v, int c) {
  return reinterpret_cast<float*>(&v)[c];
}

// op(rw[kRW], ro[kRO]) on every element. kLastWriteOnly: the last rw buffer is only written
// (never read, so compute-sanitizer's initcheck accepts an uninitialised output).
template <bool kLastWriteOnly, int kRW, int kRO, class Op>
__global__ void __launch_bounds__(kThreads)
    map_kernel(Bufs<kRW, kRO> b, int64_t n, bool vec, Op op) {
  constexpr int kRead = kLastWriteOnly ? kRW - 1 : kRW;
  int64_t tail = 0;
  if (vec) {
    const int64_t n4 = n / 4;
    for (int64_t i = gtid(); i < n4; i += gstride()) {
      float4 w[kRW], r[kRO];
#pragma unroll
      for (int k = 0; k < kRW; ++k)
        w[k] = k < kRead ? reinterpret_cast<const float4*>(b.rw[k])[i] : make_float4(0, 0, 0, 0);
#pragma unroll
      for (int k = 0; k < kRO; ++k) r[k] = __ldg(reinterpret_cast<const float4*>(b.ro[k]) + i);
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        float lw[kRW], lr[kRO];
#pragma unroll
        for (int k = 0; k < kRW; ++k) lw[k] = lane_of(w[k], c);
#pragma unroll
        for (int k = 0; k < kRO; ++k) lr[k] = lane_of(r[k], c);
        op(lw, lr);
#pragma unroll
        for (int k = 0; k < kRW; ++k) lane_of(w[k], c) = lw[k];
      }
#pragma unroll
      for (int k = 0; k < kRW; ++k) reinterpret_cast<float4*>(b.rw[k])[i] = w[k];
    }
    tail = 4 * n4;
  }
  for (int64_t i = tail + gtid(); i < n; i += gstride()) {
    float lw[kRW], lr[kRO];
#pragma unroll
    for (int k = 0; k < kRW; ++k) lw[k] = k < kRead ? b.rw[k][i] : 0.f;
#pragma unroll
    for (int k = 0; k < kRO; ++k) lr[k] = b.ro[k][i];
    op(lw, lr);
#pragma unroll
    for (int k = 0; k < kRW; ++k) b.rw[k][i] = lw[k];
  }
}

template <bool kLastWriteOnly = false, int kRW, int kRO, class Op>
void run_map(Bufs<kRW, kRO> b, int64_t n, Op op, cudaStream_t s, const char* name) {
  if (n <= 0) return;
  const bool vec = aligned(b);
  const Launch1D c = launch_config(vec ? ceil_div(n, 4) : n, kThreads);
  map_kernel<kLastWriteOnly><<<c.blocks, c.threads, 0, s>>>(b, n, vec, op);
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) throw_cuda_error(err, name, __FILE__, __LINE__);
}

// Pass 1 of Lamb / Adafactor: op(rw, ro, s0, s1) per element, block sums into partial (2, G).
template <int kRW, int kRO, class Op>
__global__ void __launch_bounds__(kReduceThreads)
    reduce_kernel(double* __restrict__ partial, Bufs<kRW, kRO> b, int64_t n, Op op) {
  __shared__ double sh[2][kReduceThreads];
  double s0 = 0.0, s1 = 0.0;
  for (int64_t i = gtid(); i < n; i += gstride()) {
    float lw[kRW], lr[kRO];
#pragma unroll
    for (int k = 0; k < kRW; ++k) lw[k] = b.rw[k][i];
#pragma unroll
    for (int k = 0; k < kRO; ++k) lr[k] = b.ro[k][i];
    op(lw, lr, s0, s1);
#pragma unroll
    for (int k = 0; k < kRW; ++k) b.rw[k][i] = lw[k];
  }
  const int t = threadIdx.x;
  sh[0][t] = s0;
  sh[1][t] = s1;
  __syncthreads();
  for (int h = kReduceThreads / 2; h > 0; h >>= 1) {
    if (t < h) {
      sh[0][t] += sh[0][t + h];
      sh[1][t] += sh[1][t + h];
    }
    __syncthreads();
  }
  if (t == 0) {
    partial[blockIdx.x] = sh[0][0];
    partial[gridDim.x + blockIdx.x] = sh[1][0];
  }
}

// One thread: the block partials in block order, then the step's scalars.
template <class Fin>
__global__ void finalize_kernel(float* scalars, const double* partial, int64_t blocks, Fin fin) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  double s0 = 0.0, s1 = 0.0;
  for (int64_t k = 0; k < blocks; ++k) {
    s0 += partial[k];
    s1 += partial[blocks + k];
  }
  fin(scalars, s0, s1);
}

struct LionOp {
  LionArgs a;
  __device__ void operator()(float* w, const float* r) const { lion_step(w[0], w[1], r[0], a); }
};
struct FtrlOp {
  FtrlArgs a;
  __device__ void operator()(float* w, const float* r) const {
    ftrl_step(w[0], w[1], w[2], r[0], a);
  }
};
struct LambMomentsOp {
  LambArgs a;
  __device__ void operator()(float* w, const float* r, double& s0, double& s1) const {
    lamb_moments(w[0], w[1], w[2], r[0], a, s0, s1);
  }
};
struct LambFin {
  float lr;
  __device__ void operator()(float* sc, double s0, double s1) const {
    sc[0] = lamb_coef(s0, s1, lr);
  }
};
struct LambApplyOp {  // rw: param; ro: m, v
  LambArgs a;
  const float* scalars;
  __device__ void operator()(float* w, const float* r) const {
    lamb_apply(w[0], r[0], r[1], scalars[0], a);
  }
};
struct AdafactorMomentsOp {
  AdafactorArgs a;
  __device__ void operator()(float* w, const float* r, double& s0, double& s1) const {
    adafactor_moments(w[0], w[1], r[0], a, s0, s1);
  }
};
struct AdafactorFin {
  AdafactorArgs a;
  int64_t n;
  __device__ void operator()(float* sc, double s0, double s1) const {
    adafactor_scalars(s0, s1, n, a, sc, sc + 1);
  }
};
struct AdafactorApplyOp {  // rw: param; ro: v, grad
  const float* scalars;
  __device__ void operator()(float* w, const float* r) const {
    adafactor_apply(w[0], r[0], r[1], scalars[0], scalars[1]);
  }
};
struct MuonMomentumOp {  // rw: m, out; ro: grad
  MuonArgs a;
  __device__ void operator()(float* w, const float* r) const {
    muon_momentum_step(w[0], w[1], r[0], a);
  }
};
struct MuonOp {
  MuonArgs a;
  __device__ void operator()(float* w, const float* r) const { muon_step(w[0], r[0], a); }
};
struct SfAdamwOp {
  SfAdamwArgs a;
  __device__ void operator()(float* w, const float* r) const {
    sfadamw_step(w[0], w[1], w[2], r[0], a);
  }
};

struct Parts {
  int64_t blocks;
  size_t partial, scalars;
};

Parts carve(int64_t n, WorkspaceLayout* ws) {
  Parts p;
  p.blocks = reduce_blocks(n);
  p.partial = ws->add(sizeof(double) * static_cast<size_t>(2 * p.blocks));
  p.scalars = ws->add(sizeof(float) * 2);
  return p;
}

template <class T>
T* at(void* base, size_t off) {
  return reinterpret_cast<T*>(static_cast<char*>(base) + off);
}

// Pass 1 + finalize of a two-pass update; returns the device scalars.
template <int kRW, int kRO, class Op, class Fin>
float* reduce_pass(Bufs<kRW, kRO> b, int64_t n, Op op, Fin fin, void* workspace, cudaStream_t s,
                   const char* name) {
  WorkspaceLayout ws;
  const Parts p = carve(n, &ws);
  double* partial = at<double>(workspace, p.partial);
  float* scalars = at<float>(workspace, p.scalars);
  reduce_kernel<<<static_cast<unsigned>(p.blocks), kReduceThreads, 0, s>>>(partial, b, n, op);
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) throw_cuda_error(err, name, __FILE__, __LINE__);
  finalize_kernel<<<1, 32, 0, s>>>(scalars, partial, p.blocks, fin);
  err = cudaGetLastError();
  if (err != cudaSuccess) throw_cuda_error(err, name, __FILE__, __LINE__);
  return scalars;
}

}  // namespace

size_t optimizer_more_workspace_bytes(int64_t n) {
  WorkspaceLayout ws;
  carve(n, &ws);
  return ws.bytes();
}

void lion_update(float* param, float* m, const float* grad, int64_t n, const LionArgs& a,
                 cudaStream_t s) {
  run_map(Bufs<2, 1>{{param, m}, {grad}}, n, LionOp{a}, s, "launch of lion_update");
}

void ftrl_update(float* param, float* accumulator, float* linear, const float* grad, int64_t n,
                 const FtrlArgs& a, cudaStream_t s) {
  run_map(Bufs<3, 1>{{param, accumulator, linear}, {grad}}, n, FtrlOp{a}, s,
          "launch of ftrl_update");
}

void lamb_update(float* param, float* m, float* v, const float* grad, int64_t n,
                 const LambArgs& a, void* workspace, cudaStream_t s) {
  if (n <= 0) return;
  const float* sc = reduce_pass(Bufs<3, 1>{{param, m, v}, {grad}}, n, LambMomentsOp{a},
                                LambFin{a.lr}, workspace, s, "launch of lamb_update pass 1");
  run_map(Bufs<1, 2>{{param}, {m, v}}, n, LambApplyOp{a, sc}, s, "launch of lamb_update pass 2");
}

void adafactor_update(float* param, float* v, const float* grad, int64_t n,
                      const AdafactorArgs& a, void* workspace, cudaStream_t s) {
  if (n <= 0) return;
  const float* sc = reduce_pass(Bufs<2, 1>{{param, v}, {grad}}, n, AdafactorMomentsOp{a},
                                AdafactorFin{a, n}, workspace, s,
                                "launch of adafactor_update pass 1");
  run_map(Bufs<1, 2>{{param}, {v, grad}}, n, AdafactorApplyOp{sc}, s,
          "launch of adafactor_update pass 2");
}

void muon_momentum_update(float* m, float* out, const float* grad, int64_t n, const MuonArgs& a,
                          cudaStream_t s) {
  run_map<true>(Bufs<2, 1>{{m, out}, {grad}}, n, MuonMomentumOp{a}, s,
          "launch of muon_momentum_update");
}

void muon_update(float* param, const float* ortho, int64_t n, const MuonArgs& a, cudaStream_t s) {
  run_map(Bufs<1, 1>{{param}, {ortho}}, n, MuonOp{a}, s, "launch of muon_update");
}

void schedule_free_adamw_update(float* param, float* z, float* v, const float* grad, int64_t n,
                                const SfAdamwArgs& a, cudaStream_t s) {
  run_map(Bufs<3, 1>{{param, z, v}, {grad}}, n, SfAdamwOp{a}, s,
          "launch of schedule_free_adamw_update");
}

}  // namespace fk_cuda
