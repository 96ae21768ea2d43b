// optimizer_math.h: one element of each fused optimizer update, Keras 3 formulas in float32,
// as the CPU loops (cpp/optimizers/optimizers_kernels.h); the scalar constants (bias
// corrections, Nadam coefficients) are computed once per call in float64 on the host
// (make_*_args, same as cpp/optimizers/optimizers.cpp) and rounded once. Decoupled weight
// decay (param -= param * weight_decay * lr) comes first and is skipped entirely when 0.
// Optional slots (velocity, vhat, momentum_buf, average_grad) are used only when the option
// is on; the kernels pass dummies otherwise.
#pragma once

#include <cmath>
#include <cstdint>

#include "fk_cuda/hd.h"

namespace fk_cuda {

struct SgdArgs {
  float lr, momentum, decay;
  bool nesterov;
};
struct AdamArgs {
  float alpha, one_minus_b1, one_minus_b2, eps, decay;
  bool amsgrad;
};
struct AdamaxArgs {
  float lr, one_minus_b1, b2, bias1, eps, decay;
};
struct NadamArgs {
  float lr, one_minus_b1, one_minus_b2, coef_m, coef_g, inv_bias2, eps, decay;
};
struct RmspropArgs {
  float lr, rho, one_minus_rho, momentum, eps, decay;
  bool centered;
};
struct AdagradArgs {
  float lr, eps, decay;
};
struct AdadeltaArgs {
  float lr, rho, one_minus_rho, eps, decay;
};

inline double opt_power(float base, int64_t step) {
  return std::pow(static_cast<double>(base), static_cast<double>(step));
}

inline SgdArgs make_sgd_args(float lr, float momentum, bool nesterov, float weight_decay) {
  return SgdArgs{lr, momentum, weight_decay * lr, nesterov};
}
inline AdamArgs make_adam_args(float lr, float beta1, float beta2, float eps, int64_t step,
                               float weight_decay, bool amsgrad) {
  const double alpha =
      lr * std::sqrt(1.0 - opt_power(beta2, step)) / (1.0 - opt_power(beta1, step));
  return AdamArgs{static_cast<float>(alpha), static_cast<float>(1.0 - beta1),
                  static_cast<float>(1.0 - beta2), eps, weight_decay * lr, amsgrad};
}
inline AdamaxArgs make_adamax_args(float lr, float beta1, float beta2, float eps, int64_t step,
                                   float weight_decay) {
  return AdamaxArgs{lr, static_cast<float>(1.0 - beta1), beta2,
                    static_cast<float>(1.0 - opt_power(beta1, step)), eps, weight_decay * lr};
}
inline NadamArgs make_nadam_args(float lr, float beta1, float beta2, float eps, int64_t step,
                                 float u_t, float u_t1, float u_product_t, float weight_decay) {
  const double prod = u_product_t;
  return NadamArgs{lr,
                   static_cast<float>(1.0 - beta1),
                   static_cast<float>(1.0 - beta2),
                   static_cast<float>(u_t1 / (1.0 - prod * u_t1)),
                   static_cast<float>((1.0 - u_t) / (1.0 - prod)),
                   static_cast<float>(1.0 / (1.0 - opt_power(beta2, step))),
                   eps,
                   weight_decay * lr};
}
inline RmspropArgs make_rmsprop_args(float lr, float rho, float momentum, float eps,
                                     bool centered, float weight_decay) {
  return RmspropArgs{lr, rho, static_cast<float>(1.0 - rho), momentum > 0.f ? momentum : 0.f,
                     eps, weight_decay * lr, centered};
}
inline AdagradArgs make_adagrad_args(float lr, float eps, float weight_decay) {
  return AdagradArgs{lr, eps, weight_decay * lr};
}
inline AdadeltaArgs make_adadelta_args(float lr, float rho, float eps, float weight_decay) {
  return AdadeltaArgs{lr, rho, static_cast<float>(1.0 - rho), eps, weight_decay * lr};
}

FK_HD float opt_decayed(float p, float decay) { return decay != 0.f ? p - p * decay : p; }

// max(a, b) where a NaN in either operand wins (np.maximum).
FK_HD float opt_nan_max(float a, float b) { return (a < b || b != b) ? b : a; }

FK_HD float opt_fabs(float x) { return x < 0.f ? -x : (x == 0.f ? 0.f : x); }

FK_HD float opt_sqrt(float x) {
#if defined(__CUDA_ARCH__)
  return __fsqrt_rn(x);
#else
  return std::sqrt(x);
#endif
}

FK_HD float opt_div(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fdiv_rn(a, b);
#else
  return a / b;
#endif
}

FK_HD void sgd_step(float& p, float& vel, float g, const SgdArgs& a) {
  float pi = opt_decayed(p, a.decay);
  if (a.momentum == 0.f) {
    pi -= g * a.lr;
  } else {
    const float v = vel * a.momentum - g * a.lr;
    vel = v;
    pi += a.nesterov ? v * a.momentum - g * a.lr : v;
  }
  p = pi;
}

FK_HD void adam_step(float& p, float& m, float& v, float& vh, float g, const AdamArgs& a) {
  const float mi = m + (g - m) * a.one_minus_b1;
  float vi = v + (g * g - v) * a.one_minus_b2;
  m = mi;
  v = vi;
  if (a.amsgrad) {
    vi = opt_nan_max(vh, vi);
    vh = vi;
  }
  p = opt_decayed(p, a.decay) - opt_div(mi * a.alpha, opt_sqrt(vi) + a.eps);
}

FK_HD void adamax_step(float& p, float& m, float& u, float g, const AdamaxArgs& a) {
  const float mi = m + (g - m) * a.one_minus_b1;
  const float ui = opt_nan_max(a.b2 * u, opt_fabs(g));
  m = mi;
  u = ui;
  p = opt_decayed(p, a.decay) - opt_div(a.lr * mi, a.bias1 * (ui + a.eps));
}

FK_HD void nadam_step(float& p, float& m, float& v, float g, const NadamArgs& a) {
  const float mi = m + (g - m) * a.one_minus_b1;
  const float vi = v + (g * g - v) * a.one_minus_b2;
  m = mi;
  v = vi;
  const float m_hat = a.coef_m * mi + a.coef_g * g;
  const float denominator = opt_sqrt(vi * a.inv_bias2) + a.eps;
  p = opt_decayed(p, a.decay) - opt_div(m_hat * a.lr, denominator);
}

FK_HD void rmsprop_step(float& p, float& vel, float& mom, float& avg, float g,
                        const RmspropArgs& a) {
  const float vi = a.rho * vel + a.one_minus_rho * (g * g);
  vel = vi;
  float denominator = vi + a.eps;
  if (a.centered) {
    const float ai = a.rho * avg + a.one_minus_rho * g;
    avg = ai;
    denominator = vi - ai * ai + a.eps;
  }
  float increment = opt_div(a.lr * g, opt_sqrt(denominator));
  if (a.momentum > 0.f) {
    increment = a.momentum * mom + increment;
    mom = increment;
  }
  p = opt_decayed(p, a.decay) - increment;
}

FK_HD void adagrad_step(float& p, float& acc, float g, const AdagradArgs& a) {
  const float ai = acc + g * g;
  acc = ai;
  p = opt_decayed(p, a.decay) - opt_div(a.lr * g, opt_sqrt(ai + a.eps));
}

FK_HD void adadelta_step(float& p, float& ag, float& ad, float g, const AdadeltaArgs& a) {
  const float agi = a.rho * ag + a.one_minus_rho * (g * g);
  const float delta = opt_div(-(opt_sqrt(ad + a.eps) * g), opt_sqrt(agi + a.eps));
  ag = agi;
  ad = a.rho * ad + a.one_minus_rho * (delta * delta);
  p = opt_decayed(p, a.decay) + a.lr * delta;
}

}  // namespace fk_cuda
