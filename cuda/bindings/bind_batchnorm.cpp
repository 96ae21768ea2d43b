// bind_batchnorm.cpp: fkeras._C_cuda's batchnorm_forward_train / _forward_infer / _backward,
// called exactly like fkeras._C's (outputs, saved state, inputs, sizes; DeviceArrays instead of
// NumPy arrays, None for an optional one). Arguments are checked before any launch: float32,
// element counts against the (outer, C, inner) view, epsilon, outputs distinct from inputs.
#include <pybind11/pybind11.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "../kernels/batchnorm.cuh"
#include "fk_cuda/bind_checks.h"
#include "fk_cuda/binders.h"
#include "fk_cuda/device_array.h"
#include "fk_cuda/runtime.h"

namespace py = pybind11;
using fk_cuda::DeviceArray;
using fk_cuda::DType;

namespace {

using fk_cuda::bind::Named;

int64_t view_size(const char* fn, int64_t outer, int64_t C, int64_t inner) {
  if (outer < 0 || C < 0 || inner < 0)
    throw py::value_error(std::string(fn) + ": sizes must be >= 0, received outer=" +
                          std::to_string(outer) + ", C=" + std::to_string(C) +
                          ", inner=" + std::to_string(inner));
  int64_t t;
  if (__builtin_mul_overflow(outer, C, &t) || __builtin_mul_overflow(t, inner, &t) ||
      t > (int64_t{1} << 60))
    throw py::value_error(std::string(fn) + ": outer * C * inner is too large");
  return t;
}

using fk_cuda::bind::check_distinct;
using fk_cuda::bind::f32;

void check_epsilon(const char* fn, float eps) {
  if (!(eps >= 0.f) || !std::isfinite(eps))
    throw py::value_error(std::string(fn) + ": argument 'epsilon' must be finite and >= 0, "
                          "received " + std::to_string(eps));
}

DeviceArray workspace(int64_t outer, int64_t C, int64_t inner) {
  const size_t bytes = fk_cuda::batchnorm_workspace_bytes(outer, C, inner);
  return DeviceArray({static_cast<int64_t>((bytes + 3) / 4)}, DType::Float32);
}

}  // namespace

FK_BIND_FAMILY(batchnorm) {
  m.def("batchnorm_forward_train",
        [](DeviceArray& y, DeviceArray& var, DeviceArray& mean, DeviceArray& inv_std,
           const DeviceArray& x, const DeviceArray* gamma, const DeviceArray* beta, int64_t outer,
           int64_t C, int64_t inner, float epsilon) {
          const char* k = "batchnorm_forward_train";
          const int64_t total = view_size(k, outer, C, inner);
          check_epsilon(k, epsilon);
          float* py_ = f32(&y, k, "y", total);
          float* pv = f32(&var, k, "var", C);
          float* pm = f32(&mean, k, "mean", C);
          float* pi = f32(&inv_std, k, "inv_std", C);
          const float* px = f32(&x, k, "x", total);
          const float* pg = f32(gamma, k, "gamma", C, true);
          const float* pb = f32(beta, k, "beta", C, true);
          check_distinct(k, {{"y", &y}, {"var", &var}, {"mean", &mean}, {"inv_std", &inv_std}},
                         {{"x", &x}, {"gamma", gamma}, {"beta", beta}});
          if (C == 0) return;
          DeviceArray ws = workspace(outer, C, inner);
          fk_cuda::batchnorm_forward_train(py_, pv, pm, pi, px, pg, pb, outer, C, inner, epsilon,
                                           ws.data(), fk_cuda::stream());
        },
        py::arg("y"), py::arg("var"), py::arg("mean"), py::arg("inv_std"), py::arg("x"),
        py::arg("gamma").none(true), py::arg("beta").none(true), py::arg("outer"), py::arg("C"),
        py::arg("inner"), py::arg("epsilon"),
        "Training batch norm over (outer, C, inner): y, var (biased); saves mean, inv_std.");

  m.def("batchnorm_forward_infer",
        [](DeviceArray& y, const DeviceArray& x, const DeviceArray& mean, const DeviceArray& var,
           const DeviceArray* gamma, const DeviceArray* beta, int64_t outer, int64_t C,
           int64_t inner, float epsilon) {
          const char* k = "batchnorm_forward_infer";
          const int64_t total = view_size(k, outer, C, inner);
          check_epsilon(k, epsilon);
          float* py_ = f32(&y, k, "y", total);
          const float* px = f32(&x, k, "x", total);
          const float* pm = f32(&mean, k, "mean", C);
          const float* pv = f32(&var, k, "var", C);
          const float* pg = f32(gamma, k, "gamma", C, true);
          const float* pb = f32(beta, k, "beta", C, true);
          check_distinct(k, {{"y", &y}}, {{"x", &x}, {"mean", &mean}, {"var", &var},
                                         {"gamma", gamma}, {"beta", beta}});
          if (total == 0) return;
          DeviceArray ws = workspace(outer, C, inner);
          fk_cuda::batchnorm_forward_infer(py_, px, pm, pv, pg, pb, outer, C, inner, epsilon,
                                           ws.data(), fk_cuda::stream());
        },
        py::arg("y"), py::arg("x"), py::arg("mean"), py::arg("var"), py::arg("gamma").none(true),
        py::arg("beta").none(true), py::arg("outer"), py::arg("C"), py::arg("inner"),
        py::arg("epsilon"), "Inference batch norm with the given mean and var.");

  m.def("batchnorm_backward",
        [](DeviceArray* dx, DeviceArray* dgamma, DeviceArray* dbeta, const DeviceArray& dy,
           const DeviceArray& x, const DeviceArray& mean, const DeviceArray& inv_std,
           const DeviceArray* gamma, int64_t outer, int64_t C, int64_t inner) {
          const char* k = "batchnorm_backward";
          const int64_t total = view_size(k, outer, C, inner);
          float* pdx = f32(dx, k, "dx", total, true);
          float* pdg = f32(dgamma, k, "dgamma", C, true);
          float* pdb = f32(dbeta, k, "dbeta", C, true);
          const float* pdy = f32(&dy, k, "dy", total);
          const float* px = f32(&x, k, "x", total);
          const float* pm = f32(&mean, k, "mean", C);
          const float* pi = f32(&inv_std, k, "inv_std", C);
          const float* pg = f32(gamma, k, "gamma", C, true);
          check_distinct(k, {{"dx", dx}, {"dgamma", dgamma}, {"dbeta", dbeta}},
                         {{"dy", &dy}, {"x", &x}, {"mean", &mean}, {"inv_std", &inv_std},
                          {"gamma", gamma}});
          if (C == 0) return;
          DeviceArray ws = workspace(outer, C, inner);
          fk_cuda::batchnorm_backward(pdx, pdg, pdb, pdy, px, pm, pi, pg, outer, C, inner,
                                      ws.data(), fk_cuda::stream());
        },
        py::arg("dx").none(true), py::arg("dgamma").none(true), py::arg("dbeta").none(true),
        py::arg("dy"), py::arg("x"), py::arg("mean"), py::arg("inv_std"),
        py::arg("gamma").none(true), py::arg("outer"), py::arg("C"), py::arg("inner"),
        "Batch norm backward: dx, dgamma, dbeta (each optional) from dy and the saved state.");
}
