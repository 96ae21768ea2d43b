// direct_avx2.cpp: direct_impl.h compiled with AVX2 + FMA (8 floats, 16 registers).
#define FK_DIRECT_VW 8
#define FK_DIRECT_REGS 16
#include "direct_impl.h"

fk::direct::Kernels fk::direct::kernels_avx2() { return make_kernels(); }
