// attention_avx2.cpp: the attention block kernels (attention.inc) built with the avx2 flags that
// CMake gives files named *_avx2.cpp; entered only when fk::cpu_isa() is avx2.
#define FK_ATTN_NS avx2
#include "attention.inc"
