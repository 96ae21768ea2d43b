// direct_avx512.cpp: direct_impl.h compiled with AVX-512 (16 floats, 32 registers).
#define FK_DIRECT_VW 16
#define FK_DIRECT_REGS 32
#include "direct_impl.h"

fk::direct::Kernels fk::direct::kernels_avx512() { return make_kernels(); }
