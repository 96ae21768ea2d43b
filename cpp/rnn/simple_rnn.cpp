// simple_rnn.cpp: SimpleRNN sequence and cell kernels, forward and backward (contract in
// kernels.h).
//
// Layouts: x (N, T, F), kernel (F, U), recurrent_kernel (U, U), bias (U) [opt]. Step s reads
// x[:, s] (x[:, T-1-s] with go_backwards) and writes hs[:, s]:
//   h' = act(x_t @ kernel + h @ recurrent_kernel + bias).
// No saved state beyond hs (the derivative of act comes from its output). Every output is
// overwritten.
//
// Forward: x and h are stacked per step into one (N, T, F + U) operand (x in processing order,
// so go_backwards costs nothing), so each step is one GEMM [x_t | h] @ [kernel;
// recurrent_kernel] + bias written into hs[:, s], then act in place (which also writes h into
// the next step's slot). Backward: dh = dz_{s+1} @ Wr^T then dz_s = dh_total * act'(h). Both
// run their steps as the phases of one parallel region over (row, unit) tiles
// (rnn::run_phases). dz of all steps stays in an (N, T, U) buffer: [drecurrent_kernel; dkernel;
// dbias] = [Hprev | X | 1]^T dZ is then one GEMM, dx = dZ kernel^T another.
#include <algorithm>

#include <vector>

#include "fkeras/gemm.h"
#include "fkeras/kernels.h"
#include "rnn_internal.h"

namespace fk {
namespace {

using rnn::Buffer;
using rnn::Tiling;

void simple_forward(float* hs, float* h_final, const float* x, const float* h0,
                    const float* kernel, const float* recurrent_kernel, const float* bias,
                    int64_t N, int64_t T, int64_t F, int64_t U, bool go_backwards, int64_t act) {
  if (T == 0 || N == 0 || U == 0) {
    if (h_final) rnn::copy_rows(h_final, U, h0, U, N, U);
    return;
  }
  const int64_t K = F + U;
  Buffer wk(K * U);  // (F + U, U) = [kernel; recurrent_kernel]
  rnn::copy_rows(wk.data(), U, kernel, U, F, U);
  rnn::copy_rows(wk.data() + F * U, U, recurrent_kernel, U, U, U);
  Buffer xh(N * T * K);  // (N, T, F + U): row (n, s) = [x read at step s | h entering step s]
  rnn::stack_inputs(xh.data(), x, h0, N, T, F, U, go_backwards);
  const Tiling tl = rnn::plan_tiles(N, U, 1, true);
  const std::vector<GemmPackedB> wkp = rnn::pack_unit_tiles(wk.data(), U, K, 1, tl);
  const rnn::GateKernels& gk = rnn::gate_kernels();
  rnn::run_phases(T, tl, [&](int64_t s, int64_t r0, int64_t r1, int64_t j0, int64_t j1) {
    Epilogue ep;
    ep.bias = bias ? bias + j0 : nullptr;
    // hs[rows, s, units] = [x_t | h][rows] @ [kernel; recurrent_kernel][:, units] + bias
    gemm_prepacked(hs + (r0 * T + s) * U + j0, T * U, xh.data() + (r0 * T + s) * K, T * K,
                   wkp[j0 / tl.units], r1 - r0, false, 1.f, 0.f, ep);
    for (int64_t n = r0; n < r1; ++n) {
      const int64_t row = n * T + s;
      gk.activation(hs + row * U + j0, s + 1 < T ? xh.data() + (row + 1) * K + F + j0 : nullptr,
                    j1 - j0, act);
    }
  });
  if (h_final) rnn::copy_rows(h_final, U, hs + (T - 1) * U, T * U, N, U);
}

void simple_backward(float* dx, float* dh0, float* dkernel, float* drecurrent_kernel,
                     float* dbias, const float* dhs, const float* dh_final, const float* hs,
                     const float* x, const float* h0, const float* kernel,
                     const float* recurrent_kernel, int64_t N, int64_t T, int64_t F, int64_t U,
                     bool go_backwards, int64_t act) {
  Buffer dh(N * U);  // (N, U) gradient of h flowing back from the later step
  rnn::copy_rows(dh.data(), U, dh_final, U, N, U);
  if (T == 0 || N == 0 || U == 0) {
    if (dh0) rnn::copy_rows(dh0, U, dh.data(), U, N, U);
    if (dx) rnn::copy_rows(dx, F, nullptr, 0, N * T, F);
    if (dkernel) rnn::copy_rows(dkernel, U, nullptr, 0, F, U);
    if (drecurrent_kernel) rnn::copy_rows(drecurrent_kernel, U, nullptr, 0, U, U);
    if (dbias) rnn::copy_rows(dbias, U, nullptr, 0, 1, U);
    return;
  }
  Buffer dz(N * T * U);  // (N, T, U) gradient of the pre-activations, by step
  Buffer rkt(U * U);     // (U, U) recurrent_kernel^T
  rnn::transpose(rkt.data(), recurrent_kernel, U, U);
  const Tiling tl = rnn::plan_tiles(N, U, 1, false);
  const std::vector<GemmPackedB> rktp = rnn::pack_unit_tiles(rkt.data(), U, U, 1, tl);
  const rnn::GateKernels& gk = rnn::gate_kernels();
  auto gate_pass = [&](int64_t s, int64_t r0, int64_t r1, int64_t j0, int64_t j1) {
    for (int64_t n = r0; n < r1; ++n) {
      const int64_t row = n * T + s;
      gk.simple_backward(dz.data() + row * U + j0, dh.data() + n * U + j0,
                         dhs ? dhs + row * U + j0 : nullptr, hs + row * U + j0, j1 - j0, act);
    }
  };
  // Phase p handles step s = T - 1 - p: dh = dz_{s+1} @ Wr^T (but for the last step), then
  // dz_s, tile by tile.
  rnn::run_phases(T, tl, [&](int64_t p, int64_t r0, int64_t r1, int64_t j0, int64_t j1) {
    const int64_t s = T - 1 - p;
    if (p > 0)  // dh[rows, units] = dz_{s+1}[rows] @ Wr^T[:, units]
      gemm_prepacked(dh.data() + r0 * U + j0, U, dz.data() + (r0 * T + s + 1) * U, T * U,
                     rktp[j0 / tl.units], r1 - r0, false, 1.f, 0.f);
    gate_pass(s, r0, r1, j0, j1);
  });
  if (dh0) gemm_strided(dh0, U, dz.data(), T * U, rkt.data(), U, N, U, U, false, false, 1.f, 0.f);
  rnn::weight_grads(drecurrent_kernel, dkernel, dbias, U, dz.data(), h0, hs, x, N, T, F, U, U,
                    go_backwards);
  if (dx) {
    gemm_strided(dx, F, dz.data(), U, kernel, U, N * T, F, U, false, true, 1.f, 0.f);
    if (go_backwards) rnn::reverse_time(dx, N, T, F);  // step order -> x's order
  }
}

}  // namespace

void simple_rnn_sequence_forward(float* hs, float* h_final, const float* x, const float* h0,
                                 const float* kernel, const float* recurrent_kernel,
                                 const float* bias, int64_t N, int64_t T, int64_t F, int64_t U,
                                 bool go_backwards, int64_t activation) {
  simple_forward(hs, h_final, x, h0, kernel, recurrent_kernel, bias, N, T, F, U, go_backwards,
                 activation);
}

void simple_rnn_sequence_backward(float* dx, float* dh0, float* dkernel, float* drecurrent_kernel,
                                  float* dbias, const float* dhs, const float* dh_final,
                                  const float* hs, const float* x, const float* h0,
                                  const float* kernel, const float* recurrent_kernel, int64_t N,
                                  int64_t T, int64_t F, int64_t U, bool go_backwards,
                                  int64_t activation) {
  simple_backward(dx, dh0, dkernel, drecurrent_kernel, dbias, dhs, dh_final, hs, x, h0, kernel,
                  recurrent_kernel, N, T, F, U, go_backwards, activation);
}

void simple_rnn_cell_forward(float* h, const float* x, const float* h_prev, const float* kernel,
                             const float* recurrent_kernel, const float* bias, int64_t N,
                             int64_t F, int64_t U, int64_t activation) {
  simple_forward(h, nullptr, x, h_prev, kernel, recurrent_kernel, bias, N, 1, F, U, false,
                 activation);
}

void simple_rnn_cell_backward(float* dx, float* dh_prev, float* dkernel,
                              float* drecurrent_kernel, float* dbias, const float* dh,
                              const float* h, const float* x, const float* h_prev,
                              const float* kernel, const float* recurrent_kernel, int64_t N,
                              int64_t F, int64_t U, int64_t activation) {
  simple_backward(dx, dh_prev, dkernel, drecurrent_kernel, dbias, nullptr, dh, h, x, h_prev,
                  kernel, recurrent_kernel, N, 1, F, U, false, activation);
}

}  // namespace fk
