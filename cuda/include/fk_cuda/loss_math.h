// loss_math.h: per-element terms of the CUDA crossentropy and softmax kernels, as in the CPU
// kernels (cpp/elementwise/losses.inc, softmax.inc). Row reductions (max, sum of exp, dot
// products) live in the kernels; these are the terms they combine:
//   sigmoid CE   loss = (max(x, 0) - x z) + log1p(exp(-|x|)),  dlogits = dloss (sigmoid(x) - z)
//   softmax CE   loss = log(s) * sum_j z_j - sum_j z_j (l_j - m),  with m the row max and
//                s = sum_j exp(l_j - m);  dlogits = dloss (p zsum - z)
//   sparse CE    loss = log(s) - (l_label - m);  dlogits = dloss (p - [j == label])
//   softmax bwd  dx = y (dy - dot);  log_softmax bwd  dx = dy - exp(y) sum
#pragma once

#include "fk_cuda/activation_math.h"
#include "fk_cuda/hd.h"

namespace fk_cuda {

FK_HD float sigmoid_ce_term(float x, float z) {
  const float pos = x > 0.0f ? x : 0.0f;
  return (pos - x * z) + am_log1p01(am_exp_nonpos(-am_abs(x)));
}

FK_HD float sigmoid_ce_grad(float dloss, float x, float z) {
  return dloss * (am_sigmoid(x) - z);
}

// exp(x - m) for x <= m (the row max): the softmax numerator.
FK_HD float softmax_exp_term(float x, float m) { return am_exp_nonpos(x - m); }

FK_HD float softmax_grad_term(float dy, float y, float dot) { return y * (dy - dot); }

FK_HD float log_softmax_term(float x, float m, float lse) { return (x - m) - lse; }

FK_HD float log_softmax_grad_term(float dy, float y, float sum) { return dy - am_exp(y) * sum; }

FK_HD float softmax_ce_grad_term(float g, float p, float zsum, float z) {
  return g * (p * zsum - z);
}

FK_HD float sparse_ce_grad_term(float g, float p, bool is_label) {
  return is_label ? g * (p - 1.0f) : g * p;
}

// Row losses from the row's double reductions (log_s = log(sum exp(l - m))).
FK_HD float softmax_ce_row_loss(double log_s, double zsum, double zl) {
  return static_cast<float>(log_s * zsum - zl);
}

FK_HD float sparse_ce_row_loss(double log_s, float l_label, float m) {
  return static_cast<float>(log_s - static_cast<double>(l_label - m));
}

}  // namespace fk_cuda
