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
#include <algorithm>
#include <cmath>
#include <vector>

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

// Runs fn(offset, count) -> Sums over [0, n) in chunks and adds the chunks' sums in order
// (deterministic whatever the thread count).
template <class Fn>
opt::Sums reduced(int64_t n, Fn&& fn) {
  const int64_t chunks = (n + kGrain - 1) / kGrain;
  std::vector<opt::Sums> part(static_cast<size_t>(chunks), opt::Sums{0.0, 0.0});
  parallel_for(chunks, 1, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      const int64_t i = c * kGrain;
      part[static_cast<size_t>(c)] = fn(i, std::min(kGrain, n - i));
    }
  });
  opt::Sums total{0.0, 0.0};
  for (const auto& s : part) {
    total.a += s.a;
    total.b += s.b;
  }
  return total;
}

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

void lion_update(float* param, float* m, const float* grad, int64_t n, float lr, float beta1,
                 float beta2, float weight_decay) {
  check_common("lion_update", n);
  const opt::LionArgs a{lr, beta1, static_cast<float>(1.0 - beta1), beta2,
                        static_cast<float>(1.0 - beta2), decay_of(weight_decay, lr)};
  const auto& K = update_kernels();
  chunked(n, [&](int64_t i, int64_t c) { K.lion(param + i, m + i, grad + i, c, a); });
}

void ftrl_update(float* param, float* accumulator, float* linear, const float* grad, int64_t n,
                 float lr, float learning_rate_power, float l1, float l2, float l2_shrinkage,
                 float beta, float weight_decay) {
  check_common("ftrl_update", n);
  const float l2_total = l2 + static_cast<float>(beta / (2.0 * lr));
  const opt::FtrlArgs a{lr, -learning_rate_power, l1, 2.f * l2_total, 2.f * l2_shrinkage,
                        decay_of(weight_decay, lr)};
  const auto& K = update_kernels();
  chunked(n, [&](int64_t i, int64_t c) {
    K.ftrl(param + i, accumulator + i, linear + i, grad + i, c, a);
  });
}

void lamb_update(float* param, float* m, float* v, const float* grad, int64_t n, float lr,
                 float beta1, float beta2, float epsilon, int64_t step, float weight_decay) {
  check_common("lamb_update", n);
  check_step("lamb_update", step);
  const opt::LambArgs a{static_cast<float>(1.0 - beta1), static_cast<float>(1.0 - beta2),
                        static_cast<float>(1.0 - power(beta1, step)),
                        static_cast<float>(1.0 - power(beta2, step)), epsilon,
                        decay_of(weight_decay, lr)};
  const auto& K = update_kernels();
  const opt::Sums s = reduced(n, [&](int64_t i, int64_t c) {
    return K.lamb_moments(param + i, m + i, v + i, grad + i, c, a);
  });
  const double w_norm = std::sqrt(s.a), g_norm = std::sqrt(s.b);
  // ratio = w_norm / g_norm when both are > 0, else 1 (a NaN norm gives 1, as Keras's where).
  const double ratio = (w_norm > 0.0 && g_norm > 0.0) ? w_norm / g_norm : 1.0;
  const float coef = static_cast<float>(static_cast<float>(ratio) * lr);
  chunked(n, [&](int64_t i, int64_t c) { K.lamb_apply(param + i, m + i, v + i, c, coef, a); });
}

void adafactor_update(float* param, float* v, const float* grad, int64_t n, float lr,
                      float beta_2_decay, float epsilon_1, float epsilon_2, float clip_threshold,
                      int64_t step, bool factored, float weight_decay) {
  check_common("adafactor_update", n);
  check_step("adafactor_update", step);
  if (n == 0) return;
  const float t = static_cast<float>(step);
  const float beta_2_t = 1.f - std::pow(t, beta_2_decay);
  const opt::AdafactorArgs a{beta_2_t, 1.f - beta_2_t, epsilon_1, decay_of(weight_decay, lr)};
  const auto& K = update_kernels();
  const opt::Sums s = reduced(n, [&](int64_t i, int64_t c) {
    return K.adafactor_moments(param + i, v + i, grad + i, c, !factored, a);
  });
  const float rho_t = std::min(lr, 1.f / std::sqrt(t));
  const float rms_p = static_cast<float>(std::sqrt(s.a / static_cast<double>(n)));
  const float rms_u = static_cast<float>(std::sqrt(s.b / static_cast<double>(n)));
  // max(eps2, rms) with a NaN rms winning, as ops.maximum.
  const float alpha = (rms_p != rms_p ? rms_p : std::max(epsilon_2, rms_p)) * rho_t;
  const float q = rms_u / clip_threshold;
  const float denom = q != q ? q : std::max(1.f, q);
  chunked(n, [&](int64_t i, int64_t c) {
    K.adafactor_apply(param + i, v + i, grad + i, c, alpha, denom);
  });
}

void muon_momentum_update(float* m, float* out, const float* grad, int64_t n, float momentum,
                          bool nesterov) {
  check_common("muon_momentum_update", n);
  const opt::MuonArgs a{momentum, momentum - 1.f, 0.f, 0.f, 0.f};
  const auto& K = update_kernels();
  chunked(n, [&](int64_t i, int64_t c) {
    K.muon_momentum(m + i, out + i, grad + i, c, nesterov, a);
  });
}

void muon_update(float* param, const float* ortho, int64_t n, float lr, float scale,
                 float weight_decay) {
  check_common("muon_update", n);
  const opt::MuonArgs a{0.f, 0.f, lr, scale, decay_of(weight_decay, lr)};
  const auto& K = update_kernels();
  chunked(n, [&](int64_t i, int64_t c) { K.muon_apply(param + i, ortho + i, c, a); });
}

void schedule_free_adamw_update(float* param, float* z, float* v, const float* grad, int64_t n,
                                float lr, float beta1, float beta2, float epsilon, int64_t step,
                                int64_t warmup_steps, float weight_decay) {
  check_common("schedule_free_adamw_update", n);
  check_step("schedule_free_adamw_update", step);
  const float t = static_cast<float>(step);
  float lr_t = lr;
  if (warmup_steps > 0) lr_t = lr * std::min(t / static_cast<float>(warmup_steps), 1.f);
  const float weight = 1.f / t;
  const opt::SfAdamwArgs a{lr_t, beta1, 1.f - beta1, static_cast<float>(1.0 - beta2),
                           static_cast<float>(1.0 - power(beta2, step)), epsilon, weight,
                           1.f - weight, decay_of(weight_decay, lr)};
  const auto& K = update_kernels();
  chunked(n, [&](int64_t i, int64_t c) {
    K.sfadamw(param + i, z + i, v + i, grad + i, c, a);
  });
}

}  // namespace fk
