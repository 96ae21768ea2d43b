// pointwise.cpp: fkeras._C_cuda_host bindings of the pointwise family's per-element math
// (activation_math.h, loss_math.h, optimizer_math.h, dropout_math.h), vectorised over NumPy
// float32 arrays so that tests compare the exact functions the CUDA kernels run with NumPy
// float64 and with the CPU kernels of fkeras._C. Inputs are copied to new float32 arrays;
// results are new arrays (optimizer steps return the updated param and slots).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>

#include "fk_cuda/activation_math.h"
#include "fk_cuda/binders.h"
#include "fk_cuda/dropout_math.h"
#include "fk_cuda/loss_math.h"
#include "fk_cuda/optimizer_math.h"

namespace py = pybind11;

namespace {

using F32 = py::array_t<float, py::array::c_style | py::array::forcecast>;

F32 like(const F32& a) {
  std::vector<py::ssize_t> shape(a.shape(), a.shape() + a.ndim());
  return F32(shape);
}

void same_size(const char* fn, const char* name, const F32& a, const F32& ref) {
  if (a.size() != ref.size())
    throw py::value_error(std::string(fn) + ": argument '" + name + "' must have " +
                          std::to_string(ref.size()) + " elements, received " +
                          std::to_string(a.size()));
}

void check_act(const char* fn, int64_t act) {
  if (act < 0 || act >= fk_cuda::kActCount)
    throw py::value_error(std::string(fn) + ": argument 'activation' must be a code in [0, " +
                          std::to_string(fk_cuda::kActCount) + "), received " +
                          std::to_string(act));
}

// Applies f(i) -> float over a new array shaped like ref.
template <typename F>
F32 map_new(const F32& ref, F f) {
  F32 out = like(ref);
  float* o = out.mutable_data();
  for (py::ssize_t i = 0; i < ref.size(); ++i) o[i] = f(i);
  return out;
}

F32 copy(const F32& a) {
  F32 out = like(a);
  std::copy(a.data(), a.data() + a.size(), out.mutable_data());
  return out;
}

}  // namespace

FK_BIND_FAMILY(pointwise) {
  m.def("act_forward", [](F32 x, int64_t act, float alpha) {
    check_act("act_forward", act);
    const float* px = x.data();
    return map_new(x, [&](py::ssize_t i) { return fk_cuda::act_forward(act, px[i], alpha); });
  }, py::arg("x"), py::arg("activation"), py::arg("alpha") = 0.0f,
     "y = act(x), the CUDA activation kernel's per-element math.");

  m.def("act_backward", [](F32 dy, F32 x, F32 y, int64_t act, float alpha) {
    check_act("act_backward", act);
    same_size("act_backward", "x", x, dy);
    same_size("act_backward", "y", y, dy);
    const float *pd = dy.data(), *px = x.data(), *py_ = y.data();
    return map_new(dy, [&](py::ssize_t i) {
      return fk_cuda::act_backward(act, pd[i], px[i], py_[i], alpha);
    });
  }, py::arg("dy"), py::arg("x"), py::arg("y"), py::arg("activation"), py::arg("alpha") = 0.0f,
     "dx = dy * act'(x) (the derivative read from x or y as the CPU kernel).");

  m.def("dropout_mask", [](int64_t n, float rate, int64_t seed, int64_t first) {
    if (!(rate >= 0.0f && rate <= 1.0f))
      throw py::value_error("dropout_mask: argument 'rate' must be in [0, 1], received " +
                            std::to_string(rate));
    if (n < 0 || first < 0)
      throw py::value_error("dropout_mask: 'n' and 'first' must be >= 0, received n=" +
                            std::to_string(n) + ", first=" + std::to_string(first));
    const fk_cuda::DropoutParams p = fk_cuda::dropout_params(rate, seed);
    F32 out(std::vector<py::ssize_t>{static_cast<py::ssize_t>(n)});
    float* o = out.mutable_data();
    for (int64_t i = 0; i < n; ++i)
      o[i] = fk_cuda::dropout_mask_value(static_cast<uint64_t>(first + i), p);
    return out;
  }, py::arg("n"), py::arg("rate"), py::arg("seed"), py::arg("first") = 0,
     "The dropout mask of elements [first, first + n): scale where kept, 0 where dropped.");

  m.def("sigmoid_ce_term", [](F32 x, F32 z) {
    same_size("sigmoid_ce_term", "labels", z, x);
    const float *px = x.data(), *pz = z.data();
    return map_new(x, [&](py::ssize_t i) { return fk_cuda::sigmoid_ce_term(px[i], pz[i]); });
  }, py::arg("logits"), py::arg("labels"), "Sigmoid crossentropy from logits, per element.");

  m.def("sigmoid_ce_grad", [](F32 dloss, F32 x, F32 z) {
    same_size("sigmoid_ce_grad", "logits", x, dloss);
    same_size("sigmoid_ce_grad", "labels", z, dloss);
    const float *pd = dloss.data(), *px = x.data(), *pz = z.data();
    return map_new(x, [&](py::ssize_t i) {
      return fk_cuda::sigmoid_ce_grad(pd[i], px[i], pz[i]);
    });
  }, py::arg("dloss"), py::arg("logits"), py::arg("labels"),
     "dloss * (sigmoid(x) - z), per element.");

  m.def("softmax_exp_term", [](F32 x, float m) {
    const float* px = x.data();
    return map_new(x, [&](py::ssize_t i) { return fk_cuda::softmax_exp_term(px[i], m); });
  }, py::arg("x"), py::arg("row_max"), "exp(x - m) for x <= m.");

  m.def("log_softmax_grad_term", [](F32 dy, F32 y, float sum) {
    same_size("log_softmax_grad_term", "y", y, dy);
    const float *pd = dy.data(), *py_ = y.data();
    return map_new(dy, [&](py::ssize_t i) {
      return fk_cuda::log_softmax_grad_term(pd[i], py_[i], sum);
    });
  }, py::arg("dy"), py::arg("y"), py::arg("sum"), "dy - exp(y) * sum.");

  m.def("sgd_step", [](F32 p, F32 vel, F32 g, float lr, float momentum, bool nesterov,
                       float wd) {
    same_size("sgd_step", "velocity", vel, p);
    same_size("sgd_step", "grad", g, p);
    F32 po = copy(p), vo = copy(vel);
    float *pp = po.mutable_data(), *pv = vo.mutable_data();
    const auto a = fk_cuda::make_sgd_args(lr, momentum, nesterov, wd);
    for (py::ssize_t i = 0; i < p.size(); ++i) fk_cuda::sgd_step(pp[i], pv[i], g.data()[i], a);
    return py::make_tuple(po, vo);
  }, py::arg("param"), py::arg("velocity"), py::arg("grad"), py::arg("lr"), py::arg("momentum"),
     py::arg("nesterov"), py::arg("weight_decay"), "One SGD step: (param, velocity).");

  m.def("adam_step", [](F32 p, F32 mo, F32 v, F32 vh, F32 g, float lr, float b1, float b2,
                        float eps, int64_t step, float wd, bool amsgrad) {
    for (auto pr : {std::make_pair("m", &mo), std::make_pair("v", &v),
                    std::make_pair("vhat", &vh), std::make_pair("grad", &g)})
      same_size("adam_step", pr.first, *pr.second, p);
    F32 po = copy(p), mo2 = copy(mo), vo = copy(v), vho = copy(vh);
    float *pp = po.mutable_data(), *pm = mo2.mutable_data(), *pv = vo.mutable_data(),
          *pvh = vho.mutable_data();
    const auto a = fk_cuda::make_adam_args(lr, b1, b2, eps, step, wd, amsgrad);
    for (py::ssize_t i = 0; i < p.size(); ++i)
      fk_cuda::adam_step(pp[i], pm[i], pv[i], pvh[i], g.data()[i], a);
    return py::make_tuple(po, mo2, vo, vho);
  }, py::arg("param"), py::arg("m"), py::arg("v"), py::arg("vhat"), py::arg("grad"),
     py::arg("lr"), py::arg("beta1"), py::arg("beta2"), py::arg("epsilon"), py::arg("step"),
     py::arg("weight_decay"), py::arg("amsgrad"), "One Adam step: (param, m, v, vhat).");

  m.def("adamax_step", [](F32 p, F32 mo, F32 u, F32 g, float lr, float b1, float b2, float eps,
                          int64_t step, float wd) {
    same_size("adamax_step", "m", mo, p);
    same_size("adamax_step", "u", u, p);
    same_size("adamax_step", "grad", g, p);
    F32 po = copy(p), mo2 = copy(mo), uo = copy(u);
    float *pp = po.mutable_data(), *pm = mo2.mutable_data(), *pu = uo.mutable_data();
    const auto a = fk_cuda::make_adamax_args(lr, b1, b2, eps, step, wd);
    for (py::ssize_t i = 0; i < p.size(); ++i)
      fk_cuda::adamax_step(pp[i], pm[i], pu[i], g.data()[i], a);
    return py::make_tuple(po, mo2, uo);
  }, py::arg("param"), py::arg("m"), py::arg("u"), py::arg("grad"), py::arg("lr"),
     py::arg("beta1"), py::arg("beta2"), py::arg("epsilon"), py::arg("step"),
     py::arg("weight_decay"), "One Adamax step: (param, m, u).");

  m.def("nadam_step", [](F32 p, F32 mo, F32 v, F32 g, float lr, float b1, float b2, float eps,
                         int64_t step, float u_t, float u_t1, float u_prod, float wd) {
    same_size("nadam_step", "m", mo, p);
    same_size("nadam_step", "v", v, p);
    same_size("nadam_step", "grad", g, p);
    F32 po = copy(p), mo2 = copy(mo), vo = copy(v);
    float *pp = po.mutable_data(), *pm = mo2.mutable_data(), *pv = vo.mutable_data();
    const auto a = fk_cuda::make_nadam_args(lr, b1, b2, eps, step, u_t, u_t1, u_prod, wd);
    for (py::ssize_t i = 0; i < p.size(); ++i)
      fk_cuda::nadam_step(pp[i], pm[i], pv[i], g.data()[i], a);
    return py::make_tuple(po, mo2, vo);
  }, py::arg("param"), py::arg("m"), py::arg("v"), py::arg("grad"), py::arg("lr"),
     py::arg("beta1"), py::arg("beta2"), py::arg("epsilon"), py::arg("step"), py::arg("u_t"),
     py::arg("u_t1"), py::arg("u_product_t"), py::arg("weight_decay"),
     "One Nadam step: (param, m, v).");

  m.def("rmsprop_step", [](F32 p, F32 vel, F32 mom, F32 avg, F32 g, float lr, float rho,
                           float momentum, float eps, bool centered, float wd) {
    for (auto pr : {std::make_pair("velocity", &vel), std::make_pair("momentum_buf", &mom),
                    std::make_pair("average_grad", &avg), std::make_pair("grad", &g)})
      same_size("rmsprop_step", pr.first, *pr.second, p);
    F32 po = copy(p), vo = copy(vel), mo = copy(mom), ao = copy(avg);
    float *pp = po.mutable_data(), *pv = vo.mutable_data(), *pm = mo.mutable_data(),
          *pa = ao.mutable_data();
    const auto a = fk_cuda::make_rmsprop_args(lr, rho, momentum, eps, centered, wd);
    for (py::ssize_t i = 0; i < p.size(); ++i)
      fk_cuda::rmsprop_step(pp[i], pv[i], pm[i], pa[i], g.data()[i], a);
    return py::make_tuple(po, vo, mo, ao);
  }, py::arg("param"), py::arg("velocity"), py::arg("momentum_buf"), py::arg("average_grad"),
     py::arg("grad"), py::arg("lr"), py::arg("rho"), py::arg("momentum"), py::arg("epsilon"),
     py::arg("centered"), py::arg("weight_decay"),
     "One RMSprop step: (param, velocity, momentum_buf, average_grad).");

  m.def("adagrad_step", [](F32 p, F32 acc, F32 g, float lr, float eps, float wd) {
    same_size("adagrad_step", "accumulator", acc, p);
    same_size("adagrad_step", "grad", g, p);
    F32 po = copy(p), ao = copy(acc);
    float *pp = po.mutable_data(), *pa = ao.mutable_data();
    const auto a = fk_cuda::make_adagrad_args(lr, eps, wd);
    for (py::ssize_t i = 0; i < p.size(); ++i) fk_cuda::adagrad_step(pp[i], pa[i], g.data()[i], a);
    return py::make_tuple(po, ao);
  }, py::arg("param"), py::arg("accumulator"), py::arg("grad"), py::arg("lr"),
     py::arg("epsilon"), py::arg("weight_decay"), "One Adagrad step: (param, accumulator).");

  m.def("adadelta_step", [](F32 p, F32 ag, F32 ad, F32 g, float lr, float rho, float eps,
                            float wd) {
    same_size("adadelta_step", "accumulated_grad", ag, p);
    same_size("adadelta_step", "accumulated_delta", ad, p);
    same_size("adadelta_step", "grad", g, p);
    F32 po = copy(p), ago = copy(ag), ado = copy(ad);
    float *pp = po.mutable_data(), *pg = ago.mutable_data(), *pd = ado.mutable_data();
    const auto a = fk_cuda::make_adadelta_args(lr, rho, eps, wd);
    for (py::ssize_t i = 0; i < p.size(); ++i)
      fk_cuda::adadelta_step(pp[i], pg[i], pd[i], g.data()[i], a);
    return py::make_tuple(po, ago, ado);
  }, py::arg("param"), py::arg("accumulated_grad"), py::arg("accumulated_delta"),
     py::arg("grad"), py::arg("lr"), py::arg("rho"), py::arg("epsilon"),
     py::arg("weight_decay"), "One Adadelta step: (param, accumulated_grad, accumulated_delta).");
}
