// pooling_avx512.cpp: pool_impl.h compiled with AVX-512 (CMake adds the flags by file name).
#include "pool_impl.h"

fk::pool::Kernels fk::pool::kernels_avx512() { return make_kernels(); }
