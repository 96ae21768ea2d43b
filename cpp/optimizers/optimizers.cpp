// optimizers.cpp: optimizer updates over flat float32 buffers, Keras 3 formulas (kernels.h).
//
// Layouts: param, grad and every slot are flat (n). Each kernel READS AND WRITES param and its
// slots in place (grad is read only); optional slots are null when the option is off.
// Step order, as Keras 3's BaseOptimizer.apply: decoupled weight decay first
// (param -= param * weight_decay * lr), then the optimizer's update_step.
// Formulas (g = grad, t = step, the 1-based iteration count):
//   SGD       v = momentum * v - lr * g; param += v (nesterov: momentum * v - lr * g);
//             momentum == 0: param -= lr * g.
//   Adam      m += (g - m)(1 - b1); v += (g^2 - v)(1 - b2); amsgrad: vhat = max(vhat, v), use it;
//             param -= m * lr sqrt(1 - b2^t) / (1 - b1^t) / (sqrt(v) + eps).
//   Adamax    m += (g - m)(1 - b1); u = max(b2 u, |g|); param -= lr m / ((1 - b1^t)(u + eps)).
//   Nadam     m, v as Adam; m_hat = u_{t+1} m / (1 - prod_t u_{t+1}) + (1 - u_t) g / (1 - prod_t);
//             v_hat = v / (1 - b2^t); param -= m_hat lr / (sqrt(v_hat) + eps).
//   RMSprop   v = rho v + (1 - rho) g^2; centered: a = rho a + (1 - rho) g, denom = v - a^2 + eps,
//             else denom = v + eps; inc = lr g / sqrt(denom); momentum > 0: mom = momentum mom +
//             inc, param -= mom; else param -= inc.
//   Adagrad   acc += g^2; param -= lr g / sqrt(acc + eps).
//   Adadelta  ag = rho ag + (1 - rho) g^2; delta = -sqrt(ad + eps) g / sqrt(ag + eps);
//             ad = rho ad + (1 - rho) delta^2; param += lr delta.
// Scalar constants (bias corrections, the Nadam coefficients) are computed here in float64 and
// rounded once; the per-element arithmetic is float32, as Keras on float32 variables.
// Elementwise and memory-bound: chunks of 32K elements over the thread pool.
#include <cmath>

#include "fkeras/kernels.h"
#include "fkeras/runtime.h"

#define FK_OPT_NS opt_scalar
#include "optimizers_kernels.h"

namespace fk {
namespace opt {
const UpdateKernels kScalarKernels = opt_scalar::kUpdateKernels;
}  // namespace opt

namespace {

constexpr int64_t kGrain = 32768;

const opt::UpdateKernels& update_kernels() {
  switch (cpu_isa()) {
    case Isa::kAvx512: return opt::kAvx512Kernels;
    case Isa::kAvx2: return opt::kAvx2Kernels;
    default: return opt::kScalarKernels;
  }
}

// Runs fn(offset, count) over [0, n) in chunks.
template <class Fn>
void chunked(int64_t n, Fn&& fn) {
  parallel_for(n, kGrain, [&](int64_t b, int64_t e) { fn(b, e - b); });
}

float* at(float* p, int64_t i) { return p ? p + i : nullptr; }

void check_common(const char* kernel, int64_t n) {
  FK_CHECK(n >= 0, kernel, ": size 'n' must be >= 0, received ", n);
}

void check_step(const char* kernel, int64_t step) {
  FK_CHECK(step >= 1, kernel, ": argument 'step' must be >= 1 (1-based), received ", step);
}

float decay_of(float weight_decay, float lr) { return weight_decay * lr; }

double power(float base, int64_t step) {
  return std::pow(static_cast<double>(base), static_cast<double>(step));
}

}  // namespace

void sgd_update(float* param, float* velocity, const float* grad, int64_t n, float lr,
                float momentum, bool nesterov, float weight_decay) {
  check_common("sgd_update", n);
  FK_CHECK(momentum == 0.f || velocity != nullptr,
           "sgd_update: argument 'velocity' is required when momentum != 0");
  const opt::SgdArgs a{lr, momentum, decay_of(weight_decay, lr), nesterov};
  const auto& K = update_kernels();
  chunked(n, [&](int64_t i, int64_t c) { K.sgd(param + i, at(velocity, i), grad + i, c, a); });
}

void adam_update(float* param, float* m, float* v, float* vhat, const float* grad, int64_t n,
                 float lr, float beta1, float beta2, float epsilon, int64_t step,
                 float weight_decay) {
  check_common("adam_update", n);
  check_step("adam_update", step);
  const double alpha = lr * std::sqrt(1.0 - power(beta2, step)) / (1.0 - power(beta1, step));
  const opt::AdamArgs a{static_cast<float>(alpha), static_cast<float>(1.0 - beta1),
                        static_cast<float>(1.0 - beta2), epsilon, decay_of(weight_decay, lr)};
  const auto& K = update_kernels();
  chunked(n, [&](int64_t i, int64_t c) {
    K.adam(param + i, m + i, v + i, at(vhat, i), grad + i, c, a);
  });
}

void adamax_update(float* param, float* m, float* u, const float* grad, int64_t n, float lr,
                   float beta1, float beta2, float epsilon, int64_t step, float weight_decay) {
  check_common("adamax_update", n);
  check_step("adamax_update", step);
  const opt::AdamaxArgs a{lr, static_cast<float>(1.0 - beta1), beta2,
                          static_cast<float>(1.0 - power(beta1, step)), epsilon,
                          decay_of(weight_decay, lr)};
  const auto& K = update_kernels();
  chunked(n, [&](int64_t i, int64_t c) { K.adamax(param + i, m + i, u + i, grad + i, c, a); });
}

void nadam_update(float* param, float* m, float* v, const float* grad, int64_t n, float lr,
                  float beta1, float beta2, float epsilon, int64_t step, float u_t, float u_t1,
                  float u_product_t, float weight_decay) {
  check_common("nadam_update", n);
  check_step("nadam_update", step);
  const double prod = u_product_t;
  const opt::NadamArgs a{lr,
                         static_cast<float>(1.0 - beta1),
                         static_cast<float>(1.0 - beta2),
                         static_cast<float>(u_t1 / (1.0 - prod * u_t1)),
                         static_cast<float>((1.0 - u_t) / (1.0 - prod)),
                         static_cast<float>(1.0 / (1.0 - power(beta2, step))),
                         epsilon,
                         decay_of(weight_decay, lr)};
  const auto& K = update_kernels();
  chunked(n, [&](int64_t i, int64_t c) { K.nadam(param + i, m + i, v + i, grad + i, c, a); });
}

void rmsprop_update(float* param, float* velocity, float* momentum_buf, float* average_grad,
                    const float* grad, int64_t n, float lr, float rho, float momentum,
                    float epsilon, bool centered, float weight_decay) {
  check_common("rmsprop_update", n);
  FK_CHECK(!(momentum > 0.f) || momentum_buf != nullptr,
           "rmsprop_update: argument 'momentum_buf' is required when momentum > 0");
  FK_CHECK(!centered || average_grad != nullptr,
           "rmsprop_update: argument 'average_grad' is required when centered");
  const opt::RmspropArgs a{lr, rho, static_cast<float>(1.0 - rho), momentum > 0.f ? momentum : 0.f,
                           epsilon, decay_of(weight_decay, lr)};
  float* avg = centered ? average_grad : nullptr;
  const auto& K = update_kernels();
  chunked(n, [&](int64_t i, int64_t c) {
    K.rmsprop(param + i, velocity + i, at(momentum_buf, i), at(avg, i), grad + i, c, a);
  });
}

void adagrad_update(float* param, float* accumulator, const float* grad, int64_t n, float lr,
                    float epsilon, float weight_decay) {
  check_common("adagrad_update", n);
  const opt::AdagradArgs a{lr, epsilon, decay_of(weight_decay, lr)};
  const auto& K = update_kernels();
  chunked(n, [&](int64_t i, int64_t c) { K.adagrad(param + i, accumulator + i, grad + i, c, a); });
}

void adadelta_update(float* param, float* accumulated_grad, float* accumulated_delta,
                     const float* grad, int64_t n, float lr, float rho, float epsilon,
                     float weight_decay) {
  check_common("adadelta_update", n);
  const opt::AdadeltaArgs a{lr, rho, static_cast<float>(1.0 - rho), epsilon,
                            decay_of(weight_decay, lr)};
  const auto& K = update_kernels();
  chunked(n, [&](int64_t i, int64_t c) {
    K.adadelta(param + i, accumulated_grad + i, accumulated_delta + i, grad + i, c, a);
  });
}

}  // namespace fk
