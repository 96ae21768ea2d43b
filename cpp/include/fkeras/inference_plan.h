// inference_plan.h: a compiled inference plan, a list of kernel steps over numbered buffers
// ("slots") that runs in one call (python/fkeras/models/compiled_plan.py lowers a model into it;
// ARCHITECTURE.md "Compiled inference plans" gives the design).
//
// Slots are float32 buffers (or int64 for max-pool indices) owned by Python: the arena of
// intermediate values, the weights, and the call's inputs and outputs, bound afresh per call.
// Every step reads and writes whole slots; the binding checks once, when a step is added, that
// each slot holds exactly the element count the step's sizes imply, so a run cannot index
// outside its buffers.
#pragma once

#include <cstdint>
#include <vector>

namespace fk {

enum PlanOp : int64_t {
  // y = act(x (M, K) @ w (K, N) + b [opt]);  p: M, N, K, activation
  kPlanDense = 0,
  // y = act(conv2d(x, w) + b [opt]); p: N H W C K R S P Q sh sw dh dw pt pl groups activation
  kPlanConv2d = 1,
  // y, indices (aux) = maxpool2d(x);  p: N H W C P Q R S sh sw pt pl
  kPlanMaxPool2d = 2,
  // y = avgpool2d(x);  p: as max pooling
  kPlanAvgPool2d = 3,
  // y = act(x) (may run in place);  p: n, activation
  kPlanActivation = 4,
  // y = softmax(x) over the last axis (may run in place);  p: rows, cols
  kPlanSoftmax = 5,
  // y = batchnorm_forward_infer(x; mean = w, var = b, gamma = aux [opt], beta = aux2 [opt]);
  // p: outer, C, inner; f: epsilon
  kPlanBatchNorm = 6,
  // y = x (a copy);  p: n
  kPlanCopy = 7,
  // y (N, P / pool_h, Q / pool_w, K) = conv2d_forward_maxpool2d(x, w, b [opt]): the conv2d step
  // then a 'valid' max pooling at stride == pool, the convolution's output never written;
  // p: as conv2d, then pool_h pool_w
  kPlanConv2dMaxPool = 8,
};

constexpr int kPlanSlots = 6;    // y, x, w, b, aux, aux2
constexpr int kPlanParams = 19;  // the longest list: conv2d + max pool's

struct PlanStep {
  int64_t op = 0;
  int64_t slot[kPlanSlots] = {-1, -1, -1, -1, -1, -1};
  int64_t p[kPlanParams] = {};
  float f = 0.f;  // alpha (activations) or epsilon (batch norm)
};

// Runs `steps` in order on the slot pointers (float* or int64_t*, as each step expects).
void run_inference_plan(const std::vector<PlanStep>& steps, void* const* slots);

}  // namespace fk
