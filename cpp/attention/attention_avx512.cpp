// attention_avx512.cpp: the attention block kernels (attention.inc) built with the avx512 flags
// that CMake gives files named *_avx512.cpp; entered only when fk::cpu_isa() is avx512.
#define FK_ATTN_NS avx512
#include "attention.inc"
