// pooling_avx2.cpp: pool_impl.h compiled with AVX2 + FMA (CMake adds the flags by file name).
#include "pool_impl.h"

fk::pool::Kernels fk::pool::kernels_avx2() { return make_kernels(); }
