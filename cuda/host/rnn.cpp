// rnn.cpp (host): the gate math of the CUDA recurrent kernels (fk_cuda/rnn_math.h) compiled by
// the host compiler and bound over NumPy arrays into fkeras._C_cuda_host, for
// tests/cuda/test_bnrnn_math_host.py. Each wrapper applies one FK_HD function per unit, in the
// layouts of the kernels: pre-activations / gates (N, G*U) in Keras gate order, states (N, U).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "fk_cuda/binders.h"
#include "fk_cuda/rnn_math.h"

namespace py = pybind11;
using Arr = py::array_t<float, py::array::c_style | py::array::forcecast>;

namespace {

namespace R = fk_cuda::rnn;

// (N, width) of a 2-D array, checked against the expected width.
int64_t rows_of(const Arr& a, int64_t width, const char* fn, const char* arg) {
  if (a.ndim() != 2 || a.shape(1) != width)
    throw std::invalid_argument(std::string(fn) + ": " + arg + " must be 2-D with " +
                                std::to_string(width) + " columns, received shape with ndim " +
                                std::to_string(a.ndim()));
  return a.shape(0);
}

void same_rows(int64_t n, const Arr& a, int64_t width, const char* fn, const char* arg) {
  if (rows_of(a, width, fn, arg) != n)
    throw std::invalid_argument(std::string(fn) + ": " + arg + " must have " + std::to_string(n) +
                                " rows, received " + std::to_string(a.shape(0)));
}

Arr make(int64_t n, int64_t w) { return Arr({n, w}); }

Arr map1(const Arr& x, int64_t code, float (*f)(float, int64_t)) {
  Arr y(std::vector<py::ssize_t>(x.shape(), x.shape() + x.ndim()));
  const float* p = x.data();
  float* q = y.mutable_data();
  for (py::ssize_t k = 0; k < x.size(); ++k) q[k] = f(p[k], code);
  return y;
}

py::tuple lstm_forward(const Arr& z, const Arr& c_prev, int64_t a, int64_t ra) {
  const int64_t U = c_prev.ndim() == 2 ? c_prev.shape(1) : 0;
  const int64_t N = rows_of(c_prev, U, "lstm_gates_forward", "c_prev");
  same_rows(N, z, 4 * U, "lstm_gates_forward", "z");
  Arr g = make(N, 4 * U), c = make(N, U), h = make(N, U);
  const float *pz = z.data(), *pc = c_prev.data();
  float *pg = g.mutable_data(), *qc = c.mutable_data(), *qh = h.mutable_data();
  for (int64_t n = 0; n < N; ++n)
    for (int64_t j = 0; j < U; ++j) {
      const float* zr = pz + n * 4 * U;
      const R::LstmOut o = R::lstm_forward(zr[j], zr[U + j], zr[2 * U + j], zr[3 * U + j],
                                           pc[n * U + j], a, ra);
      float* gr = pg + n * 4 * U;
      gr[j] = o.i;
      gr[U + j] = o.f;
      gr[2 * U + j] = o.g;
      gr[3 * U + j] = o.o;
      qc[n * U + j] = o.c;
      qh[n * U + j] = o.h;
    }
  return py::make_tuple(g, c, h);
}

py::tuple lstm_backward(const Arr& dh, const Arr& dc, const Arr& gates, const Arr& c,
                        const Arr& c_prev, int64_t a, int64_t ra) {
  const int64_t U = c.ndim() == 2 ? c.shape(1) : 0;
  const int64_t N = rows_of(c, U, "lstm_gates_backward", "c");
  same_rows(N, dh, U, "lstm_gates_backward", "dh");
  same_rows(N, dc, U, "lstm_gates_backward", "dc");
  same_rows(N, c_prev, U, "lstm_gates_backward", "c_prev");
  same_rows(N, gates, 4 * U, "lstm_gates_backward", "gates");
  Arr dz = make(N, 4 * U), dcp = make(N, U);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t j = 0; j < U; ++j) {
      const float* g = gates.data() + n * 4 * U;
      const int64_t k = n * U + j;
      const R::LstmGrad o = R::lstm_backward(dh.data()[k], dc.data()[k], g[j], g[U + j],
                                             g[2 * U + j], g[3 * U + j], c.data()[k],
                                             c_prev.data()[k], a, ra);
      float* q = dz.mutable_data() + n * 4 * U;
      q[j] = o.dzi;
      q[U + j] = o.dzf;
      q[2 * U + j] = o.dzc;
      q[3 * U + j] = o.dzo;
      dcp.mutable_data()[k] = o.dc_prev;
    }
  return py::make_tuple(dz, dcp);
}

// reset_after: xp (N, 3U) input projections + input bias, rp (N, 3U) recurrent projections +
// recurrent bias. Returns gates (N, 3U), hproj (N, U), h (N, U).
py::tuple gru_forward_ra(const Arr& xp, const Arr& rp, const Arr& h_prev, int64_t a,
                         int64_t ra) {
  const int64_t U = h_prev.ndim() == 2 ? h_prev.shape(1) : 0;
  const int64_t N = rows_of(h_prev, U, "gru_gates_forward", "h_prev");
  same_rows(N, xp, 3 * U, "gru_gates_forward", "xp");
  same_rows(N, rp, 3 * U, "gru_gates_forward", "rp");
  Arr g = make(N, 3 * U), hp = make(N, U), h = make(N, U);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t j = 0; j < U; ++j) {
      const float *x = xp.data() + n * 3 * U, *r = rp.data() + n * 3 * U;
      const int64_t k = n * U + j;
      const R::GruOut o = R::gru_forward_reset_after(x[j], x[U + j], x[2 * U + j], r[j],
                                                     r[U + j], r[2 * U + j], h_prev.data()[k],
                                                     a, ra);
      float* q = g.mutable_data() + n * 3 * U;
      q[j] = o.z;
      q[U + j] = o.r;
      q[2 * U + j] = o.hh;
      hp.mutable_data()[k] = r[2 * U + j];
      h.mutable_data()[k] = o.h;
    }
  return py::make_tuple(g, hp, h);
}

// Not reset_after, first half: xp (N, 3U) (+ bias), rp (N, 2U) = h_prev @ Wr[:, :2U].
// Returns z (N, U), r (N, U), r * h_prev (N, U).
py::tuple gru_forward_zr(const Arr& xp, const Arr& rp, const Arr& h_prev, int64_t ra) {
  const int64_t U = h_prev.ndim() == 2 ? h_prev.shape(1) : 0;
  const int64_t N = rows_of(h_prev, U, "gru_gates_forward_zr", "h_prev");
  same_rows(N, xp, 3 * U, "gru_gates_forward_zr", "xp");
  same_rows(N, rp, 2 * U, "gru_gates_forward_zr", "rp");
  Arr z = make(N, U), r = make(N, U), rh = make(N, U);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t j = 0; j < U; ++j) {
      const float *x = xp.data() + n * 3 * U, *p = rp.data() + n * 2 * U;
      const int64_t k = n * U + j;
      R::gru_forward_zr(x[j], x[U + j], p[j], p[U + j], h_prev.data()[k], ra,
                        z.mutable_data() + k, r.mutable_data() + k, rh.mutable_data() + k);
    }
  return py::make_tuple(z, r, rh);
}

py::tuple gru_forward_h(const Arr& xh, const Arr& hproj, const Arr& z, const Arr& h_prev,
                        int64_t a) {
  const int64_t U = h_prev.ndim() == 2 ? h_prev.shape(1) : 0;
  const int64_t N = rows_of(h_prev, U, "gru_gates_forward_h", "h_prev");
  same_rows(N, xh, U, "gru_gates_forward_h", "xh");
  same_rows(N, hproj, U, "gru_gates_forward_h", "hproj");
  same_rows(N, z, U, "gru_gates_forward_h", "z");
  Arr hh = make(N, U), h = make(N, U);
  for (int64_t k = 0; k < N * U; ++k)
    R::gru_forward_h(xh.data()[k], hproj.data()[k], z.data()[k], h_prev.data()[k], a,
                     hh.mutable_data() + k, h.mutable_data() + k);
  return py::make_tuple(hh, h);
}

// reset_after backward: returns dxp (N, 3U) = [dz, dr, dhh], drp (N, 3U) = [dz, dr, dhh * r]
// and the direct dh_prev term dh * z (N, U).
py::tuple gru_backward_ra(const Arr& dh, const Arr& gates, const Arr& hproj, const Arr& h_prev,
                          int64_t a, int64_t ra) {
  const int64_t U = h_prev.ndim() == 2 ? h_prev.shape(1) : 0;
  const int64_t N = rows_of(h_prev, U, "gru_gates_backward", "h_prev");
  same_rows(N, dh, U, "gru_gates_backward", "dh");
  same_rows(N, hproj, U, "gru_gates_backward", "hproj");
  same_rows(N, gates, 3 * U, "gru_gates_backward", "gates");
  Arr dxp = make(N, 3 * U), drp = make(N, 3 * U), dhp = make(N, U);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t j = 0; j < U; ++j) {
      const float* g = gates.data() + n * 3 * U;
      const int64_t k = n * U + j;
      const R::GruGrad o = R::gru_backward_reset_after(dh.data()[k], g[j], g[U + j], g[2 * U + j],
                                                       hproj.data()[k], h_prev.data()[k], a, ra);
      float *x = dxp.mutable_data() + n * 3 * U, *r = drp.mutable_data() + n * 3 * U;
      x[j] = r[j] = o.dz;
      x[U + j] = r[U + j] = o.dr;
      x[2 * U + j] = o.dxh;
      r[2 * U + j] = o.drh;
      dhp.mutable_data()[k] = o.dh_prev;
    }
  return py::make_tuple(dxp, drp, dhp);
}

// Not reset_after backward, in two halves around the GEMM drh = dhh @ Wr_h^T:
// gru_gates_backward_zh -> (dz, dhh, dh_prev direct); gru_gates_backward_r -> (dr, dh_prev).
py::tuple gru_backward_zh(const Arr& dh, const Arr& gates, const Arr& h_prev, int64_t a,
                          int64_t ra) {
  const int64_t U = h_prev.ndim() == 2 ? h_prev.shape(1) : 0;
  const int64_t N = rows_of(h_prev, U, "gru_gates_backward_zh", "h_prev");
  same_rows(N, dh, U, "gru_gates_backward_zh", "dh");
  same_rows(N, gates, 3 * U, "gru_gates_backward_zh", "gates");
  Arr dz = make(N, U), dhh = make(N, U), dhp = make(N, U);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t j = 0; j < U; ++j) {
      const float* g = gates.data() + n * 3 * U;
      const int64_t k = n * U + j;
      const R::GruGrad o = R::gru_backward_zh(dh.data()[k], g[j], g[2 * U + j], h_prev.data()[k],
                                              a, ra);
      dz.mutable_data()[k] = o.dz;
      dhh.mutable_data()[k] = o.dxh;
      dhp.mutable_data()[k] = o.dh_prev;
    }
  return py::make_tuple(dz, dhh, dhp);
}

py::tuple gru_backward_r(const Arr& drh, const Arr& r, const Arr& h_prev, const Arr& dh_prev,
                         int64_t ra) {
  const int64_t U = h_prev.ndim() == 2 ? h_prev.shape(1) : 0;
  const int64_t N = rows_of(h_prev, U, "gru_gates_backward_r", "h_prev");
  same_rows(N, drh, U, "gru_gates_backward_r", "drh");
  same_rows(N, r, U, "gru_gates_backward_r", "r");
  same_rows(N, dh_prev, U, "gru_gates_backward_r", "dh_prev");
  Arr dr = make(N, U), dhp = make(N, U);
  for (int64_t k = 0; k < N * U; ++k) {
    dhp.mutable_data()[k] = dh_prev.data()[k];
    R::gru_backward_r(drh.data()[k], r.data()[k], h_prev.data()[k], ra, dr.mutable_data() + k,
                      dhp.mutable_data() + k);
  }
  return py::make_tuple(dr, dhp);
}

Arr simple_backward(const Arr& dh, const Arr& h, int64_t a) {
  if (dh.size() != h.size()) throw std::invalid_argument("simple_rnn_gates_backward: dh and h differ in size");
  Arr dz(std::vector<py::ssize_t>(h.shape(), h.shape() + h.ndim()));
  for (py::ssize_t k = 0; k < h.size(); ++k)
    dz.mutable_data()[k] = fk_cuda::rnn::simple_backward(dh.data()[k], h.data()[k], a);
  return dz;
}

}  // namespace

FK_BIND_FAMILY(rnn) {
  m.def("rnn_act", [](const Arr& x, int64_t code) { return map1(x, code, &R::act); },
        py::arg("x"), py::arg("code"), "fk_cuda::rnn::act elementwise.");
  m.def("rnn_dact", [](const Arr& y, int64_t code) { return map1(y, code, &R::dact); },
        py::arg("y"), py::arg("code"), "fk_cuda::rnn::dact (derivative from the output).");
  m.def("lstm_gates_forward", &lstm_forward, py::arg("z"), py::arg("c_prev"), py::arg("activation"),
        py::arg("recurrent_activation"), "(gates, c, h) of one LSTM step from z (N, 4U).");
  m.def("lstm_gates_backward", &lstm_backward, py::arg("dh"), py::arg("dc"), py::arg("gates"),
        py::arg("c"), py::arg("c_prev"), py::arg("activation"), py::arg("recurrent_activation"),
        "(dz (N, 4U), dc_prev) of one LSTM step.");
  m.def("gru_gates_forward", &gru_forward_ra, py::arg("xp"), py::arg("rp"), py::arg("h_prev"),
        py::arg("activation"), py::arg("recurrent_activation"),
        "reset_after GRU step: (gates, hproj, h).");
  m.def("gru_gates_forward_zr", &gru_forward_zr, py::arg("xp"), py::arg("rp"), py::arg("h_prev"),
        py::arg("recurrent_activation"), "GRU (reset_after=False) first half: (z, r, r*h_prev).");
  m.def("gru_gates_forward_h", &gru_forward_h, py::arg("xh"), py::arg("hproj"), py::arg("z"),
        py::arg("h_prev"), py::arg("activation"), "GRU (reset_after=False) candidate: (hh, h).");
  m.def("gru_gates_backward", &gru_backward_ra, py::arg("dh"), py::arg("gates"), py::arg("hproj"),
        py::arg("h_prev"), py::arg("activation"), py::arg("recurrent_activation"),
        "reset_after GRU step backward: (dxp, drp, dh_prev direct term).");
  m.def("gru_gates_backward_zh", &gru_backward_zh, py::arg("dh"), py::arg("gates"),
        py::arg("h_prev"), py::arg("activation"), py::arg("recurrent_activation"),
        "GRU (reset_after=False) backward first half: (dz, dhh, dh_prev direct term).");
  m.def("gru_gates_backward_r", &gru_backward_r, py::arg("drh"), py::arg("r"), py::arg("h_prev"),
        py::arg("dh_prev"), py::arg("recurrent_activation"),
        "GRU (reset_after=False) backward second half: (dr, dh_prev + drh * r).");
  m.def("simple_rnn_gates_backward", &simple_backward, py::arg("dh"), py::arg("h"),
        py::arg("activation"), "dz = dh * act'(h) of one SimpleRNN step.");
}
