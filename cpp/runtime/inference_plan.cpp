// inference_plan.cpp: runs a compiled inference plan (fkeras/inference_plan.h): each step is one
// call of the kernel the uncompiled layer call would make, on buffers bound beforehand.
#include "fkeras/inference_plan.h"

#include <cstring>

#include "fkeras/kernels.h"

namespace fk {
namespace {

inline float* F(void* const* slots, int64_t i) {
  return i < 0 ? nullptr : static_cast<float*>(slots[i]);
}

}  // namespace

void run_inference_plan(const std::vector<PlanStep>& steps, void* const* slots) {
  for (const PlanStep& s : steps) {
    const int64_t* p = s.p;
    float* y = F(slots, s.slot[0]);
    const float* x = F(slots, s.slot[1]);
    switch (s.op) {
      case kPlanDense:
        dense_forward(y, x, F(slots, s.slot[2]), F(slots, s.slot[3]), p[0], p[1], p[2], p[3],
                      s.f);
        break;
      case kPlanConv2d:
        conv2d_forward(y, x, F(slots, s.slot[2]), F(slots, s.slot[3]), p[0], p[1], p[2], p[3],
                       p[4], p[5], p[6], p[7], p[8], p[9], p[10], p[11], p[12], p[13], p[14],
                       p[15], p[16], s.f);
        break;
      case kPlanConv2dMaxPool:
        conv2d_forward_maxpool2d(y, x, F(slots, s.slot[2]), F(slots, s.slot[3]), p[0], p[1],
                                 p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9], p[10], p[11],
                                 p[12], p[13], p[14], p[15], p[16], s.f, p[17], p[18]);
        break;
      case kPlanMaxPool2d:
        maxpool2d_forward(y, static_cast<int64_t*>(slots[s.slot[4]]), x, p[0], p[1], p[2], p[3],
                          p[4], p[5], p[6], p[7], p[8], p[9], p[10], p[11]);
        break;
      case kPlanAvgPool2d:
        avgpool2d_forward(y, x, p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9],
                          p[10], p[11]);
        break;
      case kPlanActivation:
        activation_forward(y, x, p[0], p[1], s.f);
        break;
      case kPlanSoftmax:
        softmax_forward(y, x, p[0], p[1]);
        break;
      case kPlanBatchNorm:
        batchnorm_forward_infer(y, x, F(slots, s.slot[2]), F(slots, s.slot[3]),
                                F(slots, s.slot[4]), F(slots, s.slot[5]), p[0], p[1], p[2], s.f);
        break;
      case kPlanCopy:
        if (y != x && p[0] > 0) std::memcpy(y, x, static_cast<size_t>(p[0]) * sizeof(float));
        break;
      default:
        fail("run_inference_plan: unknown step code ", s.op);
    }
  }
}

}  // namespace fk
