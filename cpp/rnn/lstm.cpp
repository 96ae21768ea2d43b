// lstm.cpp: LSTM sequence and cell kernels, forward and backward (contract in kernels.h).
//
// Layouts: x (N, T, F), kernel (F, 4U), recurrent_kernel (U, 4U), bias (4U) [opt], gates in
// Keras order i, f, c, o. Step s reads x[:, s] (x[:, T-1-s] with go_backwards); hs, gates, cs
// are indexed by step. Math (Keras LSTM):
//   z = x_t @ kernel + h @ recurrent_kernel + bias; i, f, o = rec_act(z_i, z_f, z_o);
//   g = act(z_c); c' = f * c + i * g; h' = o * act(c').
// Saved state: gates (N, T, 4U) after their activations, cs (N, T, U) = c after each step;
// the sequence forward may be given neither (inference: nothing saved). Every output is
// overwritten.
//
// Forward: x and h are stacked per step into one (N, T, F + U) operand (x read in processing
// order, so go_backwards costs nothing; the gate pass writes each new h into the next step's
// slot), so each step is ONE GEMM [x_t | h] @ [kernel; recurrent_kernel] + bias. The steps are
// the phases of one parallel region (rnn::run_phases) cut into (row, unit) tiles: each tile
// computes its slice of the step's GEMM (the weight columns interleaved per unit tile so that
// the slice is one GEMM) and runs the fused gate pass on it while it is hot in cache; `gates`
// is only written, never re-read.
// Backward: the steps in reverse, as phases again: each tile computes its slice of
// dh = dz_{s+1} @ Wr^T and then the gate-gradient pass of step s on it. dz of every step is kept
// in an (N, T, 4U) buffer, so that after the loop [drecurrent_kernel; dkernel; dbias] =
// [Hprev | X | 1]^T dZ is one GEMM and dx = dZ kernel^T another. The step GEMMs read Wr^T,
// transposed once per call. Every unit tile's columns of the step weights are packed into GEMM
// panels once per call (gemm_pack_b), not by each step's GEMM.
#include <algorithm>
#include <cstring>
#include <vector>

#include "fkeras/gemm.h"
#include "fkeras/kernels.h"
#include "rnn_internal.h"

namespace fk {
namespace {

using rnn::Buffer;
using rnn::Tiling;

// The forward with h_final / c_final optional (the cell kernel has none; T == 1 there).
void lstm_forward(float* hs, float* h_final, float* c_final, float* gates, float* cs,
                  const float* x, const float* h0, const float* c0, const float* kernel,
                  const float* recurrent_kernel, const float* bias, int64_t N, int64_t T,
                  int64_t F, int64_t U, bool go_backwards, int64_t act, int64_t rec_act) {
  const int64_t G = 4 * U;
  if (T == 0 || N == 0 || U == 0) {
    if (h_final) rnn::copy_rows(h_final, U, h0, U, N, U);
    if (c_final) rnn::copy_rows(c_final, U, c0, U, N, U);
    return;
  }
  const int64_t K = F + U;
  const Tiling tl = rnn::plan_tiles(N, U, 4, true);
  // (F + U, 4U) = [kernel; recurrent_kernel] and the bias (4U), gates interleaved per unit tile.
  Buffer wp(K * G), bp(G);
  rnn::interleave_gates(wp.data(), kernel, G, F, 4, tl);
  rnn::interleave_gates(wp.data() + F * G, recurrent_kernel, G, U, 4, tl);
  if (bias) rnn::interleave_gates(bp.data(), bias, G, 1, 4, tl);
  Buffer xh(N * T * K);  // (N, T, F + U): row (n, s) = [x read at step s | h entering step s]
  rnn::stack_inputs(xh.data(), x, h0, N, T, F, U, go_backwards);
  Buffer z(N * G);  // (N, 4U) the pre-activations of one step, interleaved
  // Inference (gates and cs not given): the cell state lives in two (N, U) slices, step s
  // writing slice s % 2 and reading the other (a tile reads and writes only its own rows and
  // units of them, and the phases order the steps); the gates are not stored at all.
  Buffer cbuf(cs ? 1 : 2 * N * U);
  float* const c_at = cs ? cs : cbuf.data();   // step s's cell state, row n: c_at + c_off(s, n)
  auto c_off = [&](int64_t s, int64_t n) { return cs ? (n * T + s) * U : ((s & 1) * N + n) * U; };
  // Each unit tile's weight columns, packed once for all steps (not once per step and tile).
  const std::vector<GemmPackedB> wpk = rnn::pack_unit_tiles(wp.data(), G, K, 4, tl);
  const rnn::GateKernels& gk = rnn::gate_kernels();
  rnn::run_phases(T, tl, [&](int64_t s, int64_t r0, int64_t r1, int64_t j0, int64_t j1) {
    const int64_t w = j1 - j0;
    Epilogue ep;
    ep.bias = bias ? bp.data() + 4 * j0 : nullptr;
    gemm_prepacked(z.data() + r0 * G + 4 * j0, G, xh.data() + (r0 * T + s) * K, T * K,
                   wpk[j0 / tl.units], r1 - r0, false, 1.f, 0.f, ep);
    for (int64_t n = r0; n < r1; ++n) {
      const int64_t row = n * T + s;
      const float* cp = s ? c_at + c_off(s - 1, n) : c0 + n * U;
      float* const h_next = s + 1 < T ? xh.data() + (row + 1) * K + F : nullptr;
      gk.lstm_forward(gates ? gates + row * G : nullptr, z.data() + n * G + 4 * j0, cp,
                      c_at + c_off(s, n), hs + row * U, h_next, U, j0, w, act, rec_act);
    }
  });
  if (h_final) rnn::copy_rows(h_final, U, hs + (T - 1) * U, T * U, N, U);
  if (c_final) rnn::copy_rows(c_final, U, c_at + c_off(T - 1, 0), cs ? T * U : U, N, U);
}

void lstm_backward(float* dx, float* dh0, float* dc0, float* dkernel, float* drecurrent_kernel,
                   float* dbias, const float* dhs, const float* dh_final, const float* dc_final,
                   const float* gates, const float* cs, const float* hs, const float* x,
                   const float* h0, const float* c0, const float* kernel,
                   const float* recurrent_kernel, int64_t N, int64_t T, int64_t F, int64_t U,
                   bool go_backwards, int64_t act, int64_t rec_act) {
  const int64_t G = 4 * U;
  Buffer dh(N * U), dc(N * U);  // (N, U) running gradients of h and c
  rnn::copy_rows(dh.data(), U, dh_final, U, N, U);
  rnn::copy_rows(dc.data(), U, dc_final, U, N, U);
  if (T == 0 || N == 0 || U == 0) {
    if (dh0) rnn::copy_rows(dh0, U, dh.data(), U, N, U);
    if (dc0) rnn::copy_rows(dc0, U, dc.data(), U, N, U);
    if (dx) rnn::copy_rows(dx, F, nullptr, 0, N * T, F);
    if (dkernel) rnn::copy_rows(dkernel, G, nullptr, 0, F, G);
    if (drecurrent_kernel) rnn::copy_rows(drecurrent_kernel, G, nullptr, 0, U, G);
    if (dbias) rnn::copy_rows(dbias, G, nullptr, 0, 1, G);
    return;
  }
  Buffer dz(N * T * G);  // (N, T, 4U) gradient of the pre-activations, by step
  Buffer rkt(G * U);     // (4U, U) recurrent_kernel^T
  rnn::transpose(rkt.data(), recurrent_kernel, U, G);
  const Tiling tl = rnn::plan_tiles(N, U, 4, false);
  const std::vector<GemmPackedB> rkp = rnn::pack_unit_tiles(rkt.data(), U, G, 1, tl);
  const rnn::GateKernels& gk = rnn::gate_kernels();
  auto gate_pass = [&](int64_t s, int64_t r0, int64_t r1, int64_t j0, int64_t j1) {
    for (int64_t n = r0; n < r1; ++n) {
      const int64_t row = n * T + s;
      const float* cp = s ? cs + (row - 1) * U : c0 + n * U;
      gk.lstm_backward(dz.data() + row * G, dc.data() + n * U, dh.data() + n * U,
                       dhs ? dhs + row * U : nullptr, gates + row * G, cs + row * U, cp, U, j0,
                       j1 - j0, act, rec_act);
    }
  };
  // Phase p handles step s = T - 1 - p: dh = dz_{s+1} @ Wr^T (but for the last step), then the
  // gate-gradient pass of step s, tile by tile.
  rnn::run_phases(T, tl, [&](int64_t p, int64_t r0, int64_t r1, int64_t j0, int64_t j1) {
    const int64_t s = T - 1 - p;
    if (p > 0)  // dh[rows, units] = dz_{s+1}[rows] @ Wr^T[:, units]
      gemm_prepacked(dh.data() + r0 * U + j0, U, dz.data() + (r0 * T + s + 1) * G, T * G,
                     rkp[j0 / tl.units], r1 - r0, false, 1.f, 0.f);
    gate_pass(s, r0, r1, j0, j1);
  });
  if (dh0) gemm_strided(dh0, U, dz.data(), T * G, rkt.data(), U, N, U, G, false, false, 1.f, 0.f);
  if (dc0) rnn::copy_rows(dc0, U, dc.data(), U, N, U);
  rnn::weight_grads(drecurrent_kernel, dkernel, dbias, G, dz.data(), h0, hs, x, N, T, F, U, G,
                    go_backwards);
  if (dx) {
    gemm_strided(dx, F, dz.data(), G, kernel, G, N * T, F, G, false, true, 1.f, 0.f);
    if (go_backwards) rnn::reverse_time(dx, N, T, F);  // step order -> x's order
  }
}

}  // namespace

void lstm_sequence_forward(float* hs, float* h_final, float* c_final, float* gates, float* cs,
                           const float* x, const float* h0, const float* c0, const float* kernel,
                           const float* recurrent_kernel, const float* bias, int64_t N,
                           int64_t T, int64_t F, int64_t U, bool go_backwards,
                           int64_t activation, int64_t recurrent_activation) {
  lstm_forward(hs, h_final, c_final, gates, cs, x, h0, c0, kernel, recurrent_kernel, bias, N, T,
               F, U, go_backwards, activation, recurrent_activation);
}

void lstm_sequence_backward(float* dx, float* dh0, float* dc0, float* dkernel,
                            float* drecurrent_kernel, float* dbias, const float* dhs,
                            const float* dh_final, const float* dc_final, const float* gates,
                            const float* cs, const float* hs, const float* x, const float* h0,
                            const float* c0, const float* kernel, const float* recurrent_kernel,
                            int64_t N, int64_t T, int64_t F, int64_t U, bool go_backwards,
                            int64_t activation, int64_t recurrent_activation) {
  lstm_backward(dx, dh0, dc0, dkernel, drecurrent_kernel, dbias, dhs, dh_final, dc_final, gates,
                cs, hs, x, h0, c0, kernel, recurrent_kernel, N, T, F, U, go_backwards,
                activation, recurrent_activation);
}

void lstm_cell_forward(float* h, float* c, float* gates, const float* x, const float* h_prev,
                       const float* c_prev, const float* kernel, const float* recurrent_kernel,
                       const float* bias, int64_t N, int64_t F, int64_t U, int64_t activation,
                       int64_t recurrent_activation) {
  lstm_forward(h, nullptr, nullptr, gates, c, x, h_prev, c_prev, kernel, recurrent_kernel, bias,
               N, 1, F, U, false, activation, recurrent_activation);
}

void lstm_cell_backward(float* dx, float* dh_prev, float* dc_prev, float* dkernel,
                        float* drecurrent_kernel, float* dbias, const float* dh, const float* dc,
                        const float* gates, const float* c, const float* x, const float* h_prev,
                        const float* c_prev, const float* kernel, const float* recurrent_kernel,
                        int64_t N, int64_t F, int64_t U, int64_t activation,
                        int64_t recurrent_activation) {
  lstm_backward(dx, dh_prev, dc_prev, dkernel, drecurrent_kernel, dbias, nullptr, dh, dc, gates, c,
                nullptr, x, h_prev, c_prev, kernel, recurrent_kernel, N, 1, F, U, false,
                activation, recurrent_activation);
}

}  // namespace fk
