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

  m.def("lion_update", [](py::object param, py::object mo, py::object grad, int64_t n, float lr,
                          float beta1, float beta2, float weight_decay) {
    const char* k = "lion_update";
    fkb::check_sizes(k, {{"n", n}});
    float* p = fkb::out_f32(param, k, "param", {n});
    float* pm = fkb::out_f32(mo, k, "m", {n});
    const float* g = fkb::in_f32(grad, k, "grad", {n});
    if (!fkb::check_outputs(k, {{"param", param}, {"m", mo}}, {{"grad", grad}})) return;
    py::gil_scoped_release nogil;
    fk::lion_update(p, pm, g, n, lr, beta1, beta2, weight_decay);
  }, py::arg("param"), py::arg("m"), py::arg("grad"), py::arg("n"), py::arg("lr"),
     py::arg("beta1"), py::arg("beta2"), py::arg("weight_decay"), "Keras 3 Lion step, in place.");

  m.def("ftrl_update", [](py::object param, py::object accumulator, py::object linear,
                          py::object grad, int64_t n, float lr, float learning_rate_power,
                          float l1, float l2, float l2_shrinkage, float beta,
                          float weight_decay) {
    const char* k = "ftrl_update";
    fkb::check_sizes(k, {{"n", n}});
    float* p = fkb::out_f32(param, k, "param", {n});
    float* acc = fkb::out_f32(accumulator, k, "accumulator", {n});
    float* lin = fkb::out_f32(linear, k, "linear", {n});
    const float* g = fkb::in_f32(grad, k, "grad", {n});
    if (!fkb::check_outputs(k, {{"param", param}, {"accumulator", accumulator},
                                 {"linear", linear}}, {{"grad", grad}})) return;
    py::gil_scoped_release nogil;
    fk::ftrl_update(p, acc, lin, g, n, lr, learning_rate_power, l1, l2, l2_shrinkage, beta,
                    weight_decay);
  }, py::arg("param"), py::arg("accumulator"), py::arg("linear"), py::arg("grad"),
     py::arg("n"), py::arg("lr"), py::arg("learning_rate_power"), py::arg("l1"), py::arg("l2"),
     py::arg("l2_shrinkage"), py::arg("beta"), py::arg("weight_decay"),
     "Keras 3 Ftrl step, in place.");

  m.def("lamb_update", [](py::object param, py::object mo, py::object v, py::object grad,
                          int64_t n, float lr, float beta1, float beta2, float epsilon,
                          int64_t step, float weight_decay) {
    const char* k = "lamb_update";
    fkb::check_sizes(k, {{"n", n}});
    check_step(k, step);
    float* p = fkb::out_f32(param, k, "param", {n});
    float* pm = fkb::out_f32(mo, k, "m", {n});
    float* pv = fkb::out_f32(v, k, "v", {n});
    const float* g = fkb::in_f32(grad, k, "grad", {n});
    if (!fkb::check_outputs(k, {{"param", param}, {"m", mo}, {"v", v}}, {{"grad", grad}})) return;
    py::gil_scoped_release nogil;
    fk::lamb_update(p, pm, pv, g, n, lr, beta1, beta2, epsilon, step, weight_decay);
  }, py::arg("param"), py::arg("m"), py::arg("v"), py::arg("grad"), py::arg("n"), py::arg("lr"),
     py::arg("beta1"), py::arg("beta2"), py::arg("epsilon"), py::arg("step"),
     py::arg("weight_decay"), "Keras 3 Lamb step over one variable (trust ratio), in place.");

  m.def("adafactor_update", [](py::object param, py::object v, py::object grad, int64_t n,
                               float lr, float beta_2_decay, float epsilon_1, float epsilon_2,
                               float clip_threshold, int64_t step, bool factored,
                               float weight_decay) {
    const char* k = "adafactor_update";
    fkb::check_sizes(k, {{"n", n}});
    check_step(k, step);
    float* p = fkb::out_f32(param, k, "param", {n});
    float* pv = fkb::out_f32(v, k, "v", {n});
    const float* g = fkb::in_f32(grad, k, "grad", {n});
    if (!fkb::check_outputs(k, {{"param", param}, {"v", v}}, {{"grad", grad}})) return;
    py::gil_scoped_release nogil;
    fk::adafactor_update(p, pv, g, n, lr, beta_2_decay, epsilon_1, epsilon_2, clip_threshold,
                         step, factored, weight_decay);
  }, py::arg("param"), py::arg("v"), py::arg("grad"), py::arg("n"), py::arg("lr"),
     py::arg("beta_2_decay"), py::arg("epsilon_1"), py::arg("epsilon_2"),
     py::arg("clip_threshold"), py::arg("step"), py::arg("factored"), py::arg("weight_decay"),
     "Keras 3 Adafactor step over one variable, in place (v read only when factored).");

  m.def("muon_momentum_update", [](py::object mo, py::object out, py::object grad, int64_t n,
                                   float momentum, bool nesterov) {
    const char* k = "muon_momentum_update";
    fkb::check_sizes(k, {{"n", n}});
    float* pm = fkb::out_f32(mo, k, "m", {n});
    float* po = fkb::out_f32(out, k, "out", {n});
    const float* g = fkb::in_f32(grad, k, "grad", {n});
    if (!fkb::check_outputs(k, {{"m", mo}, {"out", out}}, {{"grad", grad}})) return;
    py::gil_scoped_release nogil;
    fk::muon_momentum_update(pm, po, g, n, momentum, nesterov);
  }, py::arg("m"), py::arg("out"), py::arg("grad"), py::arg("n"), py::arg("momentum"),
     py::arg("nesterov"), "Keras 3 Muon momentum step; out is the Newton-Schulz input.");

  m.def("muon_update", [](py::object param, py::object ortho, int64_t n, float lr, float scale,
                          float weight_decay) {
    const char* k = "muon_update";
    fkb::check_sizes(k, {{"n", n}});
    float* p = fkb::out_f32(param, k, "param", {n});
    const float* o = fkb::in_f32(ortho, k, "ortho", {n});
    if (!fkb::check_outputs(k, {{"param", param}}, {{"ortho", ortho}})) return;
    py::gil_scoped_release nogil;
    fk::muon_update(p, o, n, lr, scale, weight_decay);
  }, py::arg("param"), py::arg("ortho"), py::arg("n"), py::arg("lr"), py::arg("scale"),
     py::arg("weight_decay"), "Keras 3 Muon parameter step from the orthogonalized update.");

  m.def("schedule_free_adamw_update", [](py::object param, py::object z, py::object v,
                                         py::object grad, int64_t n, float lr, float beta1,
                                         float beta2, float epsilon, int64_t step,
                                         int64_t warmup_steps, float weight_decay) {
    const char* k = "schedule_free_adamw_update";
    fkb::check_sizes(k, {{"n", n}});
    check_step(k, step);
    float* p = fkb::out_f32(param, k, "param", {n});
    float* pz = fkb::out_f32(z, k, "z", {n});
    float* pv = fkb::out_f32(v, k, "v", {n});
    const float* g = fkb::in_f32(grad, k, "grad", {n});
    if (!fkb::check_outputs(k, {{"param", param}, {"z", z}, {"v", v}}, {{"grad", grad}})) return;
    py::gil_scoped_release nogil;
    fk::schedule_free_adamw_update(p, pz, pv, g, n, lr, beta1, beta2, epsilon, step,
                                   warmup_steps, weight_decay);
  }, py::arg("param"), py::arg("z"), py::arg("v"), py::arg("grad"), py::arg("n"), py::arg("lr"),
     py::arg("beta1"), py::arg("beta2"), py::arg("epsilon"), py::arg("step"),
     py::arg("warmup_steps"), py::arg("weight_decay"),
     "Keras 3.15 ScheduleFreeAdamW step (torch-backend numbers), in place.");
}
