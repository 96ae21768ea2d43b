// optimizers_isa.h: the per-ISA update loops behind cpp/optimizers/optimizers.cpp (private).
//
// optimizers.cpp turns each kernel's attributes into the float32 constants below (computed in
// float64 first: bias corrections, the Nadam momentum schedule), splits the flat buffers into
// chunks for the thread pool, and calls one of three tables of loops: scalar (optimizers.cpp,
// portable flags), avx2 (optimizers_avx2.cpp) and avx512 (optimizers_avx512.cpp). The three are
// the same plain loops (optimizers_kernels.h), vectorized by the compiler under each ISA's flags.
// Each loop reads and writes param and its slots over [0, n); grad is read only.
#pragma once

#include <cstdint>

namespace fk {
namespace opt {

// decay = weight_decay * lr (0: no decay pass at all, so inf/NaN params are left as they are).
struct SgdArgs {
  float lr, momentum, decay;
  bool nesterov;
};
struct AdamArgs {
  float alpha, one_minus_b1, one_minus_b2, eps, decay;  // alpha = lr sqrt(1-b2^t) / (1-b1^t)
};
struct AdamaxArgs {
  float lr, one_minus_b1, b2, bias1, eps, decay;  // bias1 = 1 - b1^t
};
struct NadamArgs {
  // m_hat = coef_m * m + coef_g * g; v_hat = v * inv_bias2.
  float lr, one_minus_b1, one_minus_b2, coef_m, coef_g, inv_bias2, eps, decay;
};
struct RmspropArgs {
  float lr, rho, one_minus_rho, momentum, eps, decay;
};
struct AdagradArgs {
  float lr, eps, decay;
};
struct AdadeltaArgs {
  float lr, rho, one_minus_rho, eps, decay;
};

struct LionArgs {
  float lr, b1, one_minus_b1, b2, one_minus_b2, decay;
};
struct FtrlArgs {
  // l2x2 = 2 (l2 + beta / (2 lr)); shrink2 = 2 * l2_shrinkage; neg_power = -learning_rate_power.
  float lr, neg_power, l1, l2x2, shrink2, decay;
};
struct LambArgs {
  float one_minus_b1, one_minus_b2, bias1, bias2, eps, decay;  // bias_i = 1 - b_i^t
};
struct AdafactorArgs {
  float beta_2_t, one_minus_beta_2_t, eps1, decay;
};
struct MuonArgs {
  float momentum, momentum_minus_1, lr, scale, decay;  // scale = sqrt(max(rows, cols)) rms_rate
};
struct SfAdamwArgs {
  // weight = 1 / t; bias2 = 1 - b2^t; lr already includes the warmup factor.
  float lr, b1, one_minus_b1, one_minus_b2, bias2, eps, weight, one_minus_weight, decay;
};
// Sums over a chunk, accumulated in float64 (the reductions of Lamb and Adafactor).
struct Sums {
  double a, b;
};

struct UpdateKernels {
  void (*sgd)(float* param, float* velocity, const float* grad, int64_t n, const SgdArgs& a);
  void (*adam)(float* param, float* m, float* v, float* vhat, const float* grad, int64_t n,
               const AdamArgs& a);
  void (*adamax)(float* param, float* m, float* u, const float* grad, int64_t n,
                 const AdamaxArgs& a);
  void (*nadam)(float* param, float* m, float* v, const float* grad, int64_t n,
                const NadamArgs& a);
  void (*rmsprop)(float* param, float* velocity, float* momentum_buf, float* average_grad,
                  const float* grad, int64_t n, const RmspropArgs& a);
  void (*adagrad)(float* param, float* accumulator, const float* grad, int64_t n,
                  const AdagradArgs& a);
  void (*adadelta)(float* param, float* accumulated_grad, float* accumulated_delta,
                   const float* grad, int64_t n, const AdadeltaArgs& a);
  void (*lion)(float* param, float* m, const float* grad, int64_t n, const LionArgs& a);
  void (*ftrl)(float* param, float* accumulator, float* linear, const float* grad, int64_t n,
               const FtrlArgs& a);
  // Pass 1: decay param, update m and v, return {sum param^2, sum update^2}.
  Sums (*lamb_moments)(float* param, float* m, float* v, const float* grad, int64_t n,
                       const LambArgs& a);
  // Pass 2: param -= coef * (m / bias1) / (sqrt(v / bias2) + eps).
  void (*lamb_apply)(float* param, const float* m, const float* v, int64_t n, float coef,
                     const LambArgs& a);
  // Pass 1: decay param, update v (unless factored), return {sum param^2, sum (g/sqrt(v))^2}.
  Sums (*adafactor_moments)(float* param, float* v, const float* grad, int64_t n,
                            bool update_v, const AdafactorArgs& a);
  // Pass 2: param -= alpha * ((g / sqrt(v)) / denom).
  void (*adafactor_apply)(float* param, const float* v, const float* grad, int64_t n,
                          float alpha, float denom);
  // m += g + m (momentum - 1); out = nesterov ? g + momentum m : m.
  void (*muon_momentum)(float* m, float* out, const float* grad, int64_t n, bool nesterov,
                        const MuonArgs& a);
  // decay param, then param -= ((lr * ortho) * scale).
  void (*muon_apply)(float* param, const float* ortho, int64_t n, const MuonArgs& a);
  void (*sfadamw)(float* param, float* z, float* v, const float* grad, int64_t n,
                  const SfAdamwArgs& a);
};

extern const UpdateKernels kScalarKernels;
extern const UpdateKernels kAvx2Kernels;
extern const UpdateKernels kAvx512Kernels;

}  // namespace opt
}  // namespace fk
