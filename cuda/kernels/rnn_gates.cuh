// rnn_gates.cuh: launchers of the fused per-step gate kernels of the CUDA recurrent layers
// (cuda/kernels/rnn_gates.cu). One launch per step does all the elementwise work of that step
// (the fk_cuda/rnn_math.h functions) on top of the step's GEMM output; the GEMMs themselves
// (x @ kernel for all steps at once, h @ recurrent_kernel per step) come from fk_cuda::gemm.
//
// Every matrix argument is (N, width) with its own row stride (ld, in floats), so that a step
// of a batch-major (N, T, width) sequence is passed as (base + s * width, ld = T * width).
// Gate blocks are in Keras order (LSTM i, f, c, o; GRU z, r, h), each U wide. Outputs are
// OVERWRITTEN, except where marked "in/out". Optional pointers may be null.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace fk_cuda {

// z = xp + rp (both (N, 4U), xp carrying the bias); writes gates (N, 4U) after activations,
// c (N, U), h (N, U) and, if h_copy is not null, h again (the next step's GEMM operand).
void lstm_step_forward(float* gates, int64_t ld_g, float* c, int64_t ld_c, float* h,
                       int64_t ld_h, float* h_copy, int64_t ld_hc, const float* xp,
                       int64_t ld_xp, const float* rp, int64_t ld_rp, const float* c_prev,
                       int64_t ld_cp, int64_t N, int64_t U, int64_t act, int64_t rec_act,
                       cudaStream_t stream);

// dh = dh_rec (+ dhs if not null); dc in/out (dL/dc' in, dL/dc_prev out); writes dz (N, 4U).
void lstm_step_backward(float* dz, int64_t ld_dz, float* dc, const float* dh_rec,
                        const float* dhs, int64_t ld_dhs, const float* gates, int64_t ld_g,
                        const float* c, int64_t ld_c, const float* c_prev, int64_t ld_cp,
                        int64_t N, int64_t U, int64_t act, int64_t rec_act, cudaStream_t stream);

// GRU reset_after: xp (N, 3U) with the input bias, rp (N, 3U) with the recurrent bias.
void gru_step_forward(float* gates, int64_t ld_g, float* hproj, int64_t ld_hp, float* h,
                      int64_t ld_h, const float* xp, int64_t ld_xp, const float* rp,
                      int64_t ld_rp, const float* h_prev, int64_t ld_hprev, int64_t N, int64_t U,
                      int64_t act, int64_t rec_act, cudaStream_t stream);
// GRU reset_after backward: dh = dh_rec (+ dhs); writes dxp (N, 3U) = [dz, dr, dhh],
// drp (N, 3U) = [dz, dr, dhh * r] and dh_direct (N, U) = dh * z.
void gru_step_backward(float* dxp, int64_t ld_dxp, float* drp, float* dh_direct,
                       const float* dh_rec, const float* dhs, int64_t ld_dhs, const float* gates,
                       int64_t ld_g, const float* hproj, int64_t ld_hp, const float* h_prev,
                       int64_t ld_hprev, int64_t N, int64_t U, int64_t act, int64_t rec_act,
                       cudaStream_t stream);
// GRU reset_after = false, forward halves: (z, r, r * h_prev) from xp (N, 3U) and rp (N, 2U);
// then (hh, h) from xp's candidate block and hproj = (r * h_prev) @ Wr_h.
void gru_step_forward_zr(float* gates, int64_t ld_g, float* rh, const float* xp, int64_t ld_xp,
                         const float* rp, int64_t ld_rp, const float* h_prev, int64_t ld_hprev,
                         int64_t N, int64_t U, int64_t rec_act, cudaStream_t stream);
void gru_step_forward_h(float* gates, int64_t ld_g, float* h, int64_t ld_h, const float* xp,
                        int64_t ld_xp, const float* hproj, int64_t ld_hp, const float* h_prev,
                        int64_t ld_hprev, int64_t N, int64_t U, int64_t act,
                        cudaStream_t stream);
// GRU reset_after = false, backward halves: dz and dhh into dxp's blocks 0 and 2, dh_direct;
// then, from drh = dhh @ Wr_h^T, dr into dxp's block 1 and dh_direct += drh * r (in/out).
void gru_step_backward_zh(float* dxp, int64_t ld_dxp, float* dh_direct, const float* dh_rec,
                          const float* dhs, int64_t ld_dhs, const float* gates, int64_t ld_g,
                          const float* h_prev, int64_t ld_hprev, int64_t N, int64_t U,
                          int64_t act, int64_t rec_act, cudaStream_t stream);
void gru_step_backward_r(float* dxp, int64_t ld_dxp, float* dh_direct, const float* drh,
                         const float* gates, int64_t ld_g, const float* h_prev, int64_t ld_hprev,
                         int64_t N, int64_t U, int64_t rec_act, cudaStream_t stream);

// SimpleRNN: h = act(xp + rp) (h_copy as for LSTM); backward dz = (dh_rec + dhs) * act'(h).
void simple_step_forward(float* h, int64_t ld_h, float* h_copy, int64_t ld_hc, const float* xp,
                         int64_t ld_xp, const float* rp, int64_t ld_rp, int64_t N, int64_t U,
                         int64_t act, cudaStream_t stream);
void simple_step_backward(float* dz, int64_t ld_dz, const float* dh_rec, const float* dhs,
                          int64_t ld_dhs, const float* h, int64_t ld_h, int64_t N, int64_t U,
                          int64_t act, cudaStream_t stream);

}  // namespace fk_cuda
