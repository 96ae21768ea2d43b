// conv.cuh: launchers of the CUDA convolution and pooling kernels (NHWC, fkeras._C semantics,
// see fkeras/kernels.h), on a given stream. Sizes are checked by the bindings.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "fk_cuda/conv_math.h"

namespace fk_cuda {

void conv2d_forward(cudaStream_t s, float* y, const float* x, const float* w, const float* bias,
                    const conv_math::Geom& g, int64_t activation, float alpha);
void conv2d_backward_input(cudaStream_t s, float* dx, const float* dy, const float* w,
                           const conv_math::Geom& g);
void conv2d_backward_weight(cudaStream_t s, float* dw, const float* dy, const float* x,
                            const conv_math::Geom& g);
// Pooling: g.K == g.C, dilation 1, groups 1 (R, S the window; P, Q the output).
void maxpool2d_forward(cudaStream_t s, float* y, int64_t* indices, const float* x,
                       const conv_math::Geom& g);
// *bad (device int) is set to 1 when an index lies outside its (n, c) slice of x.
void maxpool2d_backward(cudaStream_t s, float* dx, const float* dy, const int64_t* indices,
                        const conv_math::Geom& g, int* bad);
void avgpool2d_forward(cudaStream_t s, float* y, const float* x, const conv_math::Geom& g);
void avgpool2d_backward(cudaStream_t s, float* dx, const float* dy, const conv_math::Geom& g);

}  // namespace fk_cuda
