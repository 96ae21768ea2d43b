// rnn_seq.cu: LSTM / GRU / SimpleRNN sequences on the GPU (contract: rnn_seq.cuh, kernels.h).
//
// Layouts as on the CPU (cpp/rnn/lstm.cpp): x (N, T, F), kernel (F, G*U), recurrent_kernel
// (U, G*U), batch-major; step s reads x[:, s] (x[:, T-1-s] with go_backwards) and writes
// hs[:, s] and the saved state of step s. Every output is OVERWRITTEN.
// Forward: XP = x @ kernel + bias for ALL steps as one GEMM (N*T rows); then per step one GEMM
// RP = h_prev @ recurrent_kernel and one fused gate kernel (rnn_gates.cu) reading XP's row of
// the step in place (a strided view, so go_backwards costs nothing).
// Backward: steps in reverse, each one fused gate-gradient kernel and one GEMM
// dh = dZ_s @ recurrent_kernel^T; dZ of all steps is kept (N, T, G*U), so that afterwards
// dkernel = X^T dZ, drecurrent_kernel = Hprev^T dZ and dx = dZ kernel^T are one GEMM each
// (dZ reversed to x's time order first when go_backwards), dbias = column sums of dZ.
// The cell kernels of rnn_cells.cu are these with T = 1.
#include <utility>

#include "fk_cuda/device_array.h"
#include "fk_cuda/runtime.h"
#include "rnn_gates.cuh"
#include "rnn_gemm.cuh"
#include "rnn_seq.cuh"

#ifdef FK_CUDA_RNN_ENABLED

namespace fk_cuda {
namespace {

using rnn_ops::gemm;

// A float32 scratch buffer from the caching allocator (freed, stream-ordered, at scope end).
struct Scratch {
  DeviceArray a;
  explicit Scratch(int64_t n) : a({n > 0 ? n : 1}, DType::Float32) {}
  float* p() { return a.data_as<float>(); }
};

// XP (N, T, W) = x (N*T, F) @ kernel (F, W) + bias (W) [opt].
void input_projection(float* xp, const float* x, const float* kernel, const float* bias,
                      int64_t NT, int64_t F, int64_t W, cudaStream_t st) {
  rnn_ops::fill_rows(xp, W, bias, NT, W, st);
  gemm(false, false, NT, W, F, 1.f, x, F, kernel, W, 1.f, xp, W, st);
}

// The step of x's time axis that processing step s reads.
int64_t time_of(int64_t s, int64_t T, bool go_backwards) { return go_backwards ? T - 1 - s : s; }

// Weight gradients after the reverse loop: dZ (N, T, W) in step order.
void weight_grads(float* dx, float* dkernel, float* drk, float* dbias, float* dz,
                  const float* x, const float* hp, const float* kernel, int64_t N, int64_t T,
                  int64_t F, int64_t U, int64_t W, bool go_backwards, cudaStream_t st) {
  const int64_t NT = N * T;
  if (drk) gemm(true, false, U, W, NT, 1.f, hp, U, dz, W, 0.f, drk, W, st);
  if (dbias) rnn_ops::col_sums(dbias, dz, W, NT, W, st);
  const float* dzx = dz;
  Scratch rev(go_backwards ? NT * W : 0);
  if (go_backwards) {
    rnn_ops::reverse_time(rev.p(), dz, N, T, W, st);
    dzx = rev.p();
  }
  if (dkernel) gemm(true, false, F, W, NT, 1.f, x, F, dzx, W, 0.f, dkernel, W, st);
  if (dx) gemm(false, true, NT, F, W, 1.f, dzx, W, kernel, W, 0.f, dx, F, st);
}

}  // namespace

void lstm_sequence_forward(float* hs, float* h_final, float* c_final, float* gates, float* cs,
                           const float* x, const float* h0, const float* c0, const float* kernel,
                           const float* recurrent_kernel, const float* bias, int64_t N,
                           int64_t T, int64_t F, int64_t U, bool go_backwards, int64_t act,
                           int64_t rec_act, cudaStream_t st) {
  const int64_t G = 4 * U;
  if (T == 0 || N == 0 || U == 0) {
    if (h_final) rnn_ops::copy_rows(h_final, U, h0, U, N, U, st);
    if (c_final) rnn_ops::copy_rows(c_final, U, c0, U, N, U, st);
    return;
  }
  Scratch xp(N * T * G), rp(N * G);
  input_projection(xp.p(), x, kernel, bias, N * T, F, G, st);
  for (int64_t s = 0; s < T; ++s) {
    const float* hprev = s ? hs + (s - 1) * U : h0;
    const float* cprev = s ? cs + (s - 1) * U : c0;
    const int64_t ldp = s ? T * U : U;
    gemm(false, false, N, G, U, 1.f, hprev, ldp, recurrent_kernel, G, 0.f, rp.p(), G, st);
    lstm_step_forward(gates + s * G, T * G, cs + s * U, T * U, hs + s * U, T * U, nullptr, 0,
                      xp.p() + time_of(s, T, go_backwards) * G, T * G, rp.p(), G, cprev, ldp, N,
                      U, act, rec_act, st);
  }
  if (h_final) rnn_ops::copy_rows(h_final, U, hs + (T - 1) * U, T * U, N, U, st);
  if (c_final) rnn_ops::copy_rows(c_final, U, cs + (T - 1) * U, T * U, N, U, st);
}

void lstm_sequence_backward(float* dx, float* dh0, float* dc0, float* dkernel,
                            float* drecurrent_kernel, float* dbias, const float* dhs,
                            const float* dh_final, const float* dc_final, const float* gates,
                            const float* cs, const float* hs, const float* x, const float* h0,
                            const float* c0, const float* kernel, const float* recurrent_kernel,
                            int64_t N, int64_t T, int64_t F, int64_t U, bool go_backwards,
                            int64_t act, int64_t rec_act, cudaStream_t st) {
  const int64_t G = 4 * U;
  Scratch dh(N * U), dc(N * U), dz(N * T * G), hp(N * T * U);
  rnn_ops::copy_rows(dh.p(), U, dh_final, U, N, U, st);
  rnn_ops::copy_rows(dc.p(), U, dc_final, U, N, U, st);
  for (int64_t s = T - 1; s >= 0; --s) {
    const float* cprev = s ? cs + (s - 1) * U : c0;
    const int64_t ldp = s ? T * U : U;
    lstm_step_backward(dz.p() + s * G, T * G, dc.p(), dh.p(), dhs ? dhs + s * U : nullptr,
                       T * U, gates + s * G, T * G, cs + s * U, T * U, cprev, ldp, N, U, act,
                       rec_act, st);
    gemm(false, true, N, U, G, 1.f, dz.p() + s * G, T * G, recurrent_kernel, G, 0.f, dh.p(), U,
         st);
  }
  if (dh0) rnn_ops::copy_rows(dh0, U, dh.p(), U, N, U, st);
  if (dc0) rnn_ops::copy_rows(dc0, U, dc.p(), U, N, U, st);
  if (T == 0 || N == 0) {
    rnn_ops::fill_rows(dkernel, G, nullptr, F, G, st);
    rnn_ops::fill_rows(drecurrent_kernel, G, nullptr, U, G, st);
    if (dbias) rnn_ops::fill_rows(dbias, G, nullptr, 1, G, st);
    return;
  }
  rnn_ops::prev_states(hp.p(), hs, h0, nullptr, 0, N, T, U, st);
  weight_grads(dx, dkernel, drecurrent_kernel, dbias, dz.p(), x, hp.p(), kernel, N, T, F, U, G,
               go_backwards, st);
}

void simple_rnn_sequence_forward(float* hs, float* h_final, const float* x, const float* h0,
                                 const float* kernel, const float* recurrent_kernel,
                                 const float* bias, int64_t N, int64_t T, int64_t F, int64_t U,
                                 bool go_backwards, int64_t act, cudaStream_t st) {
  if (T == 0 || N == 0 || U == 0) {
    if (h_final) rnn_ops::copy_rows(h_final, U, h0, U, N, U, st);
    return;
  }
  Scratch xp(N * T * U), rp(N * U);
  input_projection(xp.p(), x, kernel, bias, N * T, F, U, st);
  for (int64_t s = 0; s < T; ++s) {
    const float* hprev = s ? hs + (s - 1) * U : h0;
    gemm(false, false, N, U, U, 1.f, hprev, s ? T * U : U, recurrent_kernel, U, 0.f, rp.p(), U,
         st);
    simple_step_forward(hs + s * U, T * U, nullptr, 0, xp.p() + time_of(s, T, go_backwards) * U,
                        T * U, rp.p(), U, N, U, act, st);
  }
  if (h_final) rnn_ops::copy_rows(h_final, U, hs + (T - 1) * U, T * U, N, U, st);
}

void simple_rnn_sequence_backward(float* dx, float* dh0, float* dkernel, float* drecurrent_kernel,
                                  float* dbias, const float* dhs, const float* dh_final,
                                  const float* hs, const float* x, const float* h0,
                                  const float* kernel, const float* recurrent_kernel, int64_t N,
                                  int64_t T, int64_t F, int64_t U, bool go_backwards, int64_t act,
                                  cudaStream_t st) {
  Scratch dh(N * U), dz(N * T * U), hp(N * T * U);
  rnn_ops::copy_rows(dh.p(), U, dh_final, U, N, U, st);
  for (int64_t s = T - 1; s >= 0; --s) {
    simple_step_backward(dz.p() + s * U, T * U, dh.p(), dhs ? dhs + s * U : nullptr, T * U,
                         hs + s * U, T * U, N, U, act, st);
    gemm(false, true, N, U, U, 1.f, dz.p() + s * U, T * U, recurrent_kernel, U, 0.f, dh.p(), U,
         st);
  }
  if (dh0) rnn_ops::copy_rows(dh0, U, dh.p(), U, N, U, st);
  if (T == 0 || N == 0) {
    rnn_ops::fill_rows(dkernel, U, nullptr, F, U, st);
    rnn_ops::fill_rows(drecurrent_kernel, U, nullptr, U, U, st);
    if (dbias) rnn_ops::fill_rows(dbias, U, nullptr, 1, U, st);
    return;
  }
  rnn_ops::prev_states(hp.p(), hs, h0, nullptr, 0, N, T, U, st);
  weight_grads(dx, dkernel, drecurrent_kernel, dbias, dz.p(), x, hp.p(), kernel, N, T, F, U, U,
               go_backwards, st);
}

void gru_sequence_forward(float* hs, float* h_final, float* gates, float* hproj, const float* x,
                          const float* h0, const float* kernel, const float* recurrent_kernel,
                          const float* bias, int64_t N, int64_t T, int64_t F, int64_t U,
                          bool go_backwards, bool reset_after, int64_t act, int64_t rec_act,
                          cudaStream_t st) {
  const int64_t G = 3 * U;
  if (T == 0 || N == 0 || U == 0) {
    if (h_final) rnn_ops::copy_rows(h_final, U, h0, U, N, U, st);
    return;
  }
  Scratch xp(N * T * G), rp(N * G), rh(N * U);
  input_projection(xp.p(), x, kernel, bias, N * T, F, G, st);  // bias row 0 when reset_after
  const float* rbias = reset_after && bias ? bias + G : nullptr;
  for (int64_t s = 0; s < T; ++s) {
    const float* hprev = s ? hs + (s - 1) * U : h0;
    const int64_t ldp = s ? T * U : U;
    const float* xps = xp.p() + time_of(s, T, go_backwards) * G;
    if (reset_after) {
      rnn_ops::fill_rows(rp.p(), G, rbias, N, G, st);
      gemm(false, false, N, G, U, 1.f, hprev, ldp, recurrent_kernel, G, 1.f, rp.p(), G, st);
      gru_step_forward(gates + s * G, T * G, hproj + s * U, T * U, hs + s * U, T * U, xps, T * G,
                       rp.p(), G, hprev, ldp, N, U, act, rec_act, st);
    } else {
      gemm(false, false, N, 2 * U, U, 1.f, hprev, ldp, recurrent_kernel, G, 0.f, rp.p(), G, st);
      gru_step_forward_zr(gates + s * G, T * G, rh.p(), xps, T * G, rp.p(), G, hprev, ldp, N, U,
                          rec_act, st);
      gemm(false, false, N, U, U, 1.f, rh.p(), U, recurrent_kernel + 2 * U, G, 0.f,
           hproj + s * U, T * U, st);
      gru_step_forward_h(gates + s * G, T * G, hs + s * U, T * U, xps, T * G, hproj + s * U,
                         T * U, hprev, ldp, N, U, act, st);
    }
  }
  if (h_final) rnn_ops::copy_rows(h_final, U, hs + (T - 1) * U, T * U, N, U, st);
}

void gru_sequence_backward(float* dx, float* dh0, float* dkernel, float* drecurrent_kernel,
                           float* dbias, const float* dhs, const float* dh_final,
                           const float* gates, const float* hproj, const float* hs,
                           const float* x, const float* h0, const float* kernel,
                           const float* recurrent_kernel, int64_t N, int64_t T, int64_t F,
                           int64_t U, bool go_backwards, bool reset_after, int64_t act,
                           int64_t rec_act, cudaStream_t st) {
  const int64_t G = 3 * U;
  Scratch dh(N * U), dd(N * U), drh(N * U), dxp(N * T * G), drp(reset_after ? N * T * G : 0),
      hp(N * T * U), step(reset_after ? N * G : 0);
  rnn_ops::copy_rows(dh.p(), U, dh_final, U, N, U, st);
  for (int64_t s = T - 1; s >= 0; --s) {
    const float* hprev = s ? hs + (s - 1) * U : h0;
    const int64_t ldp = s ? T * U : U;
    const float* dhss = dhs ? dhs + s * U : nullptr;
    float* dxs = dxp.p() + s * G;
    if (reset_after) {
      float* drs = drp.p() + s * G;
      // The gate kernel writes drp as a dense (N, 3U) step buffer; copied into all steps'.
      gru_step_backward(dxs, T * G, step.p(), dd.p(), dh.p(), dhss, T * U, gates + s * G, T * G,
                        hproj + s * U, T * U, hprev, ldp, N, U, act, rec_act, st);
      rnn_ops::copy_rows(drs, T * G, step.p(), G, N, G, st);
      gemm(false, true, N, U, G, 1.f, step.p(), G, recurrent_kernel, G, 1.f, dd.p(), U, st);
    } else {
      gru_step_backward_zh(dxs, T * G, dd.p(), dh.p(), dhss, T * U, gates + s * G, T * G, hprev,
                           ldp, N, U, act, rec_act, st);
      gemm(false, true, N, U, U, 1.f, dxs + 2 * U, T * G, recurrent_kernel + 2 * U, G, 0.f,
           drh.p(), U, st);
      gru_step_backward_r(dxs, T * G, dd.p(), drh.p(), gates + s * G, T * G, hprev, ldp, N, U,
                          rec_act, st);
      gemm(false, true, N, U, 2 * U, 1.f, dxs, T * G, recurrent_kernel, G, 1.f, dd.p(), U, st);
    }
    std::swap(dh, dd);
  }
  if (dh0) rnn_ops::copy_rows(dh0, U, dh.p(), U, N, U, st);
  const int64_t nb = reset_after ? 2 * G : G;
  if (T == 0 || N == 0) {
    rnn_ops::fill_rows(dkernel, G, nullptr, F, G, st);
    rnn_ops::fill_rows(drecurrent_kernel, G, nullptr, U, G, st);
    if (dbias) rnn_ops::fill_rows(dbias, nb, nullptr, 1, nb, st);
    return;
  }
  rnn_ops::prev_states(hp.p(), hs, h0, nullptr, 0, N, T, U, st);
  const int64_t NT = N * T;
  // dkernel, dx and the input bias from dXP.
  weight_grads(dx, dkernel, nullptr, dbias, dxp.p(), x, hp.p(), kernel, N, T, F, U, G,
               go_backwards, st);
  if (reset_after) {
    gemm(true, false, U, G, NT, 1.f, hp.p(), U, drp.p(), G, 0.f, drecurrent_kernel, G, st);
    if (dbias) rnn_ops::col_sums(dbias + G, drp.p(), G, NT, G, st);
  } else {
    gemm(true, false, U, 2 * U, NT, 1.f, hp.p(), U, dxp.p(), G, 0.f, drecurrent_kernel, G, st);
    Scratch rhs(NT * U);  // r * h_prev of every step
    rnn_ops::prev_states(rhs.p(), hs, h0, gates + U, G, N, T, U, st);
    gemm(true, false, U, U, NT, 1.f, rhs.p(), U, dxp.p() + 2 * U, G, 0.f,
         drecurrent_kernel + 2 * U, G, st);
  }
}

void lstm_cell_forward(float* h, float* c, float* gates, const float* x, const float* h_prev,
                       const float* c_prev, const float* kernel, const float* recurrent_kernel,
                       const float* bias, int64_t N, int64_t F, int64_t U, int64_t act,
                       int64_t rec_act, cudaStream_t st) {
  lstm_sequence_forward(h, nullptr, nullptr, gates, c, x, h_prev, c_prev, kernel,
                        recurrent_kernel, bias, N, 1, F, U, false, act, rec_act, st);
}

void lstm_cell_backward(float* dx, float* dh_prev, float* dc_prev, float* dkernel,
                        float* drecurrent_kernel, float* dbias, const float* dh, const float* dc,
                        const float* gates, const float* c, const float* x, const float* h_prev,
                        const float* c_prev, const float* kernel, const float* recurrent_kernel,
                        int64_t N, int64_t F, int64_t U, int64_t act, int64_t rec_act,
                        cudaStream_t st) {
  lstm_sequence_backward(dx, dh_prev, dc_prev, dkernel, drecurrent_kernel, dbias, nullptr, dh, dc,
                         gates, c, nullptr, x, h_prev, c_prev, kernel, recurrent_kernel, N, 1, F,
                         U, false, act, rec_act, st);
}

void gru_cell_forward(float* h, float* gates, float* hproj, const float* x, const float* h_prev,
                      const float* kernel, const float* recurrent_kernel, const float* bias,
                      int64_t N, int64_t F, int64_t U, bool reset_after, int64_t act,
                      int64_t rec_act, cudaStream_t st) {
  gru_sequence_forward(h, nullptr, gates, hproj, x, h_prev, kernel, recurrent_kernel, bias, N, 1,
                       F, U, false, reset_after, act, rec_act, st);
}

void gru_cell_backward(float* dx, float* dh_prev, float* dkernel, float* drecurrent_kernel,
                       float* dbias, const float* dh, const float* gates, const float* hproj,
                       const float* x, const float* h_prev, const float* kernel,
                       const float* recurrent_kernel, int64_t N, int64_t F, int64_t U,
                       bool reset_after, int64_t act, int64_t rec_act, cudaStream_t st) {
  gru_sequence_backward(dx, dh_prev, dkernel, drecurrent_kernel, dbias, nullptr, dh, gates, hproj,
                        nullptr, x, h_prev, kernel, recurrent_kernel, N, 1, F, U, false,
                        reset_after, act, rec_act, st);
}

void simple_rnn_cell_forward(float* h, const float* x, const float* h_prev, const float* kernel,
                             const float* recurrent_kernel, const float* bias, int64_t N,
                             int64_t F, int64_t U, int64_t act, cudaStream_t st) {
  simple_rnn_sequence_forward(h, nullptr, x, h_prev, kernel, recurrent_kernel, bias, N, 1, F, U,
                              false, act, st);
}

void simple_rnn_cell_backward(float* dx, float* dh_prev, float* dkernel,
                              float* drecurrent_kernel, float* dbias, const float* dh,
                              const float* h, const float* x, const float* h_prev,
                              const float* kernel, const float* recurrent_kernel, int64_t N,
                              int64_t F, int64_t U, int64_t act, cudaStream_t st) {
  simple_rnn_sequence_backward(dx, dh_prev, dkernel, drecurrent_kernel, dbias, nullptr, dh, h, x,
                               h_prev, kernel, recurrent_kernel, N, 1, F, U, false, act, st);
}

}  // namespace fk_cuda

#endif  // FK_CUDA_RNN_ENABLED
