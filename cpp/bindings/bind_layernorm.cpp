// bind_layernorm.cpp: Python bindings of the layer-norm kernels (see fkeras/kernels.h).
// Buffers are checked by element count against (rows, D), so an (N, T, D) array passes as
// (N*T, D) without a reshape.
#include <cmath>
#include <string>

#include "check.h"
#include "fkeras/kernels.h"

void bind_layernorm(py::module_& m) {
  m.def("layer_norm_forward", [](py::object y, py::object mean, py::object rstd, py::object x,
                                 py::object gamma, py::object beta, int64_t rows, int64_t D,
                                 double epsilon, bool rms_scaling) {
    const char* k = "layer_norm_forward";
    fkb::check_sizes(k, {{"rows", rows}, {"D", D}});
    if (!(epsilon >= 0.0) || !std::isfinite(epsilon))
      throw py::value_error(std::string(k) + ": argument 'epsilon' must be finite and >= 0, "
                            "received " + std::to_string(epsilon));
    float* py_ = fkb::out_f32(y, k, "y", {rows, D});
    float* pmean = fkb::out_f32(mean, k, "mean", {rows});
    float* prstd = fkb::out_f32(rstd, k, "rstd", {rows});
    const float* px = fkb::in_f32(x, k, "x", {rows, D});
    const float* pg = fkb::in_f32(gamma, k, "gamma", {D}, true);
    const float* pb = fkb::in_f32(beta, k, "beta", {D}, true);
    if (!fkb::check_outputs(k, {{"y", y}, {"mean", mean}, {"rstd", rstd}},
                            {{"x", x}, {"gamma", gamma}, {"beta", beta}})) return;
    py::gil_scoped_release nogil;
    fk::layer_norm_forward(py_, pmean, prstd, px, pg, pb, rows, D, epsilon, rms_scaling);
  }, py::arg("y"), py::arg("mean"), py::arg("rstd"), py::arg("x"), py::arg("gamma"),
     py::arg("beta"), py::arg("rows"), py::arg("D"), py::arg("epsilon"),
     py::arg("rms_scaling") = false,
     "Layer norm over the last axis of x (rows, D): y; saves mean, rstd (rows).");

  m.def("layer_norm_backward", [](py::object dx, py::object dgamma, py::object dbeta,
                                  py::object dy, py::object x, py::object mean, py::object rstd,
                                  py::object gamma, int64_t rows, int64_t D, bool rms_scaling) {
    const char* k = "layer_norm_backward";
    fkb::check_sizes(k, {{"rows", rows}, {"D", D}});
    float* pdx = fkb::out_f32(dx, k, "dx", {rows, D}, true);
    float* pdg = fkb::out_f32(dgamma, k, "dgamma", {D}, true);
    float* pdb = fkb::out_f32(dbeta, k, "dbeta", {D}, true);
    const float* pdy = fkb::in_f32(dy, k, "dy", {rows, D});
    const float* px = fkb::in_f32(x, k, "x", {rows, D});
    const float* pmean = fkb::in_f32(mean, k, "mean", {rows});
    const float* prstd = fkb::in_f32(rstd, k, "rstd", {rows});
    const float* pg = fkb::in_f32(gamma, k, "gamma", {D}, true);
    if (!fkb::check_outputs(k, {{"dx", dx}, {"dgamma", dgamma}, {"dbeta", dbeta}},
                            {{"dy", dy}, {"x", x}, {"mean", mean}, {"rstd", rstd},
                             {"gamma", gamma}})) return;
    py::gil_scoped_release nogil;
    fk::layer_norm_backward(pdx, pdg, pdb, pdy, px, pmean, prstd, pg, rows, D, rms_scaling);
  }, py::arg("dx"), py::arg("dgamma"), py::arg("dbeta"), py::arg("dy"), py::arg("x"),
     py::arg("mean"), py::arg("rstd"), py::arg("gamma"), py::arg("rows"), py::arg("D"),
     py::arg("rms_scaling") = false,
     "Layer norm backward: dx, dgamma, dbeta (each optional) from dy and the saved state.");
}
