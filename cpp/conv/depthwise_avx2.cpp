// depthwise_avx2.cpp: depthwise_impl.h compiled with AVX2 + FMA (CMake adds the flags by name).
#include "depthwise_impl.h"

fk::depthwise::Kernels fk::depthwise::kernels_avx2() { return make_kernels(); }
