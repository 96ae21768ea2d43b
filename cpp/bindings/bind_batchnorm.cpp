// bind_batchnorm.cpp: Python bindings of the batch-norm kernels (see fkeras/kernels.h).
// Buffers are checked by element count against the (outer, C, inner) view, so an (N, H, W, C)
// array passes as (N*H*W, C, 1) without a reshape.
#include <cmath>

#include "check.h"
#include "fkeras/kernels.h"

namespace {

void check_epsilon(const char* kernel, float epsilon) {
  if (!(epsilon >= 0.f) || !std::isfinite(epsilon))
    throw py::value_error(std::string(kernel) + ": argument 'epsilon' must be finite and >= 0, "
                          "received " + std::to_string(epsilon));
}

// The inference kernels (batch norm, batch norm + ReLU): the same arguments and checks.
using InferKernel = void (*)(float*, const float*, const float*, const float*, const float*,
                             const float*, int64_t, int64_t, int64_t, float);

void bind_forward_infer(py::module_& m, const char* name, InferKernel kernel, const char* doc) {
  m.def(name, [name, kernel](py::object y, py::object x, py::object mean, py::object var,
                             py::object gamma, py::object beta, int64_t outer, int64_t C,
                             int64_t inner, float epsilon) {
    const char* k = name;
    fkb::check_sizes(k, {{"outer", outer}, {"C", C}, {"inner", inner}});
    check_epsilon(k, epsilon);
    float* py_ = fkb::out_f32(y, k, "y", {outer, C, inner});
    const float* px = fkb::in_f32(x, k, "x", {outer, C, inner});
    const float* pmean = fkb::in_f32(mean, k, "mean", {C});
    const float* pvar = fkb::in_f32(var, k, "var", {C});
    const float* pg = fkb::in_f32(gamma, k, "gamma", {C}, true);
    const float* pb = fkb::in_f32(beta, k, "beta", {C}, true);
    if (!fkb::check_outputs(k, {{"y", y}}, {{"x", x}, {"mean", mean}, {"var", var},
                                 {"gamma", gamma}, {"beta", beta}})) return;
    py::gil_scoped_release nogil;
    kernel(py_, px, pmean, pvar, pg, pb, outer, C, inner, epsilon);
  }, py::arg("y"), py::arg("x"), py::arg("mean"), py::arg("var"), py::arg("gamma"),
     py::arg("beta"), py::arg("outer"), py::arg("C"), py::arg("inner"), py::arg("epsilon"), doc);
}

void check_pool(const char* kernel, int64_t pool_h, int64_t pool_w) {
  if (pool_h < 1 || pool_w < 1 || pool_h > 128 || pool_w > 128 || pool_h * pool_w > 128)
    throw py::value_error(std::string(kernel) + ": arguments 'pool_h', 'pool_w' must be >= 1 "
                          "with pool_h * pool_w <= 128, received (" + std::to_string(pool_h) +
                          ", " + std::to_string(pool_w) + ")");
}

}  // namespace

void bind_batchnorm(py::module_& m) {
  m.def("batchnorm_forward_train", [](py::object y, py::object var, py::object mean,
                                      py::object inv_std, py::object x, py::object gamma,
                                      py::object beta, int64_t outer, int64_t C, int64_t inner,
                                      float epsilon) {
    const char* k = "batchnorm_forward_train";
    fkb::check_sizes(k, {{"outer", outer}, {"C", C}, {"inner", inner}});
    check_epsilon(k, epsilon);
    float* py_ = fkb::out_f32(y, k, "y", {outer, C, inner});
    float* pvar = fkb::out_f32(var, k, "var", {C});
    float* pmean = fkb::out_f32(mean, k, "mean", {C});
    float* pinv = fkb::out_f32(inv_std, k, "inv_std", {C});
    const float* px = fkb::in_f32(x, k, "x", {outer, C, inner});
    const float* pg = fkb::in_f32(gamma, k, "gamma", {C}, true);
    const float* pb = fkb::in_f32(beta, k, "beta", {C}, true);
    if (!fkb::check_outputs(k, {{"y", y}, {"var", var}, {"mean", mean}, {"inv_std", inv_std}},
                                 {{"x", x}, {"gamma", gamma}, {"beta", beta}})) return;
    py::gil_scoped_release nogil;
    fk::batchnorm_forward_train(py_, pvar, pmean, pinv, px, pg, pb, outer, C, inner, epsilon);
  }, py::arg("y"), py::arg("var"), py::arg("mean"), py::arg("inv_std"), py::arg("x"),
     py::arg("gamma"), py::arg("beta"), py::arg("outer"), py::arg("C"), py::arg("inner"),
     py::arg("epsilon"),
     "Training batch norm over (outer, C, inner): y, var (biased); saves mean, inv_std.");

  bind_forward_infer(m, "batchnorm_forward_infer", fk::batchnorm_forward_infer,
                     "Inference batch norm with the given mean and var.");

  m.def("batchnorm_backward", [](py::object dx, py::object dgamma, py::object dbeta,
                                 py::object dy, py::object x, py::object mean,
                                 py::object inv_std, py::object gamma, int64_t outer, int64_t C,
                                 int64_t inner) {
    const char* k = "batchnorm_backward";
    fkb::check_sizes(k, {{"outer", outer}, {"C", C}, {"inner", inner}});
    float* pdx = fkb::out_f32(dx, k, "dx", {outer, C, inner}, true);
    float* pdg = fkb::out_f32(dgamma, k, "dgamma", {C}, true);
    float* pdb = fkb::out_f32(dbeta, k, "dbeta", {C}, true);
    const float* pdy = fkb::in_f32(dy, k, "dy", {outer, C, inner});
    const float* px = fkb::in_f32(x, k, "x", {outer, C, inner});
    const float* pmean = fkb::in_f32(mean, k, "mean", {C});
    const float* pinv = fkb::in_f32(inv_std, k, "inv_std", {C});
    const float* pg = fkb::in_f32(gamma, k, "gamma", {C}, true);
    if (!fkb::check_outputs(k, {{"dx", dx}, {"dgamma", dgamma}, {"dbeta", dbeta}}, {{"dy", dy},
                                 {"x", x}, {"mean", mean}, {"inv_std", inv_std},
                                 {"gamma", gamma}})) return;
    py::gil_scoped_release nogil;
    fk::batchnorm_backward(pdx, pdg, pdb, pdy, px, pmean, pinv, pg, outer, C, inner);
  }, py::arg("dx"), py::arg("dgamma"), py::arg("dbeta"), py::arg("dy"), py::arg("x"),
     py::arg("mean"), py::arg("inv_std"), py::arg("gamma"), py::arg("outer"), py::arg("C"),
     py::arg("inner"),
     "Batch norm backward: dx, dgamma, dbeta (each optional) from dy and the saved state.");
  m.def("batchnorm_relu_forward_train", [](py::object y, py::object var, py::object mean,
                                           py::object inv_std, py::object scale,
                                           py::object shift, py::object x, py::object gamma,
                                           py::object beta, int64_t outer, int64_t C,
                                           int64_t inner, float epsilon) {
    const char* k = "batchnorm_relu_forward_train";
    fkb::check_sizes(k, {{"outer", outer}, {"C", C}, {"inner", inner}});
    check_epsilon(k, epsilon);
    float* py_ = fkb::out_f32(y, k, "y", {outer, C, inner});
    float* pvar = fkb::out_f32(var, k, "var", {C});
    float* pmean = fkb::out_f32(mean, k, "mean", {C});
    float* pinv = fkb::out_f32(inv_std, k, "inv_std", {C});
    float* pscale = fkb::out_f32(scale, k, "scale", {C});
    float* pshift = fkb::out_f32(shift, k, "shift", {C});
    const float* px = fkb::in_f32(x, k, "x", {outer, C, inner});
    const float* pg = fkb::in_f32(gamma, k, "gamma", {C}, true);
    const float* pb = fkb::in_f32(beta, k, "beta", {C}, true);
    if (!fkb::check_outputs(k, {{"y", y}, {"var", var}, {"mean", mean}, {"inv_std", inv_std},
                                 {"scale", scale}, {"shift", shift}},
                            {{"x", x}, {"gamma", gamma}, {"beta", beta}})) return;
    py::gil_scoped_release nogil;
    fk::batchnorm_relu_forward_train(py_, pvar, pmean, pinv, pscale, pshift, px, pg, pb, outer,
                                     C, inner, epsilon);
  }, py::arg("y"), py::arg("var"), py::arg("mean"), py::arg("inv_std"), py::arg("scale"),
     py::arg("shift"), py::arg("x"), py::arg("gamma"), py::arg("beta"), py::arg("outer"),
     py::arg("C"), py::arg("inner"), py::arg("epsilon"),
     "Training batch norm + ReLU: y = max(bn(x), 0), var; saves mean, inv_std, scale, shift.");

  bind_forward_infer(m, "batchnorm_relu_forward_infer", fk::batchnorm_relu_forward_infer,
                     "Inference batch norm + ReLU with the given mean and var.");

  m.def("batchnorm_relu_backward", [](py::object dx, py::object dgamma, py::object dbeta,
                                      py::object dy, py::object x, py::object mean,
                                      py::object inv_std, py::object scale, py::object shift,
                                      py::object gamma, int64_t outer, int64_t C,
                                      int64_t inner) {
    const char* k = "batchnorm_relu_backward";
    fkb::check_sizes(k, {{"outer", outer}, {"C", C}, {"inner", inner}});
    float* pdx = fkb::out_f32(dx, k, "dx", {outer, C, inner}, true);
    float* pdg = fkb::out_f32(dgamma, k, "dgamma", {C}, true);
    float* pdb = fkb::out_f32(dbeta, k, "dbeta", {C}, true);
    const float* pdy = fkb::in_f32(dy, k, "dy", {outer, C, inner});
    const float* px = fkb::in_f32(x, k, "x", {outer, C, inner});
    const float* pmean = fkb::in_f32(mean, k, "mean", {C});
    const float* pinv = fkb::in_f32(inv_std, k, "inv_std", {C});
    const float* pscale = fkb::in_f32(scale, k, "scale", {C});
    const float* pshift = fkb::in_f32(shift, k, "shift", {C});
    const float* pg = fkb::in_f32(gamma, k, "gamma", {C}, true);
    if (!fkb::check_outputs(k, {{"dx", dx}, {"dgamma", dgamma}, {"dbeta", dbeta}},
                            {{"dy", dy}, {"x", x}, {"mean", mean}, {"inv_std", inv_std},
                             {"scale", scale}, {"shift", shift}, {"gamma", gamma}})) return;
    py::gil_scoped_release nogil;
    fk::batchnorm_relu_backward(pdx, pdg, pdb, pdy, px, pmean, pinv, pscale, pshift, pg, outer,
                                C, inner);
  }, py::arg("dx"), py::arg("dgamma"), py::arg("dbeta"), py::arg("dy"), py::arg("x"),
     py::arg("mean"), py::arg("inv_std"), py::arg("scale"), py::arg("shift"), py::arg("gamma"),
     py::arg("outer"), py::arg("C"), py::arg("inner"),
     "Batch norm + ReLU backward: dx, dgamma, dbeta (each optional); the ReLU mask is "
     "recomputed from x, mean, scale and shift.");
  m.def("batchnorm_relu_maxpool_forward_train", [](py::object y, py::object positions,
                                                   py::object var, py::object mean,
                                                   py::object inv_std, py::object scale,
                                                   py::object shift, py::object x,
                                                   py::object gamma, py::object beta, int64_t N,
                                                   int64_t H, int64_t W, int64_t C,
                                                   int64_t pool_h, int64_t pool_w,
                                                   float epsilon) {
    const char* k = "batchnorm_relu_maxpool_forward_train";
    fkb::check_sizes(k, {{"N", N}, {"H", H}, {"W", W}, {"C", C}});
    check_pool(k, pool_h, pool_w);
    check_epsilon(k, epsilon);
    const int64_t Pp = H / pool_h, Qp = W / pool_w;
    float* py_ = fkb::out_f32(y, k, "y", {N, Pp, Qp, C});
    int8_t* pi = fkb::out_i8(positions, k, "positions", {N, Pp, Qp, C});
    float* pvar = fkb::out_f32(var, k, "var", {C});
    float* pmean = fkb::out_f32(mean, k, "mean", {C});
    float* pinv = fkb::out_f32(inv_std, k, "inv_std", {C});
    float* pscale = fkb::out_f32(scale, k, "scale", {C});
    float* pshift = fkb::out_f32(shift, k, "shift", {C});
    const float* px = fkb::in_f32(x, k, "x", {N, H, W, C});
    const float* pg = fkb::in_f32(gamma, k, "gamma", {C}, true);
    const float* pb = fkb::in_f32(beta, k, "beta", {C}, true);
    if (!fkb::check_outputs(k, {{"y", y}, {"positions", positions}, {"var", var}, {"mean", mean},
                                 {"inv_std", inv_std}, {"scale", scale}, {"shift", shift}},
                            {{"x", x}, {"gamma", gamma}, {"beta", beta}})) return;
    py::gil_scoped_release nogil;
    fk::batchnorm_relu_maxpool_forward_train(py_, pi, pvar, pmean, pinv, pscale, pshift, px, pg,
                                             pb, N, H, W, C, pool_h, pool_w, epsilon);
  }, py::arg("y"), py::arg("positions"), py::arg("var"), py::arg("mean"), py::arg("inv_std"),
     py::arg("scale"), py::arg("shift"), py::arg("x"), py::arg("gamma"), py::arg("beta"),
     py::arg("N"), py::arg("H"), py::arg("W"), py::arg("C"), py::arg("pool_h"),
     py::arg("pool_w"), py::arg("epsilon"),
     "Training batch norm + ReLU + 'valid' max pool (strides == pool), x (N, H, W, C): y and "
     "positions (N, H // pool_h, W // pool_w, C; int8, each maximum's place in its window), "
     "var; saves mean, inv_std, scale, shift.");

  m.def("batchnorm_relu_maxpool_backward", [](py::object dx, py::object dgamma,
                                              py::object dbeta, py::object dy,
                                              py::object positions, py::object x,
                                              py::object mean,
                                              py::object inv_std, py::object scale,
                                              py::object shift, py::object gamma, int64_t N,
                                              int64_t H, int64_t W, int64_t C, int64_t pool_h,
                                              int64_t pool_w) {
    const char* k = "batchnorm_relu_maxpool_backward";
    fkb::check_sizes(k, {{"N", N}, {"H", H}, {"W", W}, {"C", C}});
    check_pool(k, pool_h, pool_w);
    const int64_t Pp = H / pool_h, Qp = W / pool_w;
    float* pdx = fkb::out_f32(dx, k, "dx", {N, H, W, C}, true);
    float* pdg = fkb::out_f32(dgamma, k, "dgamma", {C}, true);
    float* pdb = fkb::out_f32(dbeta, k, "dbeta", {C}, true);
    const float* pdy = fkb::in_f32(dy, k, "dy", {N, Pp, Qp, C});
    const int8_t* pi = fkb::in_i8(positions, k, "positions", {N, Pp, Qp, C});
    const float* px = fkb::in_f32(x, k, "x", {N, H, W, C});
    const float* pmean = fkb::in_f32(mean, k, "mean", {C});
    const float* pinv = fkb::in_f32(inv_std, k, "inv_std", {C});
    const float* pscale = fkb::in_f32(scale, k, "scale", {C});
    const float* pshift = fkb::in_f32(shift, k, "shift", {C});
    const float* pg = fkb::in_f32(gamma, k, "gamma", {C}, true);
    if (!fkb::check_outputs(k, {{"dx", dx}, {"dgamma", dgamma}, {"dbeta", dbeta}},
                            {{"dy", dy}, {"positions", positions}, {"x", x}, {"mean", mean},
                             {"inv_std", inv_std}, {"scale", scale}, {"shift", shift},
                             {"gamma", gamma}})) return;
    py::gil_scoped_release nogil;
    fk::batchnorm_relu_maxpool_backward(pdx, pdg, pdb, pdy, pi, px, pmean, pinv, pscale, pshift,
                                        pg, N, H, W, C, pool_h, pool_w);
  }, py::arg("dx"), py::arg("dgamma"), py::arg("dbeta"), py::arg("dy"), py::arg("positions"),
     py::arg("x"), py::arg("mean"), py::arg("inv_std"), py::arg("scale"), py::arg("shift"),
     py::arg("gamma"), py::arg("N"), py::arg("H"), py::arg("W"), py::arg("C"), py::arg("pool_h"),
     py::arg("pool_w"),
     "Batch norm + ReLU + max pool backward: dx, dgamma, dbeta (each optional) from the pooled "
     "dy and positions; equal to batchnorm_relu_backward of maxpool2d_backward's cotangent.");
}
