// conv.cuh: launchers of the CUDA convolution and pooling kernels (NHWC, fkeras._C semantics,
// see fkeras/kernels.h), on a given stream. Sizes are checked by the bindings; the conv
// launchers throw std::invalid_argument before any launch when a grid would exceed CUDA's
// limits (more than 65535 groups x weight-gradient splits, or 8388480 channels per group).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "fk_cuda/conv_math.h"

namespace fk_cuda {

void conv2d_forward(cudaStream_t s, float* y, const float* x, const float* w, const float* bias,
                    const conv_math::Geom& g, int64_t activation, float alpha);
void conv2d_backward_input(cudaStream_t s, float* dx, const float* dy, const float* w,
                           const conv_math::Geom& g);
// The weight gradient splits its N*P*Q reduction into chunks (conv_math::wgrad_split) whose
// partial sums need `conv2d_backward_weight_workspace(g)` floats of device memory (0: none;
// then `workspace` may be null); the workspace must not overlap dw, dy or x.
int64_t conv2d_backward_weight_workspace(const conv_math::Geom& g);
void conv2d_backward_weight(cudaStream_t s, float* dw, const float* dy, const float* x,
                            const conv_math::Geom& g, float* workspace);
// Pooling: g.K == g.C, dilation 1, groups 1 (R, S the window; P, Q the output).
void maxpool2d_forward(cudaStream_t s, float* y, int64_t* indices, const float* x,
                       const conv_math::Geom& g);
// *bad (device int) is set to 1 when an index lies outside its (n, c) slice of x.
void maxpool2d_backward(cudaStream_t s, float* dx, const float* dy, const int64_t* indices,
                        const conv_math::Geom& g, int* bad);
void avgpool2d_forward(cudaStream_t s, float* y, const float* x, const conv_math::Geom& g);
void avgpool2d_backward(cudaStream_t s, float* dx, const float* dy, const conv_math::Geom& g);

}  // namespace fk_cuda
