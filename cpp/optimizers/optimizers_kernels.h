// optimizers_kernels.h: the update loops of optimizers_isa.h, written once as plain loops.
//
// Included by exactly three translation units (optimizers.cpp, optimizers_avx2.cpp,
// optimizers_avx512.cpp), each compiled with its own ISA flags, after it defines FK_OPT_NS (a
// namespace of its own, so the three instantiations never merge at link time). The loops are
// branch-free per element (options are template parameters) and use restrict pointers, so the
// compiler vectorizes them; sqrt and division stay IEEE (no -ffast-math).
// The arithmetic follows Keras 3's update_step (keras/src/optimizers/*.py) in float32.
#pragma once

#ifndef FK_OPT_NS
#error "define FK_OPT_NS before including optimizers_kernels.h"
#endif

#include <cmath>
#include <cstdint>

#include "optimizers_isa.h"

namespace fk {
namespace FK_OPT_NS {

#define FK_R __restrict__

template <bool kDecay>
inline float decayed(float p, float decay) {
  return kDecay ? p - p * decay : p;
}

// max(a, b) where a NaN in either operand wins, as np.maximum (a plain `a < b ? b : a`, like
// std::fmax, would hide a NaN in b, e.g. AMSGrad's max(vhat, v) keeping a NaN v out of vhat).
// A select on two compares, so the loops still vectorize.
inline float nan_max(float a, float b) { return (a < b || b != b) ? b : a; }

template <bool kDecay, int kMode>  // kMode: 0 plain, 1 momentum, 2 nesterov
void sgd_loop(float* FK_R p, float* FK_R vel, const float* FK_R g, int64_t n,
              const opt::SgdArgs& a) {
  for (int64_t i = 0; i < n; ++i) {
    float pi = decayed<kDecay>(p[i], a.decay);
    if (kMode == 0) {
      pi -= g[i] * a.lr;
    } else {
      const float v = vel[i] * a.momentum - g[i] * a.lr;
      vel[i] = v;
      pi += kMode == 2 ? v * a.momentum - g[i] * a.lr : v;
    }
    p[i] = pi;
  }
}

template <bool kDecay, bool kAmsgrad>
void adam_loop(float* FK_R p, float* FK_R m, float* FK_R v, float* FK_R vh, const float* FK_R g,
               int64_t n, const opt::AdamArgs& a) {
  for (int64_t i = 0; i < n; ++i) {
    const float gi = g[i];
    const float mi = m[i] + (gi - m[i]) * a.one_minus_b1;
    float vi = v[i] + (gi * gi - v[i]) * a.one_minus_b2;
    m[i] = mi;
    v[i] = vi;
    if (kAmsgrad) {
      vi = nan_max(vh[i], vi);
      vh[i] = vi;
    }
    p[i] = decayed<kDecay>(p[i], a.decay) - (mi * a.alpha) / (std::sqrt(vi) + a.eps);
  }
}

template <bool kDecay>
void adamax_loop(float* FK_R p, float* FK_R m, float* FK_R u, const float* FK_R g, int64_t n,
                 const opt::AdamaxArgs& a) {
  for (int64_t i = 0; i < n; ++i) {
    const float gi = g[i];
    const float mi = m[i] + (gi - m[i]) * a.one_minus_b1;
    const float ui = nan_max(a.b2 * u[i], std::fabs(gi));
    m[i] = mi;
    u[i] = ui;
    p[i] = decayed<kDecay>(p[i], a.decay) - (a.lr * mi) / (a.bias1 * (ui + a.eps));
  }
}

template <bool kDecay>
void nadam_loop(float* FK_R p, float* FK_R m, float* FK_R v, const float* FK_R g, int64_t n,
                const opt::NadamArgs& a) {
  for (int64_t i = 0; i < n; ++i) {
    const float gi = g[i];
    const float mi = m[i] + (gi - m[i]) * a.one_minus_b1;
    const float vi = v[i] + (gi * gi - v[i]) * a.one_minus_b2;
    m[i] = mi;
    v[i] = vi;
    const float m_hat = a.coef_m * mi + a.coef_g * gi;
    const float denominator = std::sqrt(vi * a.inv_bias2) + a.eps;
    p[i] = decayed<kDecay>(p[i], a.decay) - (m_hat * a.lr) / denominator;
  }
}

template <bool kDecay, bool kCentered, bool kMomentum>
void rmsprop_loop(float* FK_R p, float* FK_R vel, float* FK_R mom, float* FK_R avg,
                  const float* FK_R g, int64_t n, const opt::RmspropArgs& a) {
  for (int64_t i = 0; i < n; ++i) {
    const float gi = g[i];
    const float vi = a.rho * vel[i] + a.one_minus_rho * (gi * gi);
    vel[i] = vi;
    float denominator = vi + a.eps;
    if (kCentered) {
      const float ai = a.rho * avg[i] + a.one_minus_rho * gi;
      avg[i] = ai;
      denominator = vi - ai * ai + a.eps;
    }
    float increment = (a.lr * gi) / std::sqrt(denominator);
    if (kMomentum) {
      increment = a.momentum * mom[i] + increment;
      mom[i] = increment;
    }
    p[i] = decayed<kDecay>(p[i], a.decay) - increment;
  }
}

template <bool kDecay>
void adagrad_loop(float* FK_R p, float* FK_R acc, const float* FK_R g, int64_t n,
                  const opt::AdagradArgs& a) {
  for (int64_t i = 0; i < n; ++i) {
    const float gi = g[i];
    const float ai = acc[i] + gi * gi;
    acc[i] = ai;
    p[i] = decayed<kDecay>(p[i], a.decay) - (a.lr * gi) / std::sqrt(ai + a.eps);
  }
}

template <bool kDecay>
void adadelta_loop(float* FK_R p, float* FK_R ag, float* FK_R ad, const float* FK_R g, int64_t n,
                   const opt::AdadeltaArgs& a) {
  for (int64_t i = 0; i < n; ++i) {
    const float gi = g[i];
    const float agi = a.rho * ag[i] + a.one_minus_rho * (gi * gi);
    const float delta = -(std::sqrt(ad[i] + a.eps) * gi) / std::sqrt(agi + a.eps);
    ag[i] = agi;
    ad[i] = a.rho * ad[i] + a.one_minus_rho * (delta * delta);
    p[i] = decayed<kDecay>(p[i], a.decay) + a.lr * delta;
  }
}

// sign(c) with sign(0) = 0 and sign(NaN) = NaN (torch.sign).
inline float sign_nan(float c) { return c > 0.f ? 1.f : (c < 0.f ? -1.f : c); }

template <bool kDecay>
void lion_loop(float* FK_R p, float* FK_R m, const float* FK_R g, int64_t n,
               const opt::LionArgs& a) {
  for (int64_t i = 0; i < n; ++i) {
    const float gi = g[i];
    const float c = m[i] * a.b1 + gi * a.one_minus_b1;
    p[i] = decayed<kDecay>(p[i], a.decay) - sign_nan(c) * a.lr;
    m[i] = m[i] * a.b2 + gi * a.one_minus_b2;
  }
}

template <bool kDecay, bool kSqrt>
void ftrl_loop(float* FK_R p, float* FK_R acc, float* FK_R lin, const float* FK_R g, int64_t n,
               const opt::FtrlArgs& a) {
  for (int64_t i = 0; i < n; ++i) {
    const float gi = g[i];
    const float pi = decayed<kDecay>(p[i], a.decay);
    const float grad_to_use = gi + a.shrink2 * pi;
    const float old_acc = acc[i];
    const float new_acc = old_acc + gi * gi;
    const float pow_new = kSqrt ? std::sqrt(new_acc) : std::pow(new_acc, a.neg_power);
    const float pow_old = kSqrt ? std::sqrt(old_acc) : std::pow(old_acc, a.neg_power);
    const float li = lin[i] + (grad_to_use - ((pow_new - pow_old) / a.lr) * pi);
    lin[i] = li;
    const float quadratic = pow_new / a.lr + a.l2x2;
    const float clipped = li < -a.l1 ? -a.l1 : (li > a.l1 ? a.l1 : li);
    p[i] = (clipped - li) / quadratic;
    acc[i] = new_acc;
  }
}

template <bool kDecay>
opt::Sums lamb_moments_loop(float* FK_R p, float* FK_R m, float* FK_R v, const float* FK_R g,
                            int64_t n, const opt::LambArgs& a) {
  double sw = 0.0, su = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const float gi = g[i];
    const float mi = m[i] + (gi - m[i]) * a.one_minus_b1;
    const float vi = v[i] + (gi * gi - v[i]) * a.one_minus_b2;
    m[i] = mi;
    v[i] = vi;
    const float pi = decayed<kDecay>(p[i], a.decay);
    p[i] = pi;
    const float u = (mi / a.bias1) / (std::sqrt(vi / a.bias2) + a.eps);
    sw += static_cast<double>(pi) * pi;
    su += static_cast<double>(u) * u;
  }
  return {sw, su};
}

inline void lamb_apply_loop(float* FK_R p, const float* FK_R m, const float* FK_R v, int64_t n,
                            float coef, const opt::LambArgs& a) {
  for (int64_t i = 0; i < n; ++i)
    p[i] -= coef * ((m[i] / a.bias1) / (std::sqrt(v[i] / a.bias2) + a.eps));
}

template <bool kDecay>
opt::Sums adafactor_moments_loop(float* FK_R p, float* FK_R v, const float* FK_R g, int64_t n,
                                 bool update_v, const opt::AdafactorArgs& a) {
  double sp = 0.0, su = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const float gi = g[i];
    float vi = v[i];
    if (update_v) {
      vi = a.beta_2_t * vi + a.one_minus_beta_2_t * (gi * gi + a.eps1);
      v[i] = vi;
    }
    const float pi = decayed<kDecay>(p[i], a.decay);
    p[i] = pi;
    const float u = gi / std::sqrt(vi);
    sp += static_cast<double>(pi) * pi;
    su += static_cast<double>(u) * u;
  }
  return {sp, su};
}

inline void adafactor_apply_loop(float* FK_R p, const float* FK_R v, const float* FK_R g,
                                 int64_t n, float alpha, float denom) {
  for (int64_t i = 0; i < n; ++i) p[i] -= alpha * ((g[i] / std::sqrt(v[i])) / denom);
}

template <bool kNesterov>
void muon_momentum_loop(float* FK_R m, float* FK_R out, const float* FK_R g, int64_t n,
                        const opt::MuonArgs& a) {
  for (int64_t i = 0; i < n; ++i) {
    const float gi = g[i];
    const float mi = m[i] + (gi + m[i] * a.momentum_minus_1);
    m[i] = mi;
    out[i] = kNesterov ? gi + a.momentum * mi : mi;
  }
}

template <bool kDecay>
void muon_apply_loop(float* FK_R p, const float* FK_R x, int64_t n, const opt::MuonArgs& a) {
  for (int64_t i = 0; i < n; ++i)
    p[i] = decayed<kDecay>(p[i], a.decay) - (a.lr * x[i]) * a.scale;
}

// Keras 3.15 on torch: the "old" z read after z's in-place update is the new z (see
// python/fkeras/optimizers/schedule_free_adamw.py).
template <bool kDecay>
void sfadamw_loop(float* FK_R p, float* FK_R z, float* FK_R v, const float* FK_R g, int64_t n,
                  const opt::SfAdamwArgs& a) {
  for (int64_t i = 0; i < n; ++i) {
    const float gi = g[i];
    const float vi = v[i] + (gi * gi - v[i]) * a.one_minus_b2;
    v[i] = vi;
    const float denom = std::sqrt(vi / a.bias2) + a.eps;
    const float zi = z[i] - (a.lr * gi) / denom;
    z[i] = zi;
    const float y_old = decayed<kDecay>(p[i], a.decay);
    const float x_old = (y_old - a.one_minus_b1 * zi) / a.b1;
    const float x_new = a.one_minus_weight * x_old + a.weight * zi;
    p[i] = a.one_minus_b1 * zi + a.b1 * x_new;
  }
}

#undef FK_R

// ---- option dispatch: one branch per call, none per element ---------------------------------

inline void sgd(float* p, float* vel, const float* g, int64_t n, const opt::SgdArgs& a) {
  const int mode = a.momentum == 0.f ? 0 : (a.nesterov ? 2 : 1);
  const bool d = a.decay != 0.f;
  if (mode == 0) d ? sgd_loop<true, 0>(p, vel, g, n, a) : sgd_loop<false, 0>(p, vel, g, n, a);
  if (mode == 1) d ? sgd_loop<true, 1>(p, vel, g, n, a) : sgd_loop<false, 1>(p, vel, g, n, a);
  if (mode == 2) d ? sgd_loop<true, 2>(p, vel, g, n, a) : sgd_loop<false, 2>(p, vel, g, n, a);
}

inline void adam(float* p, float* m, float* v, float* vh, const float* g, int64_t n,
                 const opt::AdamArgs& a) {
  const bool d = a.decay != 0.f;
  if (vh) {
    d ? adam_loop<true, true>(p, m, v, vh, g, n, a)
      : adam_loop<false, true>(p, m, v, vh, g, n, a);
  } else {
    d ? adam_loop<true, false>(p, m, v, vh, g, n, a)
      : adam_loop<false, false>(p, m, v, vh, g, n, a);
  }
}

inline void adamax(float* p, float* m, float* u, const float* g, int64_t n,
                   const opt::AdamaxArgs& a) {
  a.decay != 0.f ? adamax_loop<true>(p, m, u, g, n, a) : adamax_loop<false>(p, m, u, g, n, a);
}

inline void nadam(float* p, float* m, float* v, const float* g, int64_t n,
                  const opt::NadamArgs& a) {
  a.decay != 0.f ? nadam_loop<true>(p, m, v, g, n, a) : nadam_loop<false>(p, m, v, g, n, a);
}

template <bool kDecay>
void rmsprop_options(float* p, float* vel, float* mom, float* avg, const float* g, int64_t n,
                     const opt::RmspropArgs& a) {
  const bool momentum = a.momentum > 0.f;
  if (avg) {
    momentum ? rmsprop_loop<kDecay, true, true>(p, vel, mom, avg, g, n, a)
             : rmsprop_loop<kDecay, true, false>(p, vel, mom, avg, g, n, a);
  } else {
    momentum ? rmsprop_loop<kDecay, false, true>(p, vel, mom, avg, g, n, a)
             : rmsprop_loop<kDecay, false, false>(p, vel, mom, avg, g, n, a);
  }
}

inline void rmsprop(float* p, float* vel, float* mom, float* avg, const float* g, int64_t n,
                    const opt::RmspropArgs& a) {
  a.decay != 0.f ? rmsprop_options<true>(p, vel, mom, avg, g, n, a)
                 : rmsprop_options<false>(p, vel, mom, avg, g, n, a);
}

inline void adagrad(float* p, float* acc, const float* g, int64_t n, const opt::AdagradArgs& a) {
  a.decay != 0.f ? adagrad_loop<true>(p, acc, g, n, a) : adagrad_loop<false>(p, acc, g, n, a);
}

inline void adadelta(float* p, float* ag, float* ad, const float* g, int64_t n,
                     const opt::AdadeltaArgs& a) {
  a.decay != 0.f ? adadelta_loop<true>(p, ag, ad, g, n, a)
                 : adadelta_loop<false>(p, ag, ad, g, n, a);
}

inline void lion(float* p, float* m, const float* g, int64_t n, const opt::LionArgs& a) {
  a.decay != 0.f ? lion_loop<true>(p, m, g, n, a) : lion_loop<false>(p, m, g, n, a);
}

inline void ftrl(float* p, float* acc, float* lin, const float* g, int64_t n,
                 const opt::FtrlArgs& a) {
  const bool d = a.decay != 0.f, sq = a.neg_power == 0.5f;
  if (sq) d ? ftrl_loop<true, true>(p, acc, lin, g, n, a) : ftrl_loop<false, true>(p, acc, lin, g, n, a);
  else d ? ftrl_loop<true, false>(p, acc, lin, g, n, a) : ftrl_loop<false, false>(p, acc, lin, g, n, a);
}

inline opt::Sums lamb_moments(float* p, float* m, float* v, const float* g, int64_t n,
                              const opt::LambArgs& a) {
  return a.decay != 0.f ? lamb_moments_loop<true>(p, m, v, g, n, a)
                        : lamb_moments_loop<false>(p, m, v, g, n, a);
}

inline opt::Sums adafactor_moments(float* p, float* v, const float* g, int64_t n, bool update_v,
                                   const opt::AdafactorArgs& a) {
  return a.decay != 0.f ? adafactor_moments_loop<true>(p, v, g, n, update_v, a)
                        : adafactor_moments_loop<false>(p, v, g, n, update_v, a);
}

inline void muon_momentum(float* m, float* out, const float* g, int64_t n, bool nesterov,
                          const opt::MuonArgs& a) {
  nesterov ? muon_momentum_loop<true>(m, out, g, n, a) : muon_momentum_loop<false>(m, out, g, n, a);
}

inline void muon_apply(float* p, const float* x, int64_t n, const opt::MuonArgs& a) {
  a.decay != 0.f ? muon_apply_loop<true>(p, x, n, a) : muon_apply_loop<false>(p, x, n, a);
}

inline void sfadamw(float* p, float* z, float* v, const float* g, int64_t n,
                    const opt::SfAdamwArgs& a) {
  a.decay != 0.f ? sfadamw_loop<true>(p, z, v, g, n, a) : sfadamw_loop<false>(p, z, v, g, n, a);
}

constexpr opt::UpdateKernels kUpdateKernels{&sgd,     &adam,    &adamax,  &nadam,
                                            &rmsprop, &adagrad, &adadelta,
                                            &lion,    &ftrl,    &lamb_moments,
                                            &lamb_apply_loop,   &adafactor_moments,
                                            &adafactor_apply_loop, &muon_momentum,
                                            &muon_apply, &sfadamw};

}  // namespace FK_OPT_NS
}  // namespace fk
