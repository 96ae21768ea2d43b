// rnn_math.h: the per-unit gate math of the CUDA recurrent kernels (cuda/kernels/rnn_gates.cu),
// FK_HD so that fkeras._C_cuda_host (cuda/host/rnn.cpp) runs the same code on the CPU for
// tests/cuda/test_bnrnn_math_host.py. The formulas are cpp/rnn/gates_impl.h's, one unit at a
// time, with the C library's expf / tanhf (the CPU's scalar tail path):
//   LSTM (gates i, f, c, o):  i, f, o = ra(z_i, z_f, z_o); g = a(z_c); c' = f c + i g;
//                             h' = o a(c').
//   GRU (gates z, r, h):      z, r = ra(xz + rz, xr + rr);
//     reset_after:            hh = a(xh + r * rh), rh = h_prev @ Wr_h + br_h (saved: hproj);
//     otherwise:              hh = a(xh + hproj), hproj = (r * h_prev) @ Wr_h;
//                             h' = z h_prev + (1 - z) hh (so an infinite hh gives inf, not NaN).
//   SimpleRNN:                h' = a(z).
// Activation codes are fkeras/kernels.h's (linear 0, relu 1, sigmoid 2, tanh 3,
// hard_sigmoid 11); derivatives come from the outputs, as on the CPU.
#pragma once

#include <math.h>

#include <cstdint>

#include "fk_cuda/hd.h"

namespace fk_cuda {
namespace rnn {

constexpr int64_t kLinear = 0, kRelu = 1, kSigmoid = 2, kTanh = 3, kHardSigmoid = 11;

// max / min where a NaN in a wins (the data is always a), as the CPU's.
FK_HD float nmax(float a, float b) { return (a > b || a != a) ? a : b; }
FK_HD float nmin(float a, float b) { return (a < b || a != a) ? a : b; }

FK_HD float act(float x, int64_t code) {
  switch (code) {
    case kRelu: return nmax(x, 0.f);
    case kSigmoid: return 1.f / (1.f + expf(-x));
    case kTanh: return tanhf(x);
    case kHardSigmoid: return nmin(nmax(x + 3.f, 0.f), 6.f) * (1.f / 6.f);
    default: return x;
  }
}

// act'(x) from y = act(x).
FK_HD float dact(float y, int64_t code) {
  switch (code) {
    case kRelu: return 0.f < y ? 1.f : 0.f;
    case kSigmoid: return y * (1.f - y);
    case kTanh: return 1.f - y * y;
    case kHardSigmoid: return 0.f < y ? (y < 1.f ? 1.f / 6.f : 0.f) : 0.f;
    default: return 1.f;
  }
}

// ---- LSTM -----------------------------------------------------------------------------------
struct LstmOut {
  float i, f, g, o, c, h;  // the activated gates, the new cell state and output
};

FK_HD LstmOut lstm_forward(float zi, float zf, float zc, float zo, float c_prev, int64_t a,
                           int64_t ra) {
  LstmOut r;
  r.i = act(zi, ra);
  r.f = act(zf, ra);
  r.g = act(zc, a);
  r.o = act(zo, ra);
  r.c = fmaf(r.f, c_prev, r.i * r.g);
  r.h = r.o * act(r.c, a);
  return r;
}

struct LstmGrad {
  float dzi, dzf, dzc, dzo, dc_prev;  // pre-activation gradients and dL/dc_prev
};

// dh: dL/dh' (the sum of the step's incoming terms); dc: dL/dc' from the next step (0 if none);
// i, f, g, o the saved gates, c = c', c_prev.
FK_HD LstmGrad lstm_backward(float dh, float dc, float i, float f, float g, float o, float c,
                             float c_prev, int64_t a, int64_t ra) {
  LstmGrad r;
  const float tc = act(c, a);
  const float dct = fmaf(dh * o, dact(tc, a), dc);
  r.dzi = dct * g * dact(i, ra);
  r.dzf = dct * c_prev * dact(f, ra);
  r.dzc = dct * i * dact(g, a);
  r.dzo = dh * tc * dact(o, ra);
  r.dc_prev = dct * f;
  return r;
}

// ---- GRU ------------------------------------------------------------------------------------
FK_HD float gru_blend(float z, float h_prev, float hh) { return fmaf(z, h_prev, (1.f - z) * hh); }

struct GruOut {
  float z, r, hh, h;
};

// reset_after: xz, xr, xh the input projections (with the input bias), rz, rr, rh the
// recurrent ones (with the recurrent bias).
FK_HD GruOut gru_forward_reset_after(float xz, float xr, float xh, float rz, float rr, float rh,
                                     float h_prev, int64_t a, int64_t ra) {
  GruOut o;
  o.z = act(xz + rz, ra);
  o.r = act(xr + rr, ra);
  o.hh = act(fmaf(o.r, rh, xh), a);
  o.h = gru_blend(o.z, h_prev, o.hh);
  return o;
}

// Not reset_after, first half: z, r and r * h_prev (the operand of the candidate's GEMM).
FK_HD void gru_forward_zr(float xz, float xr, float rz, float rr, float h_prev, int64_t ra,
                          float* z, float* r, float* rh) {
  *z = act(xz + rz, ra);
  *r = act(xr + rr, ra);
  *rh = *r * h_prev;
}

// Not reset_after, second half: the candidate from xh and hproj = (r * h_prev) @ Wr_h.
FK_HD void gru_forward_h(float xh, float hproj, float z, float h_prev, int64_t a, float* hh,
                         float* h) {
  *hh = act(xh + hproj, a);
  *h = gru_blend(z, h_prev, *hh);
}

struct GruGrad {
  float dz, dr, dxh;  // pre-activation gradients of z, r, and of the candidate (dhh)
  float drh;          // reset_after: d(rh) = dhh * r; otherwise d(r * h_prev) = 0 here
  float dh_prev;      // the direct term dh * z (the GEMM terms are added by the kernel)
};

// reset_after backward for one unit: dh = dL/dh', the saved z, r, hh, hproj (= rh), h_prev.
FK_HD GruGrad gru_backward_reset_after(float dh, float z, float r, float hh, float hproj,
                                       float h_prev, int64_t a, int64_t ra) {
  GruGrad o;
  o.dz = dh * (h_prev - hh) * dact(z, ra);
  o.dxh = dh * (1.f - z) * dact(hh, a);
  o.dr = o.dxh * hproj * dact(r, ra);
  o.drh = o.dxh * r;
  o.dh_prev = dh * z;
  return o;
}

// Not reset_after, first half: dz and dhh (the candidate's pre-activation gradient; its
// recurrent operand r * h_prev gets drh = dhh @ Wr_h^T from a GEMM), direct dh_prev term.
FK_HD GruGrad gru_backward_zh(float dh, float z, float hh, float h_prev, int64_t a, int64_t ra) {
  GruGrad o;
  o.dz = dh * (h_prev - hh) * dact(z, ra);
  o.dxh = dh * (1.f - z) * dact(hh, a);
  o.dr = 0.f;
  o.drh = 0.f;
  o.dh_prev = dh * z;
  return o;
}

// Not reset_after, second half: from drh = d(r * h_prev): dr (pre-activation) and the
// dh_prev term drh * r added to the running dh_prev.
FK_HD void gru_backward_r(float drh, float r, float h_prev, int64_t ra, float* dr,
                          float* dh_prev) {
  *dr = drh * h_prev * dact(r, ra);
  *dh_prev = fmaf(drh, r, *dh_prev);
}

// ---- SimpleRNN ------------------------------------------------------------------------------
FK_HD float simple_forward(float z, int64_t a) { return act(z, a); }
FK_HD float simple_backward(float dh, float h, int64_t a) { return dh * dact(h, a); }

}  // namespace rnn
}  // namespace fk_cuda
