// activations_avx2.cpp: the activation range kernels (activations.inc) built with the avx2
// flags that CMake gives files named *_avx2.cpp; entered only when fk::cpu_isa() is avx2.
#define FK_EW_NS avx2
#include "activations.inc"
