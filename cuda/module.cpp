// module.cpp: the fkeras._C_cuda extension module: version, build facts and device queries.
// Kernel families bind themselves from their own files (FK_BIND_FAMILY, fk_cuda/binders.h).
#include <cuda_runtime.h>
#include <pybind11/pybind11.h>

#include <string>

#include "fk_cuda/binders.h"
#include "fkeras_cuda_build_info.h"

namespace py = pybind11;

namespace {

// Number of usable CUDA devices; 0 (never an exception) when there is no driver or device.
int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no driver" error
    return 0;
  }
  return n;
}

std::string status() {
  int n = 0;
  cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    cudaGetLastError();
    return std::string("no CUDA device (") + cudaGetErrorString(err) + ")";
  }
  return n == 0 ? "no CUDA device" : std::to_string(n) + " CUDA device(s)";
}

}  // namespace

PYBIND11_MODULE(_C_cuda, m) {
  m.doc() = "fkeras CUDA kernels";
  m.attr("__version__") = FKERAS_VERSION;
  py::dict build;
  build["version"] = FKERAS_VERSION;
  build["cuda_archs"] = FKERAS_CUDA_ARCHS;
  build["nvcc"] = FKERAS_CUDA_COMPILER;
  build["cudart"] = "static";
  m.attr("build_info") = build;
  m.def("device_count", &device_count, "Number of CUDA devices (0 without a driver).");
  m.def("status", &status, "A one-line description of the CUDA devices, or why there are none.");
  m.def("device_name", [](int i) {
    cudaDeviceProp p;
    if (cudaGetDeviceProperties(&p, i) != cudaSuccess) {
      cudaGetLastError();
      throw py::value_error("no CUDA device " + std::to_string(i));
    }
    return std::string(p.name);
  }, py::arg("index") = 0);
  fk_cuda::bind_all(m);
}
