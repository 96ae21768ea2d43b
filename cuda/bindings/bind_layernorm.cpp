// bind_layernorm.cpp: fkeras._C_cuda's layer_norm_forward / layer_norm_backward, called exactly
// like fkeras._C's (outputs, saved state, inputs, sizes; DeviceArrays instead of NumPy arrays,
// None for an optional one). Checked before any launch: sizes >= 0, epsilon finite and >= 0,
// float32 buffers with the element counts of the (rows, D) view (so an (N, T, D) array passes
// as (N*T, D)), outputs distinct from each other and from the inputs.
#include <pybind11/pybind11.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "../kernels/layernorm.cuh"
#include "fk_cuda/bind_checks.h"
#include "fk_cuda/binders.h"
#include "fk_cuda/device_array.h"
#include "fk_cuda/runtime.h"

namespace py = pybind11;
using fk_cuda::DeviceArray;
using fk_cuda::DType;

namespace {

using fk_cuda::bind::Named;

int64_t view_size(const char* fn, int64_t rows, int64_t D) {
  if (rows < 0 || D < 0)
    throw py::value_error(std::string(fn) + ": sizes must be >= 0, received rows=" +
                          std::to_string(rows) + ", D=" + std::to_string(D));
  int64_t t;
  if (__builtin_mul_overflow(rows, D, &t) || t > (int64_t{1} << 60))
    throw py::value_error(std::string(fn) + ": rows * D is too large");
  return t;
}

using fk_cuda::bind::check_distinct;
using fk_cuda::bind::f32;

}  // namespace

FK_BIND_FAMILY(layernorm) {
  m.def("layer_norm_forward",
        [](DeviceArray& y, DeviceArray& mean, DeviceArray& rstd, const DeviceArray& x,
           const DeviceArray* gamma, const DeviceArray* beta, int64_t rows, int64_t D,
           double epsilon, bool rms_scaling) {
          const char* k = "layer_norm_forward";
          const int64_t total = view_size(k, rows, D);
          if (!(epsilon >= 0.0) || !std::isfinite(epsilon))
            throw py::value_error(std::string(k) + ": argument 'epsilon' must be finite and "
                                  ">= 0, received " + std::to_string(epsilon));
          float* py_ = f32(&y, k, "y", total);
          float* pm = f32(&mean, k, "mean", rows);
          float* pr = f32(&rstd, k, "rstd", rows);
          const float* px = f32(&x, k, "x", total);
          const float* pg = f32(gamma, k, "gamma", D, true);
          const float* pb = f32(beta, k, "beta", D, true);
          check_distinct(k, {{"y", &y}, {"mean", &mean}, {"rstd", &rstd}},
                         {{"x", &x}, {"gamma", gamma}, {"beta", beta}});
          fk_cuda::layer_norm_forward(py_, pm, pr, px, pg, pb, rows, D, epsilon, rms_scaling,
                                      fk_cuda::stream());
        },
        py::arg("y"), py::arg("mean"), py::arg("rstd"), py::arg("x"),
        py::arg("gamma").none(true), py::arg("beta").none(true), py::arg("rows"), py::arg("D"),
        py::arg("epsilon"), py::arg("rms_scaling") = false,
        "Layer norm over the last axis of x (rows, D): y; saves mean, rstd (rows).");

  m.def("layer_norm_backward",
        [](DeviceArray* dx, DeviceArray* dgamma, DeviceArray* dbeta, const DeviceArray& dy,
           const DeviceArray& x, const DeviceArray& mean, const DeviceArray& rstd,
           const DeviceArray* gamma, int64_t rows, int64_t D, bool rms_scaling) {
          const char* k = "layer_norm_backward";
          const int64_t total = view_size(k, rows, D);
          float* pdx = f32(dx, k, "dx", total, true);
          float* pdg = f32(dgamma, k, "dgamma", D, true);
          float* pdb = f32(dbeta, k, "dbeta", D, true);
          const float* pdy = f32(&dy, k, "dy", total);
          const float* px = f32(&x, k, "x", total);
          const float* pm = f32(&mean, k, "mean", rows);
          const float* pr = f32(&rstd, k, "rstd", rows);
          const float* pg = f32(gamma, k, "gamma", D, true);
          check_distinct(k, {{"dx", dx}, {"dgamma", dgamma}, {"dbeta", dbeta}},
                         {{"dy", &dy}, {"x", &x}, {"mean", &mean}, {"rstd", &rstd},
                          {"gamma", gamma}});
          if (D == 0 || (!pdx && !pdg && !pdb)) return;
          const size_t bytes = fk_cuda::layer_norm_workspace_bytes(rows, D);
          DeviceArray ws({static_cast<int64_t>((bytes + 3) / 4)}, DType::Float32);
          fk_cuda::layer_norm_backward(pdx, pdg, pdb, pdy, px, pm, pr, pg, rows, D, rms_scaling,
                                       ws.data(), fk_cuda::stream());
        },
        py::arg("dx").none(true), py::arg("dgamma").none(true), py::arg("dbeta").none(true),
        py::arg("dy"), py::arg("x"), py::arg("mean"), py::arg("rstd"),
        py::arg("gamma").none(true), py::arg("rows"), py::arg("D"),
        py::arg("rms_scaling") = false,
        "Layer norm backward: dx, dgamma, dbeta (each optional) from dy and the saved state.");
}
