// depthwise_avx512.cpp: depthwise_impl.h compiled with AVX-512 (CMake adds the flags by name).
#include "depthwise_impl.h"

fk::depthwise::Kernels fk::depthwise::kernels_avx512() { return make_kernels(); }
