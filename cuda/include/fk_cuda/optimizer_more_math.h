// optimizer_more_math.h: one element of the Lion, Ftrl, Lamb, Adafactor, Muon and
// ScheduleFreeAdamW updates (cuda/kernels/optimizers_more.cu), Keras 3 formulas in float32, as
// the CPU loops (cpp/optimizers/optimizers_kernels.h): the same float32 expressions in the same
// order. The scalar constants are formed once per call on the host by make_*_args with the
// CPU's expressions (optimizers.cpp: float64 where it uses float64, float32 where it uses
// float32) and rounded once. Decoupled weight decay (param -= param * weight_decay * lr) comes
// first and is skipped entirely when 0.
// Lamb and Adafactor need two float64 sums over the whole variable: a fixed grid of
// reduce_blocks(n) blocks of kReduceThreads threads (grid-stride, then a halving tree per
// block), the block partials added in block order by one thread, which then forms the step's
// scalars (lamb_coef, adafactor_scalars) on the device: deterministic for a given n.
// Ftrl's accumulator power other than 1/2 is float(pow(double, double)) on both builds (the
// CPU's powf may differ from it by an ulp); 1/2 is an IEEE sqrt, as on the CPU.
#pragma once

#include <math.h>

#include <cmath>
#include <cstdint>

#include "fk_cuda/hd.h"
#include "fk_cuda/optimizer_math.h"

namespace fk_cuda {

struct LionArgs {
  float lr, b1, one_minus_b1, b2, one_minus_b2, decay;
};
struct FtrlArgs {
  // l2x2 = 2 (l2 + beta / (2 lr)); shrink2 = 2 l2_shrinkage; neg_power = -learning_rate_power.
  float lr, neg_power, l1, l2x2, shrink2, decay;
};
struct LambArgs {
  float one_minus_b1, one_minus_b2, bias1, bias2, eps, decay, lr;  // bias_i = 1 - b_i^t
};
struct AdafactorArgs {
  float beta_2_t, one_minus_beta_2_t, eps1, decay, rho_t, eps2, clip;
  bool update_v;  // not factored
};
struct MuonArgs {
  float momentum, momentum_minus_1, lr, scale, decay;
  bool nesterov;
};
struct SfAdamwArgs {
  // weight = 1 / t; bias2 = 1 - b2^t; lr includes the warmup factor.
  float lr, b1, one_minus_b1, one_minus_b2, bias2, eps, weight, one_minus_weight, decay;
};

inline LionArgs make_lion_args(float lr, float beta1, float beta2, float weight_decay) {
  return LionArgs{lr, beta1, static_cast<float>(1.0 - beta1), beta2,
                  static_cast<float>(1.0 - beta2), weight_decay * lr};
}
inline FtrlArgs make_ftrl_args(float lr, float learning_rate_power, float l1, float l2,
                               float l2_shrinkage, float beta, float weight_decay) {
  const float l2_total = l2 + static_cast<float>(beta / (2.0 * lr));
  return FtrlArgs{lr, -learning_rate_power, l1, 2.f * l2_total, 2.f * l2_shrinkage,
                  weight_decay * lr};
}
inline LambArgs make_lamb_args(float lr, float beta1, float beta2, float eps, int64_t step,
                               float weight_decay) {
  return LambArgs{static_cast<float>(1.0 - beta1), static_cast<float>(1.0 - beta2),
                  static_cast<float>(1.0 - opt_power(beta1, step)),
                  static_cast<float>(1.0 - opt_power(beta2, step)), eps, weight_decay * lr, lr};
}
inline AdafactorArgs make_adafactor_args(float lr, float beta_2_decay, float epsilon_1,
                                         float epsilon_2, float clip_threshold, int64_t step,
                                         bool factored, float weight_decay) {
  const float t = static_cast<float>(step);
  const float beta_2_t = 1.f - std::pow(t, beta_2_decay);
  const float inv_sqrt_t = 1.f / std::sqrt(t);
  return AdafactorArgs{beta_2_t, 1.f - beta_2_t, epsilon_1, weight_decay * lr,
                       lr < inv_sqrt_t ? lr : inv_sqrt_t, epsilon_2, clip_threshold, !factored};
}
inline MuonArgs make_muon_momentum_args(float momentum, bool nesterov) {
  return MuonArgs{momentum, momentum - 1.f, 0.f, 0.f, 0.f, nesterov};
}
inline MuonArgs make_muon_args(float lr, float scale, float weight_decay) {
  return MuonArgs{0.f, 0.f, lr, scale, weight_decay * lr, false};
}
inline SfAdamwArgs make_sfadamw_args(float lr, float beta1, float beta2, float eps, int64_t step,
                                     int64_t warmup_steps, float weight_decay) {
  const float t = static_cast<float>(step);
  float lr_t = lr;
  if (warmup_steps > 0) {
    const float w = t / static_cast<float>(warmup_steps);
    lr_t = lr * (w < 1.f ? w : 1.f);
  }
  const float weight = 1.f / t;
  return SfAdamwArgs{lr_t, beta1, 1.f - beta1, static_cast<float>(1.0 - beta2),
                     static_cast<float>(1.0 - opt_power(beta2, step)), eps, weight,
                     1.f - weight, weight_decay * lr};
}

// sign(c) with sign(0) = 0 and sign(NaN) = NaN (torch.sign).
FK_HD float opt_sign(float c) { return c > 0.f ? 1.f : (c < 0.f ? -1.f : c); }

FK_HD void lion_step(float& p, float& m, float g, const LionArgs& a) {
  const float c = m * a.b1 + g * a.one_minus_b1;
  p = opt_decayed(p, a.decay) - opt_sign(c) * a.lr;
  m = m * a.b2 + g * a.one_minus_b2;
}

FK_HD float ftrl_pow(float x, float neg_power) {
  if (neg_power == 0.5f) return opt_sqrt(x);
  return static_cast<float>(pow(static_cast<double>(x), static_cast<double>(neg_power)));
}

FK_HD void ftrl_step(float& p, float& acc, float& lin, float g, const FtrlArgs& a) {
  const float pi = opt_decayed(p, a.decay);
  const float grad_to_use = g + a.shrink2 * pi;
  const float old_acc = acc;
  const float new_acc = old_acc + g * g;
  const float pow_new = ftrl_pow(new_acc, a.neg_power);
  const float pow_old = ftrl_pow(old_acc, a.neg_power);
  const float li = lin + (grad_to_use - opt_div(pow_new - pow_old, a.lr) * pi);
  lin = li;
  const float quadratic = opt_div(pow_new, a.lr) + a.l2x2;
  const float clipped = li < -a.l1 ? -a.l1 : (li > a.l1 ? a.l1 : li);
  p = opt_div(clipped - li, quadratic);
  acc = new_acc;
}

// Lamb pass 1: moments and decay in place; adds param^2 and update^2 to the float64 sums.
FK_HD void lamb_moments(float& p, float& m, float& v, float g, const LambArgs& a, double& sw,
                        double& su) {
  const float mi = m + (g - m) * a.one_minus_b1;
  const float vi = v + (g * g - v) * a.one_minus_b2;
  m = mi;
  v = vi;
  const float pi = opt_decayed(p, a.decay);
  p = pi;
  const float u = opt_div(opt_div(mi, a.bias1), opt_sqrt(opt_div(vi, a.bias2)) + a.eps);
  sw += static_cast<double>(pi) * pi;
  su += static_cast<double>(u) * u;
}

// The trust ratio times lr: (||param|| / ||u|| when both are > 0, else 1) * lr.
FK_HD float lamb_coef(double sw, double su, float lr) {
  const double w_norm = sqrt(sw), g_norm = sqrt(su);
  const double ratio = (w_norm > 0.0 && g_norm > 0.0) ? w_norm / g_norm : 1.0;
  return static_cast<float>(static_cast<float>(ratio) * lr);
}

// Lamb pass 2.
FK_HD void lamb_apply(float& p, float m, float v, float coef, const LambArgs& a) {
  p -= coef * opt_div(opt_div(m, a.bias1), opt_sqrt(opt_div(v, a.bias2)) + a.eps);
}

// Adafactor pass 1: v (unless factored) and decay in place; adds param^2 and (g / sqrt(v))^2.
FK_HD void adafactor_moments(float& p, float& v, float g, const AdafactorArgs& a, double& sp,
                             double& su) {
  float vi = v;
  if (a.update_v) {
    vi = a.beta_2_t * vi + a.one_minus_beta_2_t * (g * g + a.eps1);
    v = vi;
  }
  const float pi = opt_decayed(p, a.decay);
  p = pi;
  const float u = opt_div(g, opt_sqrt(vi));
  sp += static_cast<double>(pi) * pi;
  su += static_cast<double>(u) * u;
}

// alpha = max(eps2, rms(param)) rho_t and denom = max(1, rms(u) / clip), a NaN winning.
FK_HD void adafactor_scalars(double sp, double su, int64_t n, const AdafactorArgs& a,
                             float* alpha, float* denom) {
  const float rms_p = static_cast<float>(sqrt(sp / static_cast<double>(n)));
  const float rms_u = static_cast<float>(sqrt(su / static_cast<double>(n)));
  *alpha = (rms_p != rms_p ? rms_p : (a.eps2 > rms_p ? a.eps2 : rms_p)) * a.rho_t;
  const float q = opt_div(rms_u, a.clip);
  *denom = q != q ? q : (1.f > q ? 1.f : q);
}

// Adafactor pass 2.
FK_HD void adafactor_apply(float& p, float v, float g, float alpha, float denom) {
  p -= alpha * opt_div(opt_div(g, opt_sqrt(v)), denom);
}

FK_HD void muon_momentum_step(float& m, float& out, float g, const MuonArgs& a) {
  const float mi = m + (g + m * a.momentum_minus_1);
  m = mi;
  out = a.nesterov ? g + a.momentum * mi : mi;
}

FK_HD void muon_step(float& p, float ortho, const MuonArgs& a) {
  p = opt_decayed(p, a.decay) - (a.lr * ortho) * a.scale;
}

// Keras 3.15 on torch: the "old" z read after z's in-place update is the new z.
FK_HD void sfadamw_step(float& p, float& z, float& v, float g, const SfAdamwArgs& a) {
  const float vi = v + (g * g - v) * a.one_minus_b2;
  v = vi;
  const float denom = opt_sqrt(opt_div(vi, a.bias2)) + a.eps;
  const float zi = z - opt_div(a.lr * g, denom);
  z = zi;
  const float y_old = opt_decayed(p, a.decay);
  const float x_old = opt_div(y_old - a.one_minus_b1 * zi, a.b1);
  const float x_new = a.one_minus_weight * x_old + a.weight * zi;
  p = a.one_minus_b1 * zi + a.b1 * x_new;
}

// Reduction geometry of Lamb / Adafactor pass 1 (shared with the host emulation).
constexpr int kReduceThreads = 256;
constexpr int64_t kReduceMaxBlocks = 1024;

FK_HD int64_t reduce_blocks(int64_t n) {
  int64_t b = (n + 4 * kReduceThreads - 1) / (4 * kReduceThreads);  // >= 4 elements a thread
  if (b > kReduceMaxBlocks) b = kReduceMaxBlocks;
  return b < 1 ? 1 : b;
}

}  // namespace fk_cuda
