// module.cpp: fkeras._C_cuda_host, the per-element math of the CUDA kernels (cuda/include
// headers marked FK_HD) compiled for the CPU by the host compiler, so that the tests check it
// against NumPy float64 on machines without a GPU. Each family binds itself with
// FK_BIND_FAMILY in its own cuda/host/<family>.cpp.
#include "fk_cuda/binders.h"

PYBIND11_MODULE(_C_cuda_host, m) {
  m.doc() = "Host build of the CUDA kernels' per-element math (for tests)";
  fk_cuda::bind_all(m);
}
