// rnn_gates.cu: the fused per-step gate kernels of the CUDA LSTM / GRU / SimpleRNN (contract in
// rnn_gates.cuh; the math, shared with the CPU tests, in fk_cuda/rnn_math.h, whose formulas are
// cpp/rnn/gates_impl.h's). One thread per (row, unit): each reads its unit's G gate values of
// the step (xp + rp), writes the gates and states; loads are coalesced along units.
// dh_rec / dh_direct / rh / drh / dc are dense (N, U) step buffers (ld = U).
#include "fk_cuda/launch.h"
#include "fk_cuda/rnn_math.h"
#include "fk_cuda/runtime.h"
#include "rnn_gates.cuh"

namespace fk_cuda {
namespace {

constexpr int kThreads = 256;

// Grid-stride over the N * U (row, unit) pairs: body(n, j, k) with k = n * U + j.
#define FK_FOR_UNITS(N, U)                                                        \
  for (int64_t k = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;  \
       k < (N) * (U); k += static_cast<int64_t>(gridDim.x) * blockDim.x)

__global__ void lstm_fwd_kernel(float* gates, int64_t ld_g, float* c, int64_t ld_c, float* h,
                                int64_t ld_h, float* h_copy, int64_t ld_hc,
                                const float* __restrict__ xp, int64_t ld_xp,
                                const float* __restrict__ rp, int64_t ld_rp,
                                const float* c_prev, int64_t ld_cp, int64_t N, int64_t U,
                                int64_t a, int64_t ra) {
  FK_FOR_UNITS(N, U) {
    const int64_t n = k / U, j = k - n * U;
    const float* x = xp + n * ld_xp + j;
    const float* r = rp + n * ld_rp + j;
    const rnn::LstmOut o = rnn::lstm_forward(x[0] + r[0], x[U] + r[U], x[2 * U] + r[2 * U],
                                             x[3 * U] + r[3 * U], c_prev[n * ld_cp + j], a, ra);
    float* g = gates + n * ld_g + j;
    g[0] = o.i;
    g[U] = o.f;
    g[2 * U] = o.g;
    g[3 * U] = o.o;
    c[n * ld_c + j] = o.c;
    h[n * ld_h + j] = o.h;
    if (h_copy) h_copy[n * ld_hc + j] = o.h;
  }
}

__global__ void lstm_bwd_kernel(float* dz, int64_t ld_dz, float* dc, const float* dh_rec,
                                const float* dhs, int64_t ld_dhs, const float* gates,
                                int64_t ld_g, const float* c, int64_t ld_c, const float* c_prev,
                                int64_t ld_cp, int64_t N, int64_t U, int64_t a, int64_t ra) {
  FK_FOR_UNITS(N, U) {
    const int64_t n = k / U, j = k - n * U;
    float dh = dh_rec[k];
    if (dhs) dh += dhs[n * ld_dhs + j];
    const float* g = gates + n * ld_g + j;
    const rnn::LstmGrad o = rnn::lstm_backward(dh, dc[k], g[0], g[U], g[2 * U], g[3 * U],
                                               c[n * ld_c + j], c_prev[n * ld_cp + j], a, ra);
    float* d = dz + n * ld_dz + j;
    d[0] = o.dzi;
    d[U] = o.dzf;
    d[2 * U] = o.dzc;
    d[3 * U] = o.dzo;
    dc[k] = o.dc_prev;
  }
}

__global__ void gru_fwd_kernel(float* gates, int64_t ld_g, float* hproj, int64_t ld_hp,
                               float* h, int64_t ld_h, const float* __restrict__ xp,
                               int64_t ld_xp, const float* __restrict__ rp, int64_t ld_rp,
                               const float* h_prev, int64_t ld_hprev, int64_t N, int64_t U,
                               int64_t a, int64_t ra) {
  FK_FOR_UNITS(N, U) {
    const int64_t n = k / U, j = k - n * U;
    const float* x = xp + n * ld_xp + j;
    const float* r = rp + n * ld_rp + j;
    const rnn::GruOut o = rnn::gru_forward_reset_after(x[0], x[U], x[2 * U], r[0], r[U],
                                                       r[2 * U], h_prev[n * ld_hprev + j], a, ra);
    float* g = gates + n * ld_g + j;
    g[0] = o.z;
    g[U] = o.r;
    g[2 * U] = o.hh;
    hproj[n * ld_hp + j] = r[2 * U];
    h[n * ld_h + j] = o.h;
  }
}

__global__ void gru_bwd_kernel(float* dxp, int64_t ld_dxp, float* drp, float* dh_direct,
                               const float* dh_rec, const float* dhs, int64_t ld_dhs,
                               const float* gates, int64_t ld_g, const float* hproj,
                               int64_t ld_hp, const float* h_prev, int64_t ld_hprev, int64_t N,
                               int64_t U, int64_t a, int64_t ra) {
  FK_FOR_UNITS(N, U) {
    const int64_t n = k / U, j = k - n * U;
    float dh = dh_rec[k];
    if (dhs) dh += dhs[n * ld_dhs + j];
    const float* g = gates + n * ld_g + j;
    const rnn::GruGrad o = rnn::gru_backward_reset_after(dh, g[0], g[U], g[2 * U],
                                                         hproj[n * ld_hp + j],
                                                         h_prev[n * ld_hprev + j], a, ra);
    float* x = dxp + n * ld_dxp + j;
    float* r = drp + n * 3 * U + j;
    x[0] = r[0] = o.dz;
    x[U] = r[U] = o.dr;
    x[2 * U] = o.dxh;
    r[2 * U] = o.drh;
    dh_direct[k] = o.dh_prev;
  }
}

__global__ void gru_fwd_zr_kernel(float* gates, int64_t ld_g, float* rh, const float* xp,
                                  int64_t ld_xp, const float* rp, int64_t ld_rp,
                                  const float* h_prev, int64_t ld_hprev, int64_t N, int64_t U,
                                  int64_t ra) {
  FK_FOR_UNITS(N, U) {
    const int64_t n = k / U, j = k - n * U;
    const float* x = xp + n * ld_xp + j;
    const float* r = rp + n * ld_rp + j;
    float* g = gates + n * ld_g + j;
    rnn::gru_forward_zr(x[0], x[U], r[0], r[U], h_prev[n * ld_hprev + j], ra, g, g + U, rh + k);
  }
}

__global__ void gru_fwd_h_kernel(float* gates, int64_t ld_g, float* h, int64_t ld_h,
                                 const float* xp, int64_t ld_xp, const float* hproj,
                                 int64_t ld_hp, const float* h_prev, int64_t ld_hprev, int64_t N,
                                 int64_t U, int64_t a) {
  FK_FOR_UNITS(N, U) {
    const int64_t n = k / U, j = k - n * U;
    float* g = gates + n * ld_g + j;
    rnn::gru_forward_h(xp[n * ld_xp + 2 * U + j], hproj[n * ld_hp + j], g[0],
                       h_prev[n * ld_hprev + j], a, g + 2 * U, h + n * ld_h + j);
  }
}

__global__ void gru_bwd_zh_kernel(float* dxp, int64_t ld_dxp, float* dh_direct,
                                  const float* dh_rec, const float* dhs, int64_t ld_dhs,
                                  const float* gates, int64_t ld_g, const float* h_prev,
                                  int64_t ld_hprev, int64_t N, int64_t U, int64_t a, int64_t ra) {
  FK_FOR_UNITS(N, U) {
    const int64_t n = k / U, j = k - n * U;
    float dh = dh_rec[k];
    if (dhs) dh += dhs[n * ld_dhs + j];
    const float* g = gates + n * ld_g + j;
    const rnn::GruGrad o = rnn::gru_backward_zh(dh, g[0], g[2 * U], h_prev[n * ld_hprev + j], a,
                                                ra);
    float* x = dxp + n * ld_dxp + j;
    x[0] = o.dz;
    x[2 * U] = o.dxh;
    dh_direct[k] = o.dh_prev;
  }
}

__global__ void gru_bwd_r_kernel(float* dxp, int64_t ld_dxp, float* dh_direct, const float* drh,
                                 const float* gates, int64_t ld_g, const float* h_prev,
                                 int64_t ld_hprev, int64_t N, int64_t U, int64_t ra) {
  FK_FOR_UNITS(N, U) {
    const int64_t n = k / U, j = k - n * U;
    rnn::gru_backward_r(drh[k], gates[n * ld_g + U + j], h_prev[n * ld_hprev + j], ra,
                        dxp + n * ld_dxp + U + j, dh_direct + k);
  }
}

__global__ void simple_fwd_kernel(float* h, int64_t ld_h, float* h_copy, int64_t ld_hc,
                                  const float* xp, int64_t ld_xp, const float* rp,
                                  int64_t ld_rp, int64_t N, int64_t U, int64_t a) {
  FK_FOR_UNITS(N, U) {
    const int64_t n = k / U, j = k - n * U;
    const float v = rnn::simple_forward(xp[n * ld_xp + j] + rp[n * ld_rp + j], a);
    h[n * ld_h + j] = v;
    if (h_copy) h_copy[n * ld_hc + j] = v;
  }
}

__global__ void simple_bwd_kernel(float* dz, int64_t ld_dz, const float* dh_rec,
                                  const float* dhs, int64_t ld_dhs, const float* h, int64_t ld_h,
                                  int64_t N, int64_t U, int64_t a) {
  FK_FOR_UNITS(N, U) {
    const int64_t n = k / U, j = k - n * U;
    float dh = dh_rec[k];
    if (dhs) dh += dhs[n * ld_dhs + j];
    dz[n * ld_dz + j] = rnn::simple_backward(dh, h[n * ld_h + j], a);
  }
}

#undef FK_FOR_UNITS

Launch1D grid(int64_t N, int64_t U) { return launch_config(N * U, kThreads); }

}  // namespace

#define FK_LAUNCH(kernel, N, U, ...)                                       \
  do {                                                                     \
    const Launch1D c_ = grid(N, U);                                        \
    if (!c_.blocks) return;                                                \
    kernel<<<c_.blocks, c_.threads, 0, stream>>>(__VA_ARGS__);             \
    FK_CUDA_CHECK_LAUNCH(#kernel);                                         \
  } while (0)

void lstm_step_forward(float* gates, int64_t ld_g, float* c, int64_t ld_c, float* h,
                       int64_t ld_h, float* h_copy, int64_t ld_hc, const float* xp,
                       int64_t ld_xp, const float* rp, int64_t ld_rp, const float* c_prev,
                       int64_t ld_cp, int64_t N, int64_t U, int64_t act, int64_t rec_act,
                       cudaStream_t stream) {
  FK_LAUNCH(lstm_fwd_kernel, N, U, gates, ld_g, c, ld_c, h, ld_h, h_copy, ld_hc, xp, ld_xp, rp,
            ld_rp, c_prev, ld_cp, N, U, act, rec_act);
}

void lstm_step_backward(float* dz, int64_t ld_dz, float* dc, const float* dh_rec,
                        const float* dhs, int64_t ld_dhs, const float* gates, int64_t ld_g,
                        const float* c, int64_t ld_c, const float* c_prev, int64_t ld_cp,
                        int64_t N, int64_t U, int64_t act, int64_t rec_act, cudaStream_t stream) {
  FK_LAUNCH(lstm_bwd_kernel, N, U, dz, ld_dz, dc, dh_rec, dhs, ld_dhs, gates, ld_g, c, ld_c,
            c_prev, ld_cp, N, U, act, rec_act);
}

void gru_step_forward(float* gates, int64_t ld_g, float* hproj, int64_t ld_hp, float* h,
                      int64_t ld_h, const float* xp, int64_t ld_xp, const float* rp,
                      int64_t ld_rp, const float* h_prev, int64_t ld_hprev, int64_t N, int64_t U,
                      int64_t act, int64_t rec_act, cudaStream_t stream) {
  FK_LAUNCH(gru_fwd_kernel, N, U, gates, ld_g, hproj, ld_hp, h, ld_h, xp, ld_xp, rp, ld_rp,
            h_prev, ld_hprev, N, U, act, rec_act);
}

void gru_step_backward(float* dxp, int64_t ld_dxp, float* drp, float* dh_direct,
                       const float* dh_rec, const float* dhs, int64_t ld_dhs, const float* gates,
                       int64_t ld_g, const float* hproj, int64_t ld_hp, const float* h_prev,
                       int64_t ld_hprev, int64_t N, int64_t U, int64_t act, int64_t rec_act,
                       cudaStream_t stream) {
  FK_LAUNCH(gru_bwd_kernel, N, U, dxp, ld_dxp, drp, dh_direct, dh_rec, dhs, ld_dhs, gates, ld_g,
            hproj, ld_hp, h_prev, ld_hprev, N, U, act, rec_act);
}

void gru_step_forward_zr(float* gates, int64_t ld_g, float* rh, const float* xp, int64_t ld_xp,
                         const float* rp, int64_t ld_rp, const float* h_prev, int64_t ld_hprev,
                         int64_t N, int64_t U, int64_t rec_act, cudaStream_t stream) {
  FK_LAUNCH(gru_fwd_zr_kernel, N, U, gates, ld_g, rh, xp, ld_xp, rp, ld_rp, h_prev, ld_hprev, N,
            U, rec_act);
}

void gru_step_forward_h(float* gates, int64_t ld_g, float* h, int64_t ld_h, const float* xp,
                        int64_t ld_xp, const float* hproj, int64_t ld_hp, const float* h_prev,
                        int64_t ld_hprev, int64_t N, int64_t U, int64_t act,
                        cudaStream_t stream) {
  FK_LAUNCH(gru_fwd_h_kernel, N, U, gates, ld_g, h, ld_h, xp, ld_xp, hproj, ld_hp, h_prev,
            ld_hprev, N, U, act);
}

void gru_step_backward_zh(float* dxp, int64_t ld_dxp, float* dh_direct, const float* dh_rec,
                          const float* dhs, int64_t ld_dhs, const float* gates, int64_t ld_g,
                          const float* h_prev, int64_t ld_hprev, int64_t N, int64_t U,
                          int64_t act, int64_t rec_act, cudaStream_t stream) {
  FK_LAUNCH(gru_bwd_zh_kernel, N, U, dxp, ld_dxp, dh_direct, dh_rec, dhs, ld_dhs, gates, ld_g,
            h_prev, ld_hprev, N, U, act, rec_act);
}

void gru_step_backward_r(float* dxp, int64_t ld_dxp, float* dh_direct, const float* drh,
                         const float* gates, int64_t ld_g, const float* h_prev, int64_t ld_hprev,
                         int64_t N, int64_t U, int64_t rec_act, cudaStream_t stream) {
  FK_LAUNCH(gru_bwd_r_kernel, N, U, dxp, ld_dxp, dh_direct, drh, gates, ld_g, h_prev, ld_hprev,
            N, U, rec_act);
}

void simple_step_forward(float* h, int64_t ld_h, float* h_copy, int64_t ld_hc, const float* xp,
                         int64_t ld_xp, const float* rp, int64_t ld_rp, int64_t N, int64_t U,
                         int64_t act, cudaStream_t stream) {
  FK_LAUNCH(simple_fwd_kernel, N, U, h, ld_h, h_copy, ld_hc, xp, ld_xp, rp, ld_rp, N, U, act);
}

void simple_step_backward(float* dz, int64_t ld_dz, const float* dh_rec, const float* dhs,
                          int64_t ld_dhs, const float* h, int64_t ld_h, int64_t N, int64_t U,
                          int64_t act, cudaStream_t stream) {
  FK_LAUNCH(simple_bwd_kernel, N, U, dz, ld_dz, dh_rec, dhs, ld_dhs, h, ld_h, N, U, act);
}

#undef FK_LAUNCH

}  // namespace fk_cuda
