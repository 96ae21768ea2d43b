// hd.h: FK_HD marks per-element math shared by the CUDA kernels and their CPU tests:
// __host__ __device__ under nvcc, plain inline C++ under the host compiler (the
// fkeras._C_cuda_host test module compiles the same headers with g++, so CI checks the math
// of every kernel against NumPy float64 without a GPU).
#pragma once

#if defined(__CUDACC__)
#define FK_HD __host__ __device__ __forceinline__
#else
#define FK_HD inline
#endif
