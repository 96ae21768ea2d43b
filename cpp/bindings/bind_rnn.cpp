// bind_rnn.cpp: Python bindings of the recurrent kernels (LSTM, GRU, SimpleRNN; sequence and
// cell, forward and backward; see fkeras/kernels.h). Every argument is validated (dtype,
// contiguity, element count, writability of outputs, activation codes) before the GIL is
// released around the kernel.
#include "check.h"
#include "fkeras/kernels.h"

namespace {

using py::arg;

void check_acts(const char* k, int64_t activation, int64_t recurrent_activation) {
  fkb::check_activation(activation, k, "activation", fkb::ActUse::kRecurrent);
  fkb::check_activation(recurrent_activation, k, "recurrent_activation",
                        fkb::ActUse::kRecurrent);
}

void bind_lstm(py::module_& m) {
  m.def("lstm_sequence_forward", [](py::object hs, py::object h_final, py::object c_final,
                                    py::object gates, py::object cs, py::object x, py::object h0,
                                    py::object c0, py::object kernel, py::object recurrent_kernel,
                                    py::object bias, int64_t N, int64_t T, int64_t F, int64_t U,
                                    bool go_backwards, int64_t activation,
                                    int64_t recurrent_activation) {
    const char* k = "lstm_sequence_forward";
    fkb::check_sizes(k, {{"N", N}, {"T", T}, {"F", F}, {"U", U}});
    check_acts(k, activation, recurrent_activation);
    float* p_hs = fkb::out_f32(hs, k, "hs", {N, T, U});
    float* p_hf = fkb::out_f32(h_final, k, "h_final", {N, U});
    float* p_cf = fkb::out_f32(c_final, k, "c_final", {N, U});
    float* p_g = fkb::out_f32(gates, k, "gates", {N, T, 4 * U}, true);
    float* p_cs = fkb::out_f32(cs, k, "cs", {N, T, U}, true);
    if ((p_g == nullptr) != (p_cs == nullptr))
      throw py::value_error(std::string(k) + ": arguments 'gates' and 'cs' must both be arrays "
                            "(training) or both None (inference); received 'gates' " +
                            (p_g ? "an array" : "None") + " and 'cs' " +
                            (p_cs ? "an array" : "None") + ".");
    const float* p_x = fkb::in_f32(x, k, "x", {N, T, F});
    const float* p_h0 = fkb::in_f32(h0, k, "h0", {N, U});
    const float* p_c0 = fkb::in_f32(c0, k, "c0", {N, U});
    const float* p_w = fkb::in_f32(kernel, k, "kernel", {F, 4 * U});
    const float* p_rw = fkb::in_f32(recurrent_kernel, k, "recurrent_kernel", {U, 4 * U});
    const float* p_b = fkb::in_f32(bias, k, "bias", {4 * U}, true);
    if (!fkb::check_outputs(k, {{"hs", hs}, {"h_final", h_final}, {"c_final", c_final},
                                 {"gates", gates}, {"cs", cs}}, {{"x", x}, {"h0", h0}, {"c0", c0},
                                 {"kernel", kernel}, {"recurrent_kernel", recurrent_kernel},
                                 {"bias", bias}})) return;
    py::gil_scoped_release nogil;
    fk::lstm_sequence_forward(p_hs, p_hf, p_cf, p_g, p_cs, p_x, p_h0, p_c0, p_w, p_rw, p_b, N, T,
                              F, U, go_backwards, activation, recurrent_activation);
  }, arg("hs"), arg("h_final"), arg("c_final"), arg("gates"), arg("cs"), arg("x"), arg("h0"),
     arg("c0"), arg("kernel"), arg("recurrent_kernel"), arg("bias"), arg("N"), arg("T"), arg("F"),
     arg("U"), arg("go_backwards"), arg("activation"), arg("recurrent_activation"));

  m.def("lstm_sequence_backward", [](py::object dx, py::object dh0, py::object dc0,
                                     py::object dkernel, py::object drecurrent_kernel,
                                     py::object dbias, py::object dhs, py::object dh_final,
                                     py::object dc_final, py::object gates, py::object cs,
                                     py::object hs, py::object x, py::object h0, py::object c0,
                                     py::object kernel, py::object recurrent_kernel, int64_t N,
                                     int64_t T, int64_t F, int64_t U, bool go_backwards,
                                     int64_t activation, int64_t recurrent_activation) {
    const char* k = "lstm_sequence_backward";
    fkb::check_sizes(k, {{"N", N}, {"T", T}, {"F", F}, {"U", U}});
    check_acts(k, activation, recurrent_activation);
    float* p_dx = fkb::out_f32(dx, k, "dx", {N, T, F}, true);
    float* p_dh0 = fkb::out_f32(dh0, k, "dh0", {N, U}, true);
    float* p_dc0 = fkb::out_f32(dc0, k, "dc0", {N, U}, true);
    float* p_dw = fkb::out_f32(dkernel, k, "dkernel", {F, 4 * U});
    float* p_drw = fkb::out_f32(drecurrent_kernel, k, "drecurrent_kernel", {U, 4 * U});
    float* p_db = fkb::out_f32(dbias, k, "dbias", {4 * U}, true);
    const float* p_dhs = fkb::in_f32(dhs, k, "dhs", {N, T, U}, true);
    const float* p_dhf = fkb::in_f32(dh_final, k, "dh_final", {N, U}, true);
    const float* p_dcf = fkb::in_f32(dc_final, k, "dc_final", {N, U}, true);
    const float* p_g = fkb::in_f32(gates, k, "gates", {N, T, 4 * U});
    const float* p_cs = fkb::in_f32(cs, k, "cs", {N, T, U});
    const float* p_hs = fkb::in_f32(hs, k, "hs", {N, T, U});
    const float* p_x = fkb::in_f32(x, k, "x", {N, T, F});
    const float* p_h0 = fkb::in_f32(h0, k, "h0", {N, U});
    const float* p_c0 = fkb::in_f32(c0, k, "c0", {N, U});
    const float* p_w = fkb::in_f32(kernel, k, "kernel", {F, 4 * U});
    const float* p_rw = fkb::in_f32(recurrent_kernel, k, "recurrent_kernel", {U, 4 * U});
    if (!fkb::check_outputs(k, {{"dx", dx}, {"dh0", dh0}, {"dc0", dc0}, {"dkernel", dkernel},
                                 {"drecurrent_kernel", drecurrent_kernel}, {"dbias", dbias}},
                                 {{"dhs", dhs}, {"dh_final", dh_final}, {"dc_final", dc_final},
                                 {"gates", gates}, {"cs", cs}, {"hs", hs}, {"x", x}, {"h0", h0},
                                 {"c0", c0}, {"kernel", kernel},
                                 {"recurrent_kernel", recurrent_kernel}})) return;
    py::gil_scoped_release nogil;
    fk::lstm_sequence_backward(p_dx, p_dh0, p_dc0, p_dw, p_drw, p_db, p_dhs, p_dhf, p_dcf, p_g,
                               p_cs, p_hs, p_x, p_h0, p_c0, p_w, p_rw, N, T, F, U, go_backwards,
                               activation, recurrent_activation);
  }, arg("dx"), arg("dh0"), arg("dc0"), arg("dkernel"), arg("drecurrent_kernel"), arg("dbias"),
     arg("dhs"), arg("dh_final"), arg("dc_final"), arg("gates"), arg("cs"), arg("hs"), arg("x"),
     arg("h0"), arg("c0"), arg("kernel"), arg("recurrent_kernel"), arg("N"), arg("T"), arg("F"),
     arg("U"), arg("go_backwards"), arg("activation"), arg("recurrent_activation"));

  m.def("lstm_cell_forward", [](py::object h, py::object c, py::object gates, py::object x,
                                py::object h_prev, py::object c_prev, py::object kernel,
                                py::object recurrent_kernel, py::object bias, int64_t N,
                                int64_t F, int64_t U, int64_t activation,
                                int64_t recurrent_activation) {
    const char* k = "lstm_cell_forward";
    fkb::check_sizes(k, {{"N", N}, {"F", F}, {"U", U}});
    check_acts(k, activation, recurrent_activation);
    float* p_h = fkb::out_f32(h, k, "h", {N, U});
    float* p_c = fkb::out_f32(c, k, "c", {N, U});
    float* p_g = fkb::out_f32(gates, k, "gates", {N, 4 * U});
    const float* p_x = fkb::in_f32(x, k, "x", {N, F});
    const float* p_hp = fkb::in_f32(h_prev, k, "h_prev", {N, U});
    const float* p_cp = fkb::in_f32(c_prev, k, "c_prev", {N, U});
    const float* p_w = fkb::in_f32(kernel, k, "kernel", {F, 4 * U});
    const float* p_rw = fkb::in_f32(recurrent_kernel, k, "recurrent_kernel", {U, 4 * U});
    const float* p_b = fkb::in_f32(bias, k, "bias", {4 * U}, true);
    if (!fkb::check_outputs(k, {{"h", h}, {"c", c}, {"gates", gates}}, {{"x", x},
                                 {"h_prev", h_prev}, {"c_prev", c_prev}, {"kernel", kernel},
                                 {"recurrent_kernel", recurrent_kernel}, {"bias", bias}})) return;
    py::gil_scoped_release nogil;
    fk::lstm_cell_forward(p_h, p_c, p_g, p_x, p_hp, p_cp, p_w, p_rw, p_b, N, F, U, activation,
                          recurrent_activation);
  }, arg("h"), arg("c"), arg("gates"), arg("x"), arg("h_prev"), arg("c_prev"), arg("kernel"),
     arg("recurrent_kernel"), arg("bias"), arg("N"), arg("F"), arg("U"), arg("activation"),
     arg("recurrent_activation"));

  m.def("lstm_cell_backward", [](py::object dx, py::object dh_prev, py::object dc_prev,
                                 py::object dkernel, py::object drecurrent_kernel,
                                 py::object dbias, py::object dh, py::object dc, py::object gates,
                                 py::object c, py::object x, py::object h_prev, py::object c_prev,
                                 py::object kernel, py::object recurrent_kernel, int64_t N,
                                 int64_t F, int64_t U, int64_t activation,
                                 int64_t recurrent_activation) {
    const char* k = "lstm_cell_backward";
    fkb::check_sizes(k, {{"N", N}, {"F", F}, {"U", U}});
    check_acts(k, activation, recurrent_activation);
    float* p_dx = fkb::out_f32(dx, k, "dx", {N, F}, true);
    float* p_dhp = fkb::out_f32(dh_prev, k, "dh_prev", {N, U}, true);
    float* p_dcp = fkb::out_f32(dc_prev, k, "dc_prev", {N, U}, true);
    float* p_dw = fkb::out_f32(dkernel, k, "dkernel", {F, 4 * U});
    float* p_drw = fkb::out_f32(drecurrent_kernel, k, "drecurrent_kernel", {U, 4 * U});
    float* p_db = fkb::out_f32(dbias, k, "dbias", {4 * U}, true);
    const float* p_dh = fkb::in_f32(dh, k, "dh", {N, U});
    const float* p_dc = fkb::in_f32(dc, k, "dc", {N, U}, true);
    const float* p_g = fkb::in_f32(gates, k, "gates", {N, 4 * U});
    const float* p_c = fkb::in_f32(c, k, "c", {N, U});
    const float* p_x = fkb::in_f32(x, k, "x", {N, F});
    const float* p_hp = fkb::in_f32(h_prev, k, "h_prev", {N, U});
    const float* p_cp = fkb::in_f32(c_prev, k, "c_prev", {N, U});
    const float* p_w = fkb::in_f32(kernel, k, "kernel", {F, 4 * U});
    const float* p_rw = fkb::in_f32(recurrent_kernel, k, "recurrent_kernel", {U, 4 * U});
    if (!fkb::check_outputs(k, {{"dx", dx}, {"dh_prev", dh_prev}, {"dc_prev", dc_prev},
                                 {"dkernel", dkernel}, {"drecurrent_kernel", drecurrent_kernel},
                                 {"dbias", dbias}}, {{"dh", dh}, {"dc", dc}, {"gates", gates},
                                 {"c", c}, {"x", x}, {"h_prev", h_prev}, {"c_prev", c_prev},
                                 {"kernel", kernel},
                                 {"recurrent_kernel", recurrent_kernel}})) return;
    py::gil_scoped_release nogil;
    fk::lstm_cell_backward(p_dx, p_dhp, p_dcp, p_dw, p_drw, p_db, p_dh, p_dc, p_g, p_c, p_x, p_hp,
                           p_cp, p_w, p_rw, N, F, U, activation, recurrent_activation);
  }, arg("dx"), arg("dh_prev"), arg("dc_prev"), arg("dkernel"), arg("drecurrent_kernel"),
     arg("dbias"), arg("dh"), arg("dc"), arg("gates"), arg("c"), arg("x"), arg("h_prev"),
     arg("c_prev"), arg("kernel"), arg("recurrent_kernel"), arg("N"), arg("F"), arg("U"),
     arg("activation"), arg("recurrent_activation"));
}

// The GRU bias: [input bias; recurrent bias] (2, 3U) when reset_after, else (3U).
const float* gru_bias(const py::object& bias, const char* k, int64_t U, bool reset_after) {
  return reset_after ? fkb::in_f32(bias, k, "bias", {2, 3 * U}, true)
                     : fkb::in_f32(bias, k, "bias", {3 * U}, true);
}
float* gru_dbias(const py::object& dbias, const char* k, int64_t U, bool reset_after) {
  return reset_after ? fkb::out_f32(dbias, k, "dbias", {2, 3 * U}, true)
                     : fkb::out_f32(dbias, k, "dbias", {3 * U}, true);
}

void bind_gru(py::module_& m) {
  m.def("gru_sequence_forward", [](py::object hs, py::object h_final, py::object gates,
                                   py::object hproj, py::object x, py::object h0,
                                   py::object kernel, py::object recurrent_kernel,
                                   py::object bias, int64_t N, int64_t T, int64_t F, int64_t U,
                                   bool go_backwards, bool reset_after, int64_t activation,
                                   int64_t recurrent_activation) {
    const char* k = "gru_sequence_forward";
    fkb::check_sizes(k, {{"N", N}, {"T", T}, {"F", F}, {"U", U}});
    check_acts(k, activation, recurrent_activation);
    float* p_hs = fkb::out_f32(hs, k, "hs", {N, T, U});
    float* p_hf = fkb::out_f32(h_final, k, "h_final", {N, U});
    float* p_g = fkb::out_f32(gates, k, "gates", {N, T, 3 * U});
    float* p_hp = fkb::out_f32(hproj, k, "hproj", {N, T, U});
    const float* p_x = fkb::in_f32(x, k, "x", {N, T, F});
    const float* p_h0 = fkb::in_f32(h0, k, "h0", {N, U});
    const float* p_w = fkb::in_f32(kernel, k, "kernel", {F, 3 * U});
    const float* p_rw = fkb::in_f32(recurrent_kernel, k, "recurrent_kernel", {U, 3 * U});
    const float* p_b = gru_bias(bias, k, U, reset_after);
    if (!fkb::check_outputs(k, {{"hs", hs}, {"h_final", h_final}, {"gates", gates},
                                 {"hproj", hproj}}, {{"x", x}, {"h0", h0}, {"kernel", kernel},
                                 {"recurrent_kernel", recurrent_kernel}, {"bias", bias}})) return;
    py::gil_scoped_release nogil;
    fk::gru_sequence_forward(p_hs, p_hf, p_g, p_hp, p_x, p_h0, p_w, p_rw, p_b, N, T, F, U,
                             go_backwards, reset_after, activation, recurrent_activation);
  }, arg("hs"), arg("h_final"), arg("gates"), arg("hproj"), arg("x"), arg("h0"), arg("kernel"),
     arg("recurrent_kernel"), arg("bias"), arg("N"), arg("T"), arg("F"), arg("U"),
     arg("go_backwards"), arg("reset_after"), arg("activation"), arg("recurrent_activation"));

  m.def("gru_sequence_backward", [](py::object dx, py::object dh0, py::object dkernel,
                                    py::object drecurrent_kernel, py::object dbias,
                                    py::object dhs, py::object dh_final, py::object gates,
                                    py::object hproj, py::object hs, py::object x, py::object h0,
                                    py::object kernel, py::object recurrent_kernel, int64_t N,
                                    int64_t T, int64_t F, int64_t U, bool go_backwards,
                                    bool reset_after, int64_t activation,
                                    int64_t recurrent_activation) {
    const char* k = "gru_sequence_backward";
    fkb::check_sizes(k, {{"N", N}, {"T", T}, {"F", F}, {"U", U}});
    check_acts(k, activation, recurrent_activation);
    float* p_dx = fkb::out_f32(dx, k, "dx", {N, T, F}, true);
    float* p_dh0 = fkb::out_f32(dh0, k, "dh0", {N, U}, true);
    float* p_dw = fkb::out_f32(dkernel, k, "dkernel", {F, 3 * U});
    float* p_drw = fkb::out_f32(drecurrent_kernel, k, "drecurrent_kernel", {U, 3 * U});
    float* p_db = gru_dbias(dbias, k, U, reset_after);
    const float* p_dhs = fkb::in_f32(dhs, k, "dhs", {N, T, U}, true);
    const float* p_dhf = fkb::in_f32(dh_final, k, "dh_final", {N, U}, true);
    const float* p_g = fkb::in_f32(gates, k, "gates", {N, T, 3 * U});
    const float* p_hp = fkb::in_f32(hproj, k, "hproj", {N, T, U});
    const float* p_hs = fkb::in_f32(hs, k, "hs", {N, T, U});
    const float* p_x = fkb::in_f32(x, k, "x", {N, T, F});
    const float* p_h0 = fkb::in_f32(h0, k, "h0", {N, U});
    const float* p_w = fkb::in_f32(kernel, k, "kernel", {F, 3 * U});
    const float* p_rw = fkb::in_f32(recurrent_kernel, k, "recurrent_kernel", {U, 3 * U});
    if (!fkb::check_outputs(k, {{"dx", dx}, {"dh0", dh0}, {"dkernel", dkernel},
                                 {"drecurrent_kernel", drecurrent_kernel}, {"dbias", dbias}},
                                 {{"dhs", dhs}, {"dh_final", dh_final}, {"gates", gates},
                                 {"hproj", hproj}, {"hs", hs}, {"x", x}, {"h0", h0},
                                 {"kernel", kernel},
                                 {"recurrent_kernel", recurrent_kernel}})) return;
    py::gil_scoped_release nogil;
    fk::gru_sequence_backward(p_dx, p_dh0, p_dw, p_drw, p_db, p_dhs, p_dhf, p_g, p_hp, p_hs, p_x,
                              p_h0, p_w, p_rw, N, T, F, U, go_backwards, reset_after, activation,
                              recurrent_activation);
  }, arg("dx"), arg("dh0"), arg("dkernel"), arg("drecurrent_kernel"), arg("dbias"), arg("dhs"),
     arg("dh_final"), arg("gates"), arg("hproj"), arg("hs"), arg("x"), arg("h0"), arg("kernel"),
     arg("recurrent_kernel"), arg("N"), arg("T"), arg("F"), arg("U"), arg("go_backwards"),
     arg("reset_after"), arg("activation"), arg("recurrent_activation"));

  m.def("gru_cell_forward", [](py::object h, py::object gates, py::object hproj, py::object x,
                               py::object h_prev, py::object kernel, py::object recurrent_kernel,
                               py::object bias, int64_t N, int64_t F, int64_t U,
                               bool reset_after, int64_t activation,
                               int64_t recurrent_activation) {
    const char* k = "gru_cell_forward";
    fkb::check_sizes(k, {{"N", N}, {"F", F}, {"U", U}});
    check_acts(k, activation, recurrent_activation);
    float* p_h = fkb::out_f32(h, k, "h", {N, U});
    float* p_g = fkb::out_f32(gates, k, "gates", {N, 3 * U});
    float* p_hp = fkb::out_f32(hproj, k, "hproj", {N, U});
    const float* p_x = fkb::in_f32(x, k, "x", {N, F});
    const float* p_hprev = fkb::in_f32(h_prev, k, "h_prev", {N, U});
    const float* p_w = fkb::in_f32(kernel, k, "kernel", {F, 3 * U});
    const float* p_rw = fkb::in_f32(recurrent_kernel, k, "recurrent_kernel", {U, 3 * U});
    const float* p_b = gru_bias(bias, k, U, reset_after);
    if (!fkb::check_outputs(k, {{"h", h}, {"gates", gates}, {"hproj", hproj}}, {{"x", x},
                                 {"h_prev", h_prev}, {"kernel", kernel},
                                 {"recurrent_kernel", recurrent_kernel}, {"bias", bias}})) return;
    py::gil_scoped_release nogil;
    fk::gru_cell_forward(p_h, p_g, p_hp, p_x, p_hprev, p_w, p_rw, p_b, N, F, U, reset_after,
                         activation, recurrent_activation);
  }, arg("h"), arg("gates"), arg("hproj"), arg("x"), arg("h_prev"), arg("kernel"),
     arg("recurrent_kernel"), arg("bias"), arg("N"), arg("F"), arg("U"), arg("reset_after"),
     arg("activation"), arg("recurrent_activation"));

  m.def("gru_cell_backward", [](py::object dx, py::object dh_prev, py::object dkernel,
                                py::object drecurrent_kernel, py::object dbias, py::object dh,
                                py::object gates, py::object hproj, py::object x,
                                py::object h_prev, py::object kernel,
                                py::object recurrent_kernel, int64_t N, int64_t F, int64_t U,
                                bool reset_after, int64_t activation,
                                int64_t recurrent_activation) {
    const char* k = "gru_cell_backward";
    fkb::check_sizes(k, {{"N", N}, {"F", F}, {"U", U}});
    check_acts(k, activation, recurrent_activation);
    float* p_dx = fkb::out_f32(dx, k, "dx", {N, F}, true);
    float* p_dhp = fkb::out_f32(dh_prev, k, "dh_prev", {N, U}, true);
    float* p_dw = fkb::out_f32(dkernel, k, "dkernel", {F, 3 * U});
    float* p_drw = fkb::out_f32(drecurrent_kernel, k, "drecurrent_kernel", {U, 3 * U});
    float* p_db = gru_dbias(dbias, k, U, reset_after);
    const float* p_dh = fkb::in_f32(dh, k, "dh", {N, U});
    const float* p_g = fkb::in_f32(gates, k, "gates", {N, 3 * U});
    const float* p_hp = fkb::in_f32(hproj, k, "hproj", {N, U});
    const float* p_x = fkb::in_f32(x, k, "x", {N, F});
    const float* p_hprev = fkb::in_f32(h_prev, k, "h_prev", {N, U});
    const float* p_w = fkb::in_f32(kernel, k, "kernel", {F, 3 * U});
    const float* p_rw = fkb::in_f32(recurrent_kernel, k, "recurrent_kernel", {U, 3 * U});
    if (!fkb::check_outputs(k, {{"dx", dx}, {"dh_prev", dh_prev}, {"dkernel", dkernel},
                                 {"drecurrent_kernel", drecurrent_kernel}, {"dbias", dbias}},
                                 {{"dh", dh}, {"gates", gates}, {"hproj", hproj}, {"x", x},
                                 {"h_prev", h_prev}, {"kernel", kernel},
                                 {"recurrent_kernel", recurrent_kernel}})) return;
    py::gil_scoped_release nogil;
    fk::gru_cell_backward(p_dx, p_dhp, p_dw, p_drw, p_db, p_dh, p_g, p_hp, p_x, p_hprev, p_w,
                          p_rw, N, F, U, reset_after, activation, recurrent_activation);
  }, arg("dx"), arg("dh_prev"), arg("dkernel"), arg("drecurrent_kernel"), arg("dbias"),
     arg("dh"), arg("gates"), arg("hproj"), arg("x"), arg("h_prev"), arg("kernel"),
     arg("recurrent_kernel"), arg("N"), arg("F"), arg("U"), arg("reset_after"),
     arg("activation"), arg("recurrent_activation"));
}

void bind_simple_rnn(py::module_& m) {
  m.def("simple_rnn_sequence_forward", [](py::object hs, py::object h_final, py::object x,
                                          py::object h0, py::object kernel,
                                          py::object recurrent_kernel, py::object bias, int64_t N,
                                          int64_t T, int64_t F, int64_t U, bool go_backwards,
                                          int64_t activation) {
    const char* k = "simple_rnn_sequence_forward";
    fkb::check_sizes(k, {{"N", N}, {"T", T}, {"F", F}, {"U", U}});
    fkb::check_activation(activation, k, "activation", fkb::ActUse::kRecurrent);
    float* p_hs = fkb::out_f32(hs, k, "hs", {N, T, U});
    float* p_hf = fkb::out_f32(h_final, k, "h_final", {N, U});
    const float* p_x = fkb::in_f32(x, k, "x", {N, T, F});
    const float* p_h0 = fkb::in_f32(h0, k, "h0", {N, U});
    const float* p_w = fkb::in_f32(kernel, k, "kernel", {F, U});
    const float* p_rw = fkb::in_f32(recurrent_kernel, k, "recurrent_kernel", {U, U});
    const float* p_b = fkb::in_f32(bias, k, "bias", {U}, true);
    if (!fkb::check_outputs(k, {{"hs", hs}, {"h_final", h_final}}, {{"x", x}, {"h0", h0},
                                 {"kernel", kernel}, {"recurrent_kernel", recurrent_kernel},
                                 {"bias", bias}})) return;
    py::gil_scoped_release nogil;
    fk::simple_rnn_sequence_forward(p_hs, p_hf, p_x, p_h0, p_w, p_rw, p_b, N, T, F, U,
                                    go_backwards, activation);
  }, arg("hs"), arg("h_final"), arg("x"), arg("h0"), arg("kernel"), arg("recurrent_kernel"),
     arg("bias"), arg("N"), arg("T"), arg("F"), arg("U"), arg("go_backwards"), arg("activation"));

  m.def("simple_rnn_sequence_backward", [](py::object dx, py::object dh0, py::object dkernel,
                                           py::object drecurrent_kernel, py::object dbias,
                                           py::object dhs, py::object dh_final, py::object hs,
                                           py::object x, py::object h0, py::object kernel,
                                           py::object recurrent_kernel, int64_t N, int64_t T,
                                           int64_t F, int64_t U, bool go_backwards,
                                           int64_t activation) {
    const char* k = "simple_rnn_sequence_backward";
    fkb::check_sizes(k, {{"N", N}, {"T", T}, {"F", F}, {"U", U}});
    fkb::check_activation(activation, k, "activation", fkb::ActUse::kRecurrent);
    float* p_dx = fkb::out_f32(dx, k, "dx", {N, T, F}, true);
    float* p_dh0 = fkb::out_f32(dh0, k, "dh0", {N, U}, true);
    float* p_dw = fkb::out_f32(dkernel, k, "dkernel", {F, U});
    float* p_drw = fkb::out_f32(drecurrent_kernel, k, "drecurrent_kernel", {U, U});
    float* p_db = fkb::out_f32(dbias, k, "dbias", {U}, true);
    const float* p_dhs = fkb::in_f32(dhs, k, "dhs", {N, T, U}, true);
    const float* p_dhf = fkb::in_f32(dh_final, k, "dh_final", {N, U}, true);
    const float* p_hs = fkb::in_f32(hs, k, "hs", {N, T, U});
    const float* p_x = fkb::in_f32(x, k, "x", {N, T, F});
    const float* p_h0 = fkb::in_f32(h0, k, "h0", {N, U});
    const float* p_w = fkb::in_f32(kernel, k, "kernel", {F, U});
    const float* p_rw = fkb::in_f32(recurrent_kernel, k, "recurrent_kernel", {U, U});
    if (!fkb::check_outputs(k, {{"dx", dx}, {"dh0", dh0}, {"dkernel", dkernel},
                                 {"drecurrent_kernel", drecurrent_kernel}, {"dbias", dbias}},
                                 {{"dhs", dhs}, {"dh_final", dh_final}, {"hs", hs}, {"x", x},
                                 {"h0", h0}, {"kernel", kernel},
                                 {"recurrent_kernel", recurrent_kernel}})) return;
    py::gil_scoped_release nogil;
    fk::simple_rnn_sequence_backward(p_dx, p_dh0, p_dw, p_drw, p_db, p_dhs, p_dhf, p_hs, p_x,
                                     p_h0, p_w, p_rw, N, T, F, U, go_backwards, activation);
  }, arg("dx"), arg("dh0"), arg("dkernel"), arg("drecurrent_kernel"), arg("dbias"), arg("dhs"),
     arg("dh_final"), arg("hs"), arg("x"), arg("h0"), arg("kernel"), arg("recurrent_kernel"),
     arg("N"), arg("T"), arg("F"), arg("U"), arg("go_backwards"), arg("activation"));

  m.def("simple_rnn_cell_forward", [](py::object h, py::object x, py::object h_prev,
                                      py::object kernel, py::object recurrent_kernel,
                                      py::object bias, int64_t N, int64_t F, int64_t U,
                                      int64_t activation) {
    const char* k = "simple_rnn_cell_forward";
    fkb::check_sizes(k, {{"N", N}, {"F", F}, {"U", U}});
    fkb::check_activation(activation, k, "activation", fkb::ActUse::kRecurrent);
    float* p_h = fkb::out_f32(h, k, "h", {N, U});
    const float* p_x = fkb::in_f32(x, k, "x", {N, F});
    const float* p_hp = fkb::in_f32(h_prev, k, "h_prev", {N, U});
    const float* p_w = fkb::in_f32(kernel, k, "kernel", {F, U});
    const float* p_rw = fkb::in_f32(recurrent_kernel, k, "recurrent_kernel", {U, U});
    const float* p_b = fkb::in_f32(bias, k, "bias", {U}, true);
    if (!fkb::check_outputs(k, {{"h", h}}, {{"x", x}, {"h_prev", h_prev}, {"kernel", kernel},
                                 {"recurrent_kernel", recurrent_kernel}, {"bias", bias}})) return;
    py::gil_scoped_release nogil;
    fk::simple_rnn_cell_forward(p_h, p_x, p_hp, p_w, p_rw, p_b, N, F, U, activation);
  }, arg("h"), arg("x"), arg("h_prev"), arg("kernel"), arg("recurrent_kernel"), arg("bias"),
     arg("N"), arg("F"), arg("U"), arg("activation"));

  m.def("simple_rnn_cell_backward", [](py::object dx, py::object dh_prev, py::object dkernel,
                                       py::object drecurrent_kernel, py::object dbias,
                                       py::object dh, py::object h, py::object x,
                                       py::object h_prev, py::object kernel,
                                       py::object recurrent_kernel, int64_t N, int64_t F,
                                       int64_t U, int64_t activation) {
    const char* k = "simple_rnn_cell_backward";
    fkb::check_sizes(k, {{"N", N}, {"F", F}, {"U", U}});
    fkb::check_activation(activation, k, "activation", fkb::ActUse::kRecurrent);
    float* p_dx = fkb::out_f32(dx, k, "dx", {N, F}, true);
    float* p_dhp = fkb::out_f32(dh_prev, k, "dh_prev", {N, U}, true);
    float* p_dw = fkb::out_f32(dkernel, k, "dkernel", {F, U});
    float* p_drw = fkb::out_f32(drecurrent_kernel, k, "drecurrent_kernel", {U, U});
    float* p_db = fkb::out_f32(dbias, k, "dbias", {U}, true);
    const float* p_dh = fkb::in_f32(dh, k, "dh", {N, U});
    const float* p_h = fkb::in_f32(h, k, "h", {N, U});
    const float* p_x = fkb::in_f32(x, k, "x", {N, F});
    const float* p_hp = fkb::in_f32(h_prev, k, "h_prev", {N, U});
    const float* p_w = fkb::in_f32(kernel, k, "kernel", {F, U});
    const float* p_rw = fkb::in_f32(recurrent_kernel, k, "recurrent_kernel", {U, U});
    if (!fkb::check_outputs(k, {{"dx", dx}, {"dh_prev", dh_prev}, {"dkernel", dkernel},
                                 {"drecurrent_kernel", drecurrent_kernel}, {"dbias", dbias}},
                                 {{"dh", dh}, {"h", h}, {"x", x}, {"h_prev", h_prev},
                                 {"kernel", kernel},
                                 {"recurrent_kernel", recurrent_kernel}})) return;
    py::gil_scoped_release nogil;
    fk::simple_rnn_cell_backward(p_dx, p_dhp, p_dw, p_drw, p_db, p_dh, p_h, p_x, p_hp, p_w, p_rw,
                                 N, F, U, activation);
  }, arg("dx"), arg("dh_prev"), arg("dkernel"), arg("drecurrent_kernel"), arg("dbias"),
     arg("dh"), arg("h"), arg("x"), arg("h_prev"), arg("kernel"), arg("recurrent_kernel"),
     arg("N"), arg("F"), arg("U"), arg("activation"));
}

}  // namespace

void bind_rnn(py::module_& m) {
  bind_lstm(m);
  bind_gru(m);
  bind_simple_rnn(m);
}
