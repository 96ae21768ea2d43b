// bind_optimizers.cpp: Python bindings of the optimizer updates (see fkeras/kernels.h).
// param and every slot are outputs (read and written in place), grad is an input; all are flat
// float32 buffers of n elements (any shape with n elements is accepted).
#include <string>

#include "check.h"
#include "fkeras/kernels.h"

namespace {

void check_step(const char* kernel, int64_t step) {
  if (step < 1)
    throw py::value_error(std::string(kernel) + ": argument 'step' must be >= 1 (1-based), "
                          "received " + std::to_string(step));
}

[[noreturn]] void missing(const char* kernel, const char* arg, const char* when) {
  throw py::value_error(std::string(kernel) + ": argument '" + arg + "' is required " + when +
                        ", received None");
}

}  // namespace

void bind_optimizers(py::module_& m) {
  m.def("sgd_update", [](py::object param, py::object velocity, py::object grad, int64_t n,
                         float lr, float momentum, bool nesterov, float weight_decay) {
    const char* k = "sgd_update";
    fkb::check_sizes(k, {{"n", n}});
    float* p = fkb::out_f32(param, k, "param", {n});
    float* vel = fkb::out_f32(velocity, k, "velocity", {n}, true);
    if (momentum != 0.f && !vel) missing(k, "velocity", "when momentum != 0");
    const float* g = fkb::in_f32(grad, k, "grad", {n});
    if (!fkb::check_outputs(k, {{"param", param}, {"velocity", velocity}},
                                 {{"grad", grad}})) return;
    py::gil_scoped_release nogil;
    fk::sgd_update(p, vel, g, n, lr, momentum, nesterov, weight_decay);
  }, py::arg("param"), py::arg("velocity"), py::arg("grad"), py::arg("n"), py::arg("lr"),
     py::arg("momentum"), py::arg("nesterov"), py::arg("weight_decay"),
     "Keras 3 SGD step (with optional momentum / nesterov), in place.");

  m.def("adam_update", [](py::object param, py::object mo, py::object v, py::object vhat,
                          py::object grad, int64_t n, float lr, float beta1, float beta2,
                          float epsilon, int64_t step, float weight_decay) {
    const char* k = "adam_update";
    fkb::check_sizes(k, {{"n", n}});
    check_step(k, step);
    float* p = fkb::out_f32(param, k, "param", {n});
    float* pm = fkb::out_f32(mo, k, "m", {n});
    float* pv = fkb::out_f32(v, k, "v", {n});
    float* pvh = fkb::out_f32(vhat, k, "vhat", {n}, true);
    const float* g = fkb::in_f32(grad, k, "grad", {n});
    if (!fkb::check_outputs(k, {{"param", param}, {"m", mo}, {"v", v}, {"vhat", vhat}},
                                 {{"grad", grad}})) return;
    py::gil_scoped_release nogil;
    fk::adam_update(p, pm, pv, pvh, g, n, lr, beta1, beta2, epsilon, step, weight_decay);
  }, py::arg("param"), py::arg("m"), py::arg("v"), py::arg("vhat"), py::arg("grad"),
     py::arg("n"), py::arg("lr"), py::arg("beta1"), py::arg("beta2"), py::arg("epsilon"),
     py::arg("step"), py::arg("weight_decay"),
     "Keras 3 Adam / AdamW step (amsgrad when vhat is given), in place.");

  m.def("adamax_update", [](py::object param, py::object mo, py::object u, py::object grad,
                            int64_t n, float lr, float beta1, float beta2, float epsilon,
                            int64_t step, float weight_decay) {
    const char* k = "adamax_update";
    fkb::check_sizes(k, {{"n", n}});
    check_step(k, step);
    float* p = fkb::out_f32(param, k, "param", {n});
    float* pm = fkb::out_f32(mo, k, "m", {n});
    float* pu = fkb::out_f32(u, k, "u", {n});
    const float* g = fkb::in_f32(grad, k, "grad", {n});
    if (!fkb::check_outputs(k, {{"param", param}, {"m", mo}, {"u", u}}, {{"grad", grad}})) return;
    py::gil_scoped_release nogil;
    fk::adamax_update(p, pm, pu, g, n, lr, beta1, beta2, epsilon, step, weight_decay);
  }, py::arg("param"), py::arg("m"), py::arg("u"), py::arg("grad"), py::arg("n"), py::arg("lr"),
     py::arg("beta1"), py::arg("beta2"), py::arg("epsilon"), py::arg("step"),
     py::arg("weight_decay"), "Keras 3 Adamax step, in place.");

  m.def("nadam_update", [](py::object param, py::object mo, py::object v, py::object grad,
                           int64_t n, float lr, float beta1, float beta2, float epsilon,
                           int64_t step, float u_t, float u_t1, float u_product_t,
                           float weight_decay) {
    const char* k = "nadam_update";
    fkb::check_sizes(k, {{"n", n}});
    check_step(k, step);
    float* p = fkb::out_f32(param, k, "param", {n});
    float* pm = fkb::out_f32(mo, k, "m", {n});
    float* pv = fkb::out_f32(v, k, "v", {n});
    const float* g = fkb::in_f32(grad, k, "grad", {n});
    if (!fkb::check_outputs(k, {{"param", param}, {"m", mo}, {"v", v}}, {{"grad", grad}})) return;
    py::gil_scoped_release nogil;
    fk::nadam_update(p, pm, pv, g, n, lr, beta1, beta2, epsilon, step, u_t, u_t1, u_product_t,
                     weight_decay);
  }, py::arg("param"), py::arg("m"), py::arg("v"), py::arg("grad"), py::arg("n"), py::arg("lr"),
     py::arg("beta1"), py::arg("beta2"), py::arg("epsilon"), py::arg("step"), py::arg("u_t"),
     py::arg("u_t1"), py::arg("u_product_t"), py::arg("weight_decay"),
     "Keras 3 Nadam step, in place; the caller keeps the momentum-schedule product.");

  m.def("rmsprop_update", [](py::object param, py::object velocity, py::object momentum_buf,
                             py::object average_grad, py::object grad, int64_t n, float lr,
                             float rho, float momentum, float epsilon, bool centered,
                             float weight_decay) {
    const char* k = "rmsprop_update";
    fkb::check_sizes(k, {{"n", n}});
    float* p = fkb::out_f32(param, k, "param", {n});
    float* vel = fkb::out_f32(velocity, k, "velocity", {n});
    float* mom = fkb::out_f32(momentum_buf, k, "momentum_buf", {n}, true);
    float* avg = fkb::out_f32(average_grad, k, "average_grad", {n}, true);
    if (momentum > 0.f && !mom) missing(k, "momentum_buf", "when momentum > 0");
    if (centered && !avg) missing(k, "average_grad", "when centered");
    const float* g = fkb::in_f32(grad, k, "grad", {n});
    if (!fkb::check_outputs(k, {{"param", param}, {"velocity", velocity},
                                 {"momentum_buf", momentum_buf}, {"average_grad", average_grad}},
                                 {{"grad", grad}})) return;
    py::gil_scoped_release nogil;
    fk::rmsprop_update(p, vel, mom, avg, g, n, lr, rho, momentum, epsilon, centered,
                       weight_decay);
  }, py::arg("param"), py::arg("velocity"), py::arg("momentum_buf"), py::arg("average_grad"),
     py::arg("grad"), py::arg("n"), py::arg("lr"), py::arg("rho"), py::arg("momentum"),
     py::arg("epsilon"), py::arg("centered"), py::arg("weight_decay"),
     "Keras 3 RMSprop step (optional momentum, centered), in place.");

  m.def("adagrad_update", [](py::object param, py::object accumulator, py::object grad,
                             int64_t n, float lr, float epsilon, float weight_decay) {
    const char* k = "adagrad_update";
    fkb::check_sizes(k, {{"n", n}});
    float* p = fkb::out_f32(param, k, "param", {n});
    float* acc = fkb::out_f32(accumulator, k, "accumulator", {n});
    const float* g = fkb::in_f32(grad, k, "grad", {n});
    if (!fkb::check_outputs(k, {{"param", param}, {"accumulator", accumulator}},
                                 {{"grad", grad}})) return;
    py::gil_scoped_release nogil;
    fk::adagrad_update(p, acc, g, n, lr, epsilon, weight_decay);
  }, py::arg("param"), py::arg("accumulator"), py::arg("grad"), py::arg("n"), py::arg("lr"),
     py::arg("epsilon"), py::arg("weight_decay"), "Keras 3 Adagrad step, in place.");

  m.def("adadelta_update", [](py::object param, py::object accumulated_grad,
                              py::object accumulated_delta, py::object grad, int64_t n, float lr,
                              float rho, float epsilon, float weight_decay) {
    const char* k = "adadelta_update";
    fkb::check_sizes(k, {{"n", n}});
    float* p = fkb::out_f32(param, k, "param", {n});
    float* ag = fkb::out_f32(accumulated_grad, k, "accumulated_grad", {n});
    float* ad = fkb::out_f32(accumulated_delta, k, "accumulated_delta", {n});
    const float* g = fkb::in_f32(grad, k, "grad", {n});
    if (!fkb::check_outputs(k, {{"param", param}, {"accumulated_grad", accumulated_grad},
                                 {"accumulated_delta", accumulated_delta}},
                                 {{"grad", grad}})) return;
    py::gil_scoped_release nogil;
    fk::adadelta_update(p, ag, ad, g, n, lr, rho, epsilon, weight_decay);
  }, py::arg("param"), py::arg("accumulated_grad"), py::arg("accumulated_delta"),
     py::arg("grad"), py::arg("n"), py::arg("lr"), py::arg("rho"), py::arg("epsilon"),
     py::arg("weight_decay"), "Keras 3 Adadelta step, in place.");
}
