// bind_runtime.cpp: fkeras._C_cuda.DeviceArray, memory_stats/empty_cache, upload_pinned,
// synchronize and device_info.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "../runtime/allocator.h"
#include "fk_cuda/binders.h"
#include "fk_cuda/device_array.h"
#include "fk_cuda/runtime.h"

namespace py = pybind11;
using fk_cuda::DeviceArray;
using fk_cuda::DType;

namespace {

DType dtype_of(const py::array& a) {
  py::dtype d = a.dtype();
  if (d.is(py::dtype::of<float>())) return DType::Float32;
  if (d.is(py::dtype::of<int32_t>())) return DType::Int32;
  if (d.is(py::dtype::of<int64_t>())) return DType::Int64;
  auto k = d.kind();
  if (k == 'f' && d.itemsize() == 4) return DType::Float32;
  if (k == 'i' && d.itemsize() == 4) return DType::Int32;
  if (k == 'i' && d.itemsize() == 8) return DType::Int64;
  throw py::value_error("DeviceArray.from_host: dtype must be float32, int32 or int64, received " +
                        std::string(py::str(d)));
}

py::dtype np_dtype(DType d) { return py::dtype(fk_cuda::dtype_name(d)); }

std::vector<int64_t> shape_of(const py::array& a) {
  return std::vector<int64_t>(a.shape(), a.shape() + a.ndim());
}

std::shared_ptr<DeviceArray> from_host(const py::array& host) {
  DType dt = dtype_of(host);
  py::array c = py::module_::import("numpy").attr("ascontiguousarray")(host);
  auto out = std::make_shared<DeviceArray>(shape_of(c), dt);
  out->copy_from_host(c.data());
  return out;
}

void copy_from_host(DeviceArray& dst, const py::array& host) {
  DType dt = dtype_of(host);
  if (dt != dst.dtype())
    throw py::value_error(std::string("DeviceArray.copy_from_host: dtype ") +
                          fk_cuda::dtype_name(dt) + " does not match the array's " +
                          fk_cuda::dtype_name(dst.dtype()));
  if (shape_of(host) != dst.shape())
    throw py::value_error("DeviceArray.copy_from_host: shape " + fk_cuda::shape_str(shape_of(host)) +
                          " does not match the array's " + fk_cuda::shape_str(dst.shape()));
  py::array c = py::module_::import("numpy").attr("ascontiguousarray")(host);
  dst.copy_from_host(c.data());
  fk_cuda::synchronize();  // c may be a temporary copy
}

// Uploads several arrays through one pinned staging buffer: one host memcpy per array into
// page-locked memory, then asynchronous copies, one synchronization at the end.
std::vector<std::shared_ptr<DeviceArray>> upload_pinned(const std::vector<py::array>& arrays) {
  std::vector<py::array> cs;
  std::vector<size_t> offs;
  fk_cuda::WorkspaceLayout layout;
  for (const auto& a : arrays) {
    dtype_of(a);
    cs.push_back(py::module_::import("numpy").attr("ascontiguousarray")(a));
    offs.push_back(layout.add(static_cast<size_t>(cs.back().nbytes())));
  }
  std::vector<std::shared_ptr<DeviceArray>> out;
  if (cs.empty()) return out;
  auto* stage = static_cast<char*>(fk_cuda::pinned_staging(layout.bytes()));
  cudaStream_t s = fk_cuda::stream();
  FK_CUDA_CHECK(cudaStreamSynchronize(s));  // the staging buffer may still feed earlier copies
  for (size_t i = 0; i < cs.size(); ++i) {
    auto d = std::make_shared<DeviceArray>(shape_of(cs[i]), dtype_of(cs[i]));
    if (d->nbytes()) {
      std::memcpy(stage + offs[i], cs[i].data(), d->nbytes());
      FK_CUDA_CHECK(cudaMemcpyAsync(d->data(), stage + offs[i], d->nbytes(),
                                    cudaMemcpyHostToDevice, s));
    }
    out.push_back(std::move(d));
  }
  FK_CUDA_CHECK(cudaStreamSynchronize(s));
  return out;
}

const char* typestr(DType d) {
  switch (d) {
    case DType::Float32: return "<f4";
    case DType::Int32: return "<i4";
    case DType::Int64: return "<i8";
  }
  return "";
}

py::dict stats_dict(int device) {
  auto s = fk_cuda::device_allocator(device).stats();
  py::dict d;
  d["allocated_bytes"] = s.allocated_bytes;
  d["requested_bytes"] = s.requested_bytes;
  d["cached_bytes"] = s.cached_bytes;
  d["reserved_bytes"] = s.reserved_bytes;
  d["peak_allocated_bytes"] = s.peak_allocated_bytes;
  d["cuda_malloc_count"] = s.raw_alloc_count;
  d["cuda_free_count"] = s.raw_free_count;
  d["alloc_count"] = s.alloc_count;
  d["cache_hits"] = s.cache_hits;
  d["live_blocks"] = s.live_blocks;
  return d;
}

void require_device(const char* what) {
  int n = 0;
  cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess || n == 0) {
    cudaGetLastError();
    throw std::runtime_error(std::string(what) + ": no CUDA device (" +
                             (err != cudaSuccess ? cudaGetErrorString(err) : "0 devices") + ")");
  }
}

}  // namespace

FK_BIND_FAMILY(runtime) {
  py::class_<DeviceArray, std::shared_ptr<DeviceArray>>(m, "DeviceArray",
      "A C-contiguous float32/int32/int64 array in GPU memory, from the caching allocator.")
      .def(py::init([](const std::vector<int64_t>& shape, const std::string& dtype) {
             require_device("DeviceArray");
             return std::make_shared<DeviceArray>(shape, fk_cuda::dtype_from_name(dtype));
           }), py::arg("shape"), py::arg("dtype") = "float32")
      .def_static("from_host", [](const py::array& a) {
             require_device("DeviceArray.from_host");
             return from_host(a);
           }, py::arg("array"), "A new device array holding a copy of the NumPy array.")
      .def_static("zeros", [](const std::vector<int64_t>& shape, const std::string& dtype) {
             require_device("DeviceArray.zeros");
             auto a = std::make_shared<DeviceArray>(shape, fk_cuda::dtype_from_name(dtype));
             a->fill_zero();
             return a;
           }, py::arg("shape"), py::arg("dtype") = "float32")
      .def("to_host", [](const DeviceArray& a) {
             py::array out(np_dtype(a.dtype()), a.shape());
             {
               py::gil_scoped_release nogil;
               a.copy_to_host(out.mutable_data());
             }
             return out;
           }, "A NumPy copy (waits for the work queued on the stream).")
      .def("copy_from_host", &copy_from_host, py::arg("array"))
      .def("fill_zero", &DeviceArray::fill_zero)
      .def_property_readonly("shape", [](const DeviceArray& a) {
             py::tuple t(a.ndim());
             for (int i = 0; i < a.ndim(); ++i) t[i] = a.shape()[i];
             return t;
           })
      .def_property_readonly("dtype", [](const DeviceArray& a) { return fk_cuda::dtype_name(a.dtype()); })
      .def_property_readonly("nbytes", &DeviceArray::nbytes)
      .def_property_readonly("size", &DeviceArray::size)
      .def_property_readonly("ndim", &DeviceArray::ndim)
      .def_property_readonly("device", &DeviceArray::device)
      .def_property_readonly("ptr", [](const DeviceArray& a) {
             return reinterpret_cast<uintptr_t>(a.data());
           })
      .def_property_readonly("__cuda_array_interface__", [](const DeviceArray& a) {
             py::dict d;
             py::tuple shape(a.ndim());
             for (int i = 0; i < a.ndim(); ++i) shape[i] = a.shape()[i];
             d["shape"] = shape;
             d["typestr"] = typestr(a.dtype());
             d["data"] = py::make_tuple(reinterpret_cast<uintptr_t>(a.data()), false);
             d["strides"] = py::none();
             d["version"] = 3;
             d["stream"] = reinterpret_cast<uintptr_t>(fk_cuda::stream());
             return d;
           })
      .def("__len__", [](const DeviceArray& a) {
             if (a.ndim() == 0) throw py::type_error("len() of a 0-d DeviceArray");
             return a.shape()[0];
           })
      .def("__repr__", [](const DeviceArray& a) {
             return "DeviceArray(shape=" + fk_cuda::shape_str(a.shape()) + ", dtype=" +
                    fk_cuda::dtype_name(a.dtype()) + ", device=cuda:" + std::to_string(a.device()) + ")";
           });
  m.def("upload_pinned", [](const std::vector<py::array>& arrays) {
    require_device("upload_pinned");
    return upload_pinned(arrays);
  }, py::arg("arrays"), "Uploads NumPy arrays through one pinned staging buffer; a list of DeviceArrays.");
  m.def("memory_stats", [](int device) {
    require_device("memory_stats");
    return stats_dict(device < 0 ? fk_cuda::current_device() : device);
  }, py::arg("device") = -1, "Caching allocator figures: allocated/cached/peak bytes, cudaMalloc count.");
  m.def("empty_cache", [](int device) {
    require_device("empty_cache");
    fk_cuda::synchronize();
    fk_cuda::device_allocator(device < 0 ? fk_cuda::current_device() : device).empty_cache();
  }, py::arg("device") = -1, "Returns every cached (unused) block to cudaFree.");
  m.def("reset_peak_memory_stats", [](int device) {
    require_device("reset_peak_memory_stats");
    fk_cuda::device_allocator(device < 0 ? fk_cuda::current_device() : device).reset_peak();
  }, py::arg("device") = -1);
  m.def("synchronize", [] {
    require_device("synchronize");
    py::gil_scoped_release nogil;
    fk_cuda::synchronize();
  }, "Waits for the work queued on fkeras' stream.");
  m.def("stream_handle", [] {
    require_device("stream_handle");
    return reinterpret_cast<uintptr_t>(fk_cuda::stream());
  }, "The cudaStream_t every fkeras kernel runs on, as an integer.");
  m.def("device_info", [](int i) {
    cudaDeviceProp p;
    FK_CUDA_CHECK(cudaGetDeviceProperties(&p, i));
    py::dict d;
    d["name"] = std::string(p.name);
    d["total_memory"] = static_cast<size_t>(p.totalGlobalMem);
    d["compute_capability"] = py::make_tuple(p.major, p.minor);
    d["multiprocessors"] = p.multiProcessorCount;
    d["l2_cache_bytes"] = p.l2CacheSize;
    return d;
  }, py::arg("index") = 0, "Name, memory, compute capability of CUDA device `index`.");
  m.def("copy_bandwidth_gbs", [](size_t nbytes, int iters) {
    require_device("copy_bandwidth_gbs");
    const int64_t n = static_cast<int64_t>(nbytes / 4);
    fk_cuda::DeviceArray a({n}, DType::Int32), b({n}, DType::Int32);
    cudaStream_t s = fk_cuda::stream();
    cudaEvent_t e0, e1;
    FK_CUDA_CHECK(cudaEventCreate(&e0));
    FK_CUDA_CHECK(cudaEventCreate(&e1));
    FK_CUDA_CHECK(cudaMemcpyAsync(b.data(), a.data(), a.nbytes(), cudaMemcpyDeviceToDevice, s));
    FK_CUDA_CHECK(cudaEventRecord(e0, s));
    for (int i = 0; i < iters; ++i)
      FK_CUDA_CHECK(cudaMemcpyAsync(b.data(), a.data(), a.nbytes(), cudaMemcpyDeviceToDevice, s));
    FK_CUDA_CHECK(cudaEventRecord(e1, s));
    FK_CUDA_CHECK(cudaEventSynchronize(e1));
    float ms = 0;
    FK_CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    return 2.0 * a.nbytes() * iters / (ms * 1e-3) / 1e9;  // read + write
  }, py::arg("nbytes") = size_t(256) << 20, py::arg("iters") = 20,
     "Measured device-to-device cudaMemcpy bandwidth in GB/s (bytes read + written).");
}
