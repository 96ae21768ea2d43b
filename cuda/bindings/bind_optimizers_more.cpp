// bind_optimizers_more.cpp: fkeras._C_cuda's lion_update, ftrl_update, lamb_update,
// adafactor_update, muon_momentum_update, muon_update and schedule_free_adamw_update, called
// exactly like fkeras._C's (same argument names and order, DeviceArrays in place of NumPy
// arrays). Checked before any launch: n >= 0, step >= 1, every buffer a float32 DeviceArray of
// n elements (any shape), no buffer passed twice. Launches go on fk_cuda::stream().
#include <pybind11/pybind11.h>

#include <string>
#include <utility>
#include <vector>

#include "../kernels/optimizers_more.cuh"
#include "fk_cuda/bind_checks.h"
#include "fk_cuda/binders.h"
#include "fk_cuda/device_array.h"
#include "fk_cuda/optimizer_more_math.h"
#include "fk_cuda/runtime.h"

namespace py = pybind11;
using fk_cuda::DeviceArray;
using fk_cuda::DType;

namespace {

using fk_cuda::bind::fail;

void check_n(const char* fn, int64_t n) {
  if (n < 0) fail(fn, "size 'n' must be >= 0, received " + std::to_string(n));
}

void check_step(const char* fn, int64_t step) {
  if (step < 1)
    fail(fn, "argument 'step' must be >= 1 (1-based), received " + std::to_string(step));
}

using Named = std::pair<const char*, py::object>;

// The float32 data of each named DeviceArray of n elements, in order; no array twice.
std::vector<float*> buffers(const char* fn, int64_t n, const std::vector<Named>& args) {
  std::vector<float*> out;
  std::vector<const DeviceArray*> seen;
  for (const Named& a : args) {
    if (a.second.is_none())
      fail(fn, std::string("argument '") + a.first + "' is required, received None");
    DeviceArray* d = nullptr;
    try {
      d = &a.second.cast<DeviceArray&>();
    } catch (const py::cast_error&) {
      fail(fn, std::string("argument '") + a.first + "' must be a fkeras._C_cuda.DeviceArray, "
               "received " + std::string(py::str(py::type::of(a.second).attr("__name__"))));
    }
    fk_cuda::check_dtype(*d, DType::Float32, fn, a.first);
    if (d->size() != n)
      fail(fn, std::string("argument '") + a.first + "' must have " + std::to_string(n) +
                   " elements, received " + std::to_string(d->size()) + " (shape " +
                   fk_cuda::shape_str(d->shape()) + ")");
    for (size_t k = 0; k < seen.size(); ++k)
      if (seen[k] == d && n > 0)
        fail(fn, std::string("arguments '") + args[k].first + "' and '" + a.first +
                     "' must be different arrays");
    seen.push_back(d);
    out.push_back(d->data_as<float>());
  }
  return out;
}

DeviceArray workspace(int64_t n) {
  const size_t bytes = fk_cuda::optimizer_more_workspace_bytes(n);
  return DeviceArray({static_cast<int64_t>((bytes + 3) / 4)}, DType::Float32);
}

}  // namespace

FK_BIND_FAMILY(optimizers_more) {
  auto S = [] { return fk_cuda::stream(); };

  m.def("lion_update", [S](py::object param, py::object mo, py::object grad, int64_t n, float lr,
                           float beta1, float beta2, float weight_decay) {
    const char* k = "lion_update";
    check_n(k, n);
    auto b = buffers(k, n, {{"param", param}, {"m", mo}, {"grad", grad}});
    fk_cuda::lion_update(b[0], b[1], b[2], n,
                         fk_cuda::make_lion_args(lr, beta1, beta2, weight_decay), S());
  }, py::arg("param"), py::arg("m"), py::arg("grad"), py::arg("n"), py::arg("lr"),
     py::arg("beta1"), py::arg("beta2"), py::arg("weight_decay"), "Keras 3 Lion step, in place.");

  m.def("ftrl_update", [S](py::object param, py::object accumulator, py::object linear,
                           py::object grad, int64_t n, float lr, float learning_rate_power,
                           float l1, float l2, float l2_shrinkage, float beta,
                           float weight_decay) {
    const char* k = "ftrl_update";
    check_n(k, n);
    auto b = buffers(k, n, {{"param", param}, {"accumulator", accumulator}, {"linear", linear},
                            {"grad", grad}});
    fk_cuda::ftrl_update(b[0], b[1], b[2], b[3], n,
                         fk_cuda::make_ftrl_args(lr, learning_rate_power, l1, l2, l2_shrinkage,
                                                 beta, weight_decay),
                         S());
  }, py::arg("param"), py::arg("accumulator"), py::arg("linear"), py::arg("grad"),
     py::arg("n"), py::arg("lr"), py::arg("learning_rate_power"), py::arg("l1"), py::arg("l2"),
     py::arg("l2_shrinkage"), py::arg("beta"), py::arg("weight_decay"),
     "Keras 3 Ftrl step, in place.");

  m.def("lamb_update", [S](py::object param, py::object mo, py::object v, py::object grad,
                           int64_t n, float lr, float beta1, float beta2, float epsilon,
                           int64_t step, float weight_decay) {
    const char* k = "lamb_update";
    check_n(k, n);
    check_step(k, step);
    auto b = buffers(k, n, {{"param", param}, {"m", mo}, {"v", v}, {"grad", grad}});
    if (n == 0) return;
    DeviceArray ws = workspace(n);
    fk_cuda::lamb_update(b[0], b[1], b[2], b[3], n,
                         fk_cuda::make_lamb_args(lr, beta1, beta2, epsilon, step, weight_decay),
                         ws.data(), S());
  }, py::arg("param"), py::arg("m"), py::arg("v"), py::arg("grad"), py::arg("n"), py::arg("lr"),
     py::arg("beta1"), py::arg("beta2"), py::arg("epsilon"), py::arg("step"),
     py::arg("weight_decay"), "Keras 3 Lamb step over one variable (trust ratio), in place.");

  m.def("adafactor_update", [S](py::object param, py::object v, py::object grad, int64_t n,
                                float lr, float beta_2_decay, float epsilon_1, float epsilon_2,
                                float clip_threshold, int64_t step, bool factored,
                                float weight_decay) {
    const char* k = "adafactor_update";
    check_n(k, n);
    check_step(k, step);
    auto b = buffers(k, n, {{"param", param}, {"v", v}, {"grad", grad}});
    if (n == 0) return;
    DeviceArray ws = workspace(n);
    fk_cuda::adafactor_update(
        b[0], b[1], b[2], n,
        fk_cuda::make_adafactor_args(lr, beta_2_decay, epsilon_1, epsilon_2, clip_threshold, step,
                                     factored, weight_decay),
        ws.data(), S());
  }, py::arg("param"), py::arg("v"), py::arg("grad"), py::arg("n"), py::arg("lr"),
     py::arg("beta_2_decay"), py::arg("epsilon_1"), py::arg("epsilon_2"),
     py::arg("clip_threshold"), py::arg("step"), py::arg("factored"), py::arg("weight_decay"),
     "Keras 3 Adafactor step over one variable, in place (v read only when factored).");

  m.def("muon_momentum_update", [S](py::object mo, py::object out, py::object grad, int64_t n,
                                    float momentum, bool nesterov) {
    const char* k = "muon_momentum_update";
    check_n(k, n);
    auto b = buffers(k, n, {{"m", mo}, {"out", out}, {"grad", grad}});
    fk_cuda::muon_momentum_update(b[0], b[1], b[2], n,
                                  fk_cuda::make_muon_momentum_args(momentum, nesterov), S());
  }, py::arg("m"), py::arg("out"), py::arg("grad"), py::arg("n"), py::arg("momentum"),
     py::arg("nesterov"), "Keras 3 Muon momentum step; out is the Newton-Schulz input.");

  m.def("muon_update", [S](py::object param, py::object ortho, int64_t n, float lr, float scale,
                           float weight_decay) {
    const char* k = "muon_update";
    check_n(k, n);
    auto b = buffers(k, n, {{"param", param}, {"ortho", ortho}});
    fk_cuda::muon_update(b[0], b[1], n, fk_cuda::make_muon_args(lr, scale, weight_decay), S());
  }, py::arg("param"), py::arg("ortho"), py::arg("n"), py::arg("lr"), py::arg("scale"),
     py::arg("weight_decay"), "Keras 3 Muon parameter step from the orthogonalized update.");

  m.def("schedule_free_adamw_update", [S](py::object param, py::object z, py::object v,
                                          py::object grad, int64_t n, float lr, float beta1,
                                          float beta2, float epsilon, int64_t step,
                                          int64_t warmup_steps, float weight_decay) {
    const char* k = "schedule_free_adamw_update";
    check_n(k, n);
    check_step(k, step);
    auto b = buffers(k, n, {{"param", param}, {"z", z}, {"v", v}, {"grad", grad}});
    fk_cuda::schedule_free_adamw_update(
        b[0], b[1], b[2], b[3], n,
        fk_cuda::make_sfadamw_args(lr, beta1, beta2, epsilon, step, warmup_steps, weight_decay),
        S());
  }, py::arg("param"), py::arg("z"), py::arg("v"), py::arg("grad"), py::arg("n"), py::arg("lr"),
     py::arg("beta1"), py::arg("beta2"), py::arg("epsilon"), py::arg("step"),
     py::arg("warmup_steps"), py::arg("weight_decay"),
     "Keras 3.15 ScheduleFreeAdamW step (torch-backend numbers), in place.");
}
