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

constexpr opt::UpdateKernels kUpdateKernels{&sgd,     &adam,    &adamax,  &nadam,
                                            &rmsprop, &adagrad, &adadelta};

}  // namespace FK_OPT_NS
}  // namespace fk
