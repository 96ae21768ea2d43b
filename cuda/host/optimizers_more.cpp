// optimizers_more.cpp (host): the per-element math of the CUDA Lion, Ftrl, Lamb, Adafactor, Muon
// and ScheduleFreeAdamW updates (fk_cuda/optimizer_more_math.h) compiled by the host compiler
// into fkeras._C_cuda_host, for tests/cuda/test_optimizers_more_math_host.py. Elementwise steps
// are vectorised over NumPy float32 arrays; Lamb and Adafactor run the GPU's two passes with its
// reduction structure (reduce_blocks(n) blocks of kReduceThreads grid-striding threads, a halving
// tree per block, block partials added in order). Inputs are copied; results are new arrays.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "fk_cuda/binders.h"
#include "fk_cuda/optimizer_more_math.h"

namespace py = pybind11;
namespace K = fk_cuda;

namespace {

using F32 = py::array_t<float, py::array::c_style | py::array::forcecast>;

F32 copy(const F32& a) {
  F32 out(a.size());
  std::copy(a.data(), a.data() + a.size(), out.mutable_data());
  return out;
}

void same_size(const char* fn, const char* name, const F32& a, const F32& ref) {
  if (a.size() != ref.size())
    throw py::value_error(std::string(fn) + ": argument '" + name + "' must have " +
                          std::to_string(ref.size()) + " elements, received " +
                          std::to_string(a.size()));
}

// The GPU's pass-1 reduction: op(i, s0, s1) per element, grouped as the kernel's threads.
template <class Op>
void reduce_emulated(int64_t n, Op op, double* s0, double* s1) {
  const int64_t G = K::reduce_blocks(n), T = K::kReduceThreads;
  *s0 = *s1 = 0.0;
  std::vector<double> a(static_cast<size_t>(T)), b(static_cast<size_t>(T));
  for (int64_t blk = 0; blk < G; ++blk) {
    for (int64_t t = 0; t < T; ++t) {
      double x = 0.0, y = 0.0;
      for (int64_t i = blk * T + t; i < n; i += G * T) op(i, x, y);
      a[static_cast<size_t>(t)] = x;
      b[static_cast<size_t>(t)] = y;
    }
    for (int64_t h = T / 2; h > 0; h >>= 1)
      for (int64_t t = 0; t < h; ++t) {
        a[static_cast<size_t>(t)] += a[static_cast<size_t>(t + h)];
        b[static_cast<size_t>(t)] += b[static_cast<size_t>(t + h)];
      }
    *s0 += a[0];
    *s1 += b[0];
  }
}

py::tuple lamb(const F32& param, const F32& m, const F32& v, const F32& grad, float lr,
               float beta1, float beta2, float eps, int64_t step, float wd) {
  const char* fn = "lamb_update_emulated";
  same_size(fn, "m", m, param);
  same_size(fn, "v", v, param);
  same_size(fn, "grad", grad, param);
  const K::LambArgs a = K::make_lamb_args(lr, beta1, beta2, eps, step, wd);
  F32 p = copy(param), mm = copy(m), vv = copy(v);
  float *pp = p.mutable_data(), *pm = mm.mutable_data(), *pv = vv.mutable_data();
  const int64_t n = param.size();
  if (n == 0) return py::make_tuple(p, mm, vv);
  double sw, su;
  reduce_emulated(n, [&](int64_t i, double& x, double& y) {
    K::lamb_moments(pp[i], pm[i], pv[i], grad.data()[i], a, x, y);
  }, &sw, &su);
  const float coef = K::lamb_coef(sw, su, a.lr);
  for (int64_t i = 0; i < n; ++i) K::lamb_apply(pp[i], pm[i], pv[i], coef, a);
  return py::make_tuple(p, mm, vv);
}

py::tuple adafactor(const F32& param, const F32& v, const F32& grad, float lr,
                    float beta_2_decay, float eps1, float eps2, float clip, int64_t step,
                    bool factored, float wd) {
  const char* fn = "adafactor_update_emulated";
  same_size(fn, "v", v, param);
  same_size(fn, "grad", grad, param);
  const K::AdafactorArgs a =
      K::make_adafactor_args(lr, beta_2_decay, eps1, eps2, clip, step, factored, wd);
  F32 p = copy(param), vv = copy(v);
  float *pp = p.mutable_data(), *pv = vv.mutable_data();
  const int64_t n = param.size();
  if (n == 0) return py::make_tuple(p, vv);
  double sp, su;
  reduce_emulated(n, [&](int64_t i, double& x, double& y) {
    K::adafactor_moments(pp[i], pv[i], grad.data()[i], a, x, y);
  }, &sp, &su);
  float alpha, denom;
  K::adafactor_scalars(sp, su, n, a, &alpha, &denom);
  for (int64_t i = 0; i < n; ++i) K::adafactor_apply(pp[i], pv[i], grad.data()[i], alpha, denom);
  return py::make_tuple(p, vv);
}

}  // namespace

FK_BIND_FAMILY(optimizers_more) {
  m.def("opt_reduce_blocks", &K::reduce_blocks, py::arg("n"));
  m.def("lion_step", [](const F32& param, const F32& mo, const F32& grad, float lr, float beta1,
                        float beta2, float wd) {
    same_size("lion_step", "m", mo, param);
    same_size("lion_step", "grad", grad, param);
    const K::LionArgs a = K::make_lion_args(lr, beta1, beta2, wd);
    F32 p = copy(param), mm = copy(mo);
    for (py::ssize_t i = 0; i < param.size(); ++i)
      K::lion_step(p.mutable_data()[i], mm.mutable_data()[i], grad.data()[i], a);
    return py::make_tuple(p, mm);
  }, py::arg("param"), py::arg("m"), py::arg("grad"), py::arg("lr"), py::arg("beta1"),
     py::arg("beta2"), py::arg("weight_decay"));
  m.def("ftrl_step", [](const F32& param, const F32& acc, const F32& lin, const F32& grad,
                        float lr, float power, float l1, float l2, float shrink, float beta,
                        float wd) {
    same_size("ftrl_step", "accumulator", acc, param);
    same_size("ftrl_step", "linear", lin, param);
    same_size("ftrl_step", "grad", grad, param);
    const K::FtrlArgs a = K::make_ftrl_args(lr, power, l1, l2, shrink, beta, wd);
    F32 p = copy(param), aa = copy(acc), ll = copy(lin);
    for (py::ssize_t i = 0; i < param.size(); ++i)
      K::ftrl_step(p.mutable_data()[i], aa.mutable_data()[i], ll.mutable_data()[i],
                   grad.data()[i], a);
    return py::make_tuple(p, aa, ll);
  }, py::arg("param"), py::arg("accumulator"), py::arg("linear"), py::arg("grad"), py::arg("lr"),
     py::arg("learning_rate_power"), py::arg("l1"), py::arg("l2"), py::arg("l2_shrinkage"),
     py::arg("beta"), py::arg("weight_decay"));
  m.def("lamb_update_emulated", &lamb, py::arg("param"), py::arg("m"), py::arg("v"),
        py::arg("grad"), py::arg("lr"), py::arg("beta1"), py::arg("beta2"), py::arg("epsilon"),
        py::arg("step"), py::arg("weight_decay"),
        "The GPU lamb_update's two passes and reduction on the CPU: (param, m, v).");
  m.def("adafactor_update_emulated", &adafactor, py::arg("param"), py::arg("v"), py::arg("grad"),
        py::arg("lr"), py::arg("beta_2_decay"), py::arg("epsilon_1"), py::arg("epsilon_2"),
        py::arg("clip_threshold"), py::arg("step"), py::arg("factored"), py::arg("weight_decay"),
        "The GPU adafactor_update's two passes and reduction on the CPU: (param, v).");
  m.def("muon_momentum_step", [](const F32& mo, const F32& grad, float momentum, bool nesterov) {
    same_size("muon_momentum_step", "grad", grad, mo);
    const K::MuonArgs a = K::make_muon_momentum_args(momentum, nesterov);
    F32 mm = copy(mo), out(mo.size());
    for (py::ssize_t i = 0; i < mo.size(); ++i)
      K::muon_momentum_step(mm.mutable_data()[i], out.mutable_data()[i], grad.data()[i], a);
    return py::make_tuple(mm, out);
  }, py::arg("m"), py::arg("grad"), py::arg("momentum"), py::arg("nesterov"));
  m.def("muon_step", [](const F32& param, const F32& ortho, float lr, float scale, float wd) {
    same_size("muon_step", "ortho", ortho, param);
    const K::MuonArgs a = K::make_muon_args(lr, scale, wd);
    F32 p = copy(param);
    for (py::ssize_t i = 0; i < param.size(); ++i)
      K::muon_step(p.mutable_data()[i], ortho.data()[i], a);
    return p;
  }, py::arg("param"), py::arg("ortho"), py::arg("lr"), py::arg("scale"),
     py::arg("weight_decay"));
  m.def("sfadamw_step", [](const F32& param, const F32& z, const F32& v, const F32& grad,
                           float lr, float beta1, float beta2, float eps, int64_t step,
                           int64_t warmup, float wd) {
    same_size("sfadamw_step", "z", z, param);
    same_size("sfadamw_step", "v", v, param);
    same_size("sfadamw_step", "grad", grad, param);
    const K::SfAdamwArgs a = K::make_sfadamw_args(lr, beta1, beta2, eps, step, warmup, wd);
    F32 p = copy(param), zz = copy(z), vv = copy(v);
    for (py::ssize_t i = 0; i < param.size(); ++i)
      K::sfadamw_step(p.mutable_data()[i], zz.mutable_data()[i], vv.mutable_data()[i],
                      grad.data()[i], a);
    return py::make_tuple(p, zz, vv);
  }, py::arg("param"), py::arg("z"), py::arg("v"), py::arg("grad"), py::arg("lr"),
     py::arg("beta1"), py::arg("beta2"), py::arg("epsilon"), py::arg("step"),
     py::arg("warmup_steps"), py::arg("weight_decay"));
}
