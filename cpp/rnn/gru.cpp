// gru.cpp: GRU sequence and cell kernels, forward and backward, both reset_after variants
// (contract in kernels.h).
//
// Layouts: x (N, T, F), kernel (F, 3U), recurrent_kernel (U, 3U), gates in Keras order z, r, h.
// bias [opt]: reset_after, (2, 3U) = [input bias; recurrent bias]; otherwise (3U), input only.
// Math (Keras 3 GRU), with xz, xr, xh = x_t @ kernel + input bias:
//   reset_after:  rz, rr, rh = h @ Wr + recurrent bias; z = rec_act(xz + rz);
//                 r = rec_act(xr + rr); hh = act(xh + r * rh); hproj = rh
//   !reset_after: z, r as above from h @ Wr[:, :2U]; hproj = (r * h) @ Wr[:, 2U:];
//                 hh = act(xh + hproj)
//   h' = z * h + (1 - z) * hh.
// Saved state: gates (N, T, 3U) = z, r, hh after activation; hproj (N, T, U). Every output is
// overwritten.
//
// Forward: one input-projection GEMM for all steps into `gates` (time-reversed in place for
// go_backwards); then the steps as phases of one parallel region (rnn::run_phases) over (row,
// unit) tiles, each running its slice of the recurrent GEMM and the gate pass on it.
// reset_after needs one phase per step; !reset_after two (r of every unit must be known before
// (r * h) @ Wr_h), forward and backward alike. The backward keeps the gradients of the
// projections for all steps and finishes with a few large GEMMs: [dkernel; dbias] =
// [X | 1]^T dXP, drecurrent_kernel (and the recurrent bias's gradient) from [Hprev | 1] (and
// r * Hprev for the h block when !reset_after), dx = dXP kernel^T.
#include <algorithm>

#include <vector>

#include "fkeras/gemm.h"
#include "fkeras/kernels.h"
#include "rnn_internal.h"

namespace fk {
namespace {

using rnn::Buffer;
using rnn::Tiling;

void gru_forward(float* hs, float* h_final, float* gates, float* hproj, const float* x,
                 const float* h0, const float* kernel, const float* recurrent_kernel,
                 const float* bias, int64_t N, int64_t T, int64_t F, int64_t U,
                 bool go_backwards, bool reset_after, int64_t act, int64_t rec_act) {
  const int64_t G = 3 * U;
  if (T == 0 || N == 0 || U == 0) {
    if (h_final) rnn::copy_rows(h_final, U, h0, U, N, U);
    return;
  }
  Epilogue ep;
  ep.bias = bias;  // the input bias: bias[0] when reset_after, else all of it
  gemm_strided(gates, G, x, F, kernel, G, N * T, G, F, false, false, 1.f, 0.f, ep);
  if (go_backwards) rnn::reverse_time(gates, N, T, G);

  const Tiling tl = rnn::plan_tiles(N, U, 3, true);
  const rnn::GateKernels& gk = rnn::gate_kernels();
  if (reset_after) {
    Buffer rkp(U * G), brp(G), rec(N * G);  // interleaved Wr (U, 3U) and br (3U); (N, 3U)
    rnn::interleave_gates(rkp.data(), recurrent_kernel, G, U, 3, tl);
    if (bias) rnn::interleave_gates(brp.data(), bias + G, G, 1, 3, tl);
    const std::vector<GemmPackedB> rkpp = rnn::pack_unit_tiles(rkp.data(), G, U, 3, tl);
    rnn::run_phases(T, tl, [&](int64_t s, int64_t r0, int64_t r1, int64_t j0, int64_t j1) {
      const float* hp = s ? hs + (s - 1) * U : h0;  // (N, U), row stride ld
      const int64_t ld = s ? T * U : U, w = j1 - j0;
      Epilogue rep;
      rep.bias = bias ? brp.data() + 3 * j0 : nullptr;
      gemm_prepacked(rec.data() + r0 * G + 3 * j0, G, hp + r0 * ld, ld, rkpp[j0 / tl.units],
                     r1 - r0, false, 1.f, 0.f, rep);
      for (int64_t n = r0; n < r1; ++n) {
        const int64_t row = n * T + s;
        gk.gru_forward_ra(gates + row * G, hproj + row * U, rec.data() + n * G + 3 * j0,
                          hp + n * ld, hs + row * U, U, j0, w, act, rec_act);
      }
    });
  } else {
    // (U, 2U) interleaved Wr[:, :2U]; (N, 2U) h @ Wr[:, :2U]; (N, U) r * h
    Buffer rkp(U * 2 * U), rec(N * 2 * U), rh(N * U);
    rnn::interleave_gates(rkp.data(), recurrent_kernel, G, U, 2, tl);
    const std::vector<GemmPackedB> zrp = rnn::pack_unit_tiles(rkp.data(), 2 * U, U, 2, tl);
    const std::vector<GemmPackedB> hhp = rnn::pack_unit_tiles(recurrent_kernel + 2 * U, G, U, 1,
                                                              tl);
    // Two phases per step: z, r (and r * h), then hproj and the new h.
    rnn::run_phases(2 * T, tl, [&](int64_t p, int64_t r0, int64_t r1, int64_t j0, int64_t j1) {
      const int64_t s = p / 2, w = j1 - j0;
      const float* hp = s ? hs + (s - 1) * U : h0;  // (N, U), row stride ld
      const int64_t ld = s ? T * U : U;
      if (p % 2 == 0) {
        gemm_prepacked(rec.data() + r0 * 2 * U + 2 * j0, 2 * U, hp + r0 * ld, ld,
                       zrp[j0 / tl.units], r1 - r0, false, 1.f, 0.f);
        for (int64_t n = r0; n < r1; ++n)
          gk.gru_forward_zr(gates + (n * T + s) * G, rh.data() + n * U,
                            rec.data() + n * 2 * U + 2 * j0, hp + n * ld, U, j0, w, rec_act);
        return;
      }
      // hproj[rows, s, units] = (r * h)[rows] @ Wr[:, 2U + units]
      gemm_prepacked(hproj + (r0 * T + s) * U + j0, T * U, rh.data() + r0 * U, U,
                     hhp[j0 / tl.units], r1 - r0, false, 1.f, 0.f);
      for (int64_t n = r0; n < r1; ++n) {
        const int64_t row = n * T + s;
        gk.gru_forward_h(gates + row * G, hs + row * U, hproj + row * U, hp + n * ld, U, j0, w,
                         act);
      }
    });
  }
  if (h_final) rnn::copy_rows(h_final, U, hs + (T - 1) * U, T * U, N, U);
}

void gru_backward(float* dx, float* dh0, float* dkernel, float* drecurrent_kernel, float* dbias,
                  const float* dhs, const float* dh_final, const float* gates,
                  const float* hproj, const float* hs, const float* x, const float* h0,
                  const float* kernel, const float* recurrent_kernel, int64_t N, int64_t T,
                  int64_t F, int64_t U, bool go_backwards, bool reset_after, int64_t act,
                  int64_t rec_act) {
  const int64_t G = 3 * U;
  Buffer dh(N * U);  // (N, U) running gradient of h
  rnn::copy_rows(dh.data(), U, dh_final, U, N, U);
  if (T == 0 || N == 0 || U == 0) {
    if (dh0) rnn::copy_rows(dh0, U, dh.data(), U, N, U);
    if (dx) rnn::copy_rows(dx, F, nullptr, 0, N * T, F);
    if (dkernel) rnn::copy_rows(dkernel, G, nullptr, 0, F, G);
    if (drecurrent_kernel) rnn::copy_rows(drecurrent_kernel, G, nullptr, 0, U, G);
    if (dbias) rnn::copy_rows(dbias, G, nullptr, 0, reset_after ? 2 : 1, G);
    return;
  }
  const Tiling tl = rnn::plan_tiles(N, U, 3, false);
  const rnn::GateKernels& gk = rnn::gate_kernels();
  Buffer rkt(G * U);  // (3U, U) recurrent_kernel^T: the step GEMMs then read a plain B
  rnn::transpose(rkt.data(), recurrent_kernel, U, G);
  auto h_prev = [&](int64_t n, int64_t s) { return s ? hs + (n * T + s - 1) * U : h0 + n * U; };
  auto dhs_row = [&](int64_t row) { return dhs ? dhs + row * U : nullptr; };
  Buffer d1(N * T * G);  // (N, T, 3U): reset_after, the recurrent projection's gradient;
                         // otherwise the input projection's

  if (reset_after) {
    Buffer dxh(N * T * U);  // (N, T, U) gradient of the input projection's h part
    auto gate_pass = [&](int64_t s, int64_t r0, int64_t r1, int64_t j0, int64_t j1) {
      for (int64_t n = r0; n < r1; ++n) {
        const int64_t row = n * T + s;
        gk.gru_backward_ra(d1.data() + row * G, dxh.data() + row * U, dh.data() + n * U,
                           dhs_row(row), gates + row * G, hproj + row * U, h_prev(n, s), U, j0,
                           j1 - j0, act, rec_act);
      }
    };
    const std::vector<GemmPackedB> rktp = rnn::pack_unit_tiles(rkt.data(), U, G, 1, tl);
    // Phase p handles step s = T - 1 - p (as in lstm.cpp).
    rnn::run_phases(T, tl, [&](int64_t p, int64_t r0, int64_t r1, int64_t j0, int64_t j1) {
      const int64_t s = T - 1 - p;
      if (p > 0)  // dh[rows, units] = drp_{s+1}[rows] @ Wr^T[:, units] + dh * z (gate pass's)
        gemm_prepacked(dh.data() + r0 * U + j0, U, d1.data() + (r0 * T + s + 1) * G, T * G,
                       rktp[j0 / tl.units], r1 - r0, false, 1.f, 1.f);
      gate_pass(s, r0, r1, j0, j1);
    });
    if (dh0) {
      rnn::copy_rows(dh0, U, dh.data(), U, N, U);
      gemm_strided(dh0, U, d1.data(), T * G, rkt.data(), U, N, U, G, false, false, 1.f, 1.f);
    }
    // [drecurrent_kernel; recurrent bias's gradient] = [Hprev | 1]^T drp
    rnn::weight_grads(drecurrent_kernel, nullptr, dbias ? dbias + G : nullptr, G, d1.data(), h0,
                      hs, x, N, T, F, U, G, go_backwards);
    // The input projection's gradient differs from the recurrent one only in its h part.
    rnn::copy_rows(d1.data() + 2 * U, G, dxh.data(), U, N * T, U);
  } else {
    Buffer drh(N * U);                        // (N, U) gradient of r * h_prev at one step
    Buffer rh(drecurrent_kernel ? N * T * U : 1);  // (N, T, U) r * h_prev of every step
    auto zh_pass = [&](int64_t s, int64_t r0, int64_t r1, int64_t j0, int64_t j1) {
      for (int64_t n = r0; n < r1; ++n) {
        const int64_t row = n * T + s;
        gk.gru_backward_zh(d1.data() + row * G, dh.data() + n * U, dhs_row(row),
                           gates + row * G, h_prev(n, s), U, j0, j1 - j0, act, rec_act);
      }
    };
    const std::vector<GemmPackedB> zrt = rnn::pack_unit_tiles(rkt.data(), U, 2 * U, 1, tl);
    const std::vector<GemmPackedB> hht = rnn::pack_unit_tiles(rkt.data() + 2 * U * U, U, U, 1,
                                                              tl);
    // Phases: zh(T-1), then per step s = T-1 .. 0: A(s) = the r half of step s, and for s > 0
    // B(s) = dh += [dz, dr]_s @ Wr^T[:2U] followed by zh(s-1).
    rnn::run_phases(2 * T, tl, [&](int64_t p, int64_t r0, int64_t r1, int64_t j0, int64_t j1) {
      if (p == 0) return zh_pass(T - 1, r0, r1, j0, j1);
      const int64_t s = T - 1 - (p - 1) / 2;
      if ((p - 1) % 2 == 1) {
        // dh[rows, units] += [dz, dr]_s[rows] @ Wr^T[:2U, units]
        gemm_prepacked(dh.data() + r0 * U + j0, U, d1.data() + (r0 * T + s) * G, T * G,
                       zrt[j0 / tl.units], r1 - r0, false, 1.f, 1.f);
        return zh_pass(s - 1, r0, r1, j0, j1);
      }
      // drh[rows, units] = dhh_s[rows] @ Wr^T[2U:, units]
      gemm_prepacked(drh.data() + r0 * U + j0, U, d1.data() + (r0 * T + s) * G + 2 * U, T * G,
                     hht[j0 / tl.units], r1 - r0, false, 1.f, 0.f);
      for (int64_t n = r0; n < r1; ++n) {
        const int64_t row = n * T + s;
        gk.gru_backward_r(d1.data() + row * G, dh.data() + n * U,
                          drecurrent_kernel ? rh.data() + row * U : nullptr, drh.data() + n * U,
                          gates + row * G, h_prev(n, s), U, j0, j1 - j0, rec_act);
      }
    });
    if (dh0) {
      rnn::copy_rows(dh0, U, dh.data(), U, N, U);
      gemm_strided(dh0, U, d1.data(), T * G, rkt.data(), U, N, U, 2 * U, false, false, 1.f, 1.f);
    }
    // drecurrent_kernel: [:, :2U] = Hprev^T [dz, dr]; [:, 2U:] = (r * Hprev)^T dhh
    rnn::weight_grads(drecurrent_kernel, nullptr, nullptr, G, d1.data(), h0, hs, x, N, T, F, U,
                      2 * U, go_backwards);
    if (drecurrent_kernel)
      gemm_strided(drecurrent_kernel + 2 * U, G, rh.data(), U, d1.data() + 2 * U, G, U, U, N * T,
                   true, false, 1.f, 0.f);
  }
  // d1 is now the input projection's gradient: [dkernel; input bias's gradient] = [X | 1]^T d1.
  rnn::weight_grads(nullptr, dkernel, dbias, G, d1.data(), h0, hs, x, N, T, F, U, G,
                    go_backwards);
  if (dx) {
    gemm_strided(dx, F, d1.data(), G, kernel, G, N * T, F, G, false, true, 1.f, 0.f);
    if (go_backwards) rnn::reverse_time(dx, N, T, F);  // step order -> x's order
  }
}

}  // namespace

void gru_sequence_forward(float* hs, float* h_final, float* gates, float* hproj, const float* x,
                          const float* h0, const float* kernel, const float* recurrent_kernel,
                          const float* bias, int64_t N, int64_t T, int64_t F, int64_t U,
                          bool go_backwards, bool reset_after, int64_t activation,
                          int64_t recurrent_activation) {
  gru_forward(hs, h_final, gates, hproj, x, h0, kernel, recurrent_kernel, bias, N, T, F, U,
              go_backwards, reset_after, activation, recurrent_activation);
}

void gru_sequence_backward(float* dx, float* dh0, float* dkernel, float* drecurrent_kernel,
                           float* dbias, const float* dhs, const float* dh_final,
                           const float* gates, const float* hproj, const float* hs,
                           const float* x, const float* h0, const float* kernel,
                           const float* recurrent_kernel, int64_t N, int64_t T, int64_t F,
                           int64_t U, bool go_backwards, bool reset_after, int64_t activation,
                           int64_t recurrent_activation) {
  gru_backward(dx, dh0, dkernel, drecurrent_kernel, dbias, dhs, dh_final, gates, hproj, hs, x, h0,
               kernel, recurrent_kernel, N, T, F, U, go_backwards, reset_after, activation,
               recurrent_activation);
}

void gru_cell_forward(float* h, float* gates, float* hproj, const float* x, const float* h_prev,
                      const float* kernel, const float* recurrent_kernel, const float* bias,
                      int64_t N, int64_t F, int64_t U, bool reset_after, int64_t activation,
                      int64_t recurrent_activation) {
  gru_forward(h, nullptr, gates, hproj, x, h_prev, kernel, recurrent_kernel, bias, N, 1, F, U,
              false, reset_after, activation, recurrent_activation);
}

void gru_cell_backward(float* dx, float* dh_prev, float* dkernel, float* drecurrent_kernel,
                       float* dbias, const float* dh, const float* gates, const float* hproj,
                       const float* x, const float* h_prev, const float* kernel,
                       const float* recurrent_kernel, int64_t N, int64_t F, int64_t U,
                       bool reset_after, int64_t activation, int64_t recurrent_activation) {
  gru_backward(dx, dh_prev, dkernel, drecurrent_kernel, dbias, nullptr, dh, gates, hproj, nullptr,
               x, h_prev, kernel, recurrent_kernel, N, 1, F, U, false, reset_after, activation,
               recurrent_activation);
}

}  // namespace fk
