// activations_avx512.cpp: the activation range kernels (activations.inc) built with the avx512
// flags that CMake gives files named *_avx512.cpp; entered only when fk::cpu_isa() is avx512.
#define FK_EW_NS avx512
#include "activations.inc"
