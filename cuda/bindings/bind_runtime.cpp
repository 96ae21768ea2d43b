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
#include "../runtime/array_ops.h"
#include "fk_cuda/binders.h"
#include "fk_cuda/device_array.h"
#include "fk_cuda/runtime.h"

namespace py = pybind11;
using fk_cuda::DeviceArray;
using fk_cuda::DType;

namespace {

DType dtype_of(const py::array& a) {
  py::dtype d = a.dtype();
  auto k = d.kind();
  auto n = d.itemsize();
  if (k == 'f' && n == 4) return DType::Float32;
  if (k == 'i' && n == 4) return DType::Int32;
  if (k == 'i' && n == 8) return DType::Int64;
  if (k == 'f' && n == 8) return DType::Float64;
  if (k == 'b' && n == 1) return DType::Bool;
  if (k == 'u' && n == 1) return DType::UInt8;
  if (k == 'i' && n == 1) return DType::Int8;
  if (k == 'i' && n == 2) return DType::Int16;
  if (k == 'u' && n == 2) return DType::UInt16;
  if (k == 'u' && n == 4) return DType::UInt32;
  if (k == 'u' && n == 8) return DType::UInt64;
  if (k == 'f' && n == 2) return DType::Float16;
  throw py::value_error(
      "DeviceArray.from_host: dtype must be bool, an integer or float16/32/64, received " +
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
    case DType::Float64: return "<f8";
    case DType::Bool: return "|b1";
    case DType::UInt8: return "|u1";
    case DType::Int8: return "|i1";
    case DType::Int16: return "<i2";
    case DType::UInt16: return "<u2";
    case DType::UInt32: return "<u4";
    case DType::UInt64: return "<u8";
    case DType::Float16: return "<f2";
  }
  return "";
}

// NumPy's reshape rule: one -1 takes what is left; the element count must not change.
std::vector<int64_t> resolve_shape(const DeviceArray& a, std::vector<int64_t> shape) {
  int64_t known = 1;
  int free_axis = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1 && free_axis < 0) {
      free_axis = static_cast<int>(i);
    } else if (shape[i] < 0) {
      throw py::value_error("DeviceArray.reshape: invalid shape " + fk_cuda::shape_str(shape));
    } else {
      known *= shape[i];
    }
  }
  if (free_axis >= 0) {
    if (known == 0 || a.size() % known != 0)
      throw py::value_error("DeviceArray.reshape: cannot reshape an array of size " +
                            std::to_string(a.size()) + " into shape " + fk_cuda::shape_str(shape));
    shape[free_axis] = a.size() / known;
    known = a.size();
  }
  if (known != a.size())
    throw py::value_error("DeviceArray.reshape: cannot reshape an array of size " +
                          std::to_string(a.size()) + " into shape " + fk_cuda::shape_str(shape));
  return shape;
}

std::vector<int64_t> shape_arg(const py::args& args) {
  std::vector<int64_t> shape;
  if (args.size() == 1 && !py::isinstance<py::int_>(args[0])) {
    for (auto d : args[0]) shape.push_back(d.cast<int64_t>());
  } else {
    for (auto d : args) shape.push_back(d.cast<int64_t>());
  }
  return shape;
}

// a[key] for key an int or a step-1 slice on the first axis: a view (contiguous by
// construction); anything else is a TypeError (fkeras ops index device arrays only so).
DeviceArray first_axis_view(const DeviceArray& a, const py::object& key) {
  if (key.is(py::ellipsis())) return DeviceArray::view(a, a.shape(), 0);  // any rank, 0-d too
  if (a.ndim() == 0) throw py::type_error("DeviceArray: a 0-d array cannot be indexed");
  int64_t n = a.shape()[0];
  int64_t inner = n ? a.size() / n : 0;
  if (n == 0) {
    inner = 1;
    for (int i = 1; i < a.ndim(); ++i) inner *= a.shape()[i];
  }
  std::vector<int64_t> rest(a.shape().begin() + 1, a.shape().end());
  if (!py::isinstance<py::slice>(key) && PyIndex_Check(key.ptr())) {  // int, np.int64, ...
    const int64_t given = py::int_(key).cast<int64_t>();
    int64_t i = given < 0 ? given + n : given;
    if (i < 0 || i >= n)
      throw py::index_error("DeviceArray: index " + std::to_string(given) +
                            " is out of bounds for axis 0 with size " + std::to_string(n));
    return DeviceArray::view(a, rest, i * inner);
  }
  if (py::isinstance<py::slice>(key)) {
    size_t start, stop, step, len;
    if (!key.cast<py::slice>().compute(static_cast<size_t>(n), &start, &stop, &step, &len))
      throw py::error_already_set();
    if (step != 1) throw py::type_error("DeviceArray: only step-1 slices are views");
    std::vector<int64_t> shape{static_cast<int64_t>(len)};
    shape.insert(shape.end(), rest.begin(), rest.end());
    return DeviceArray::view(a, shape, static_cast<int64_t>(start) * inner);
  }
  throw py::type_error("DeviceArray: indices must be an int, a step-1 slice or ..., received " +
                       std::string(py::str(py::type::of(key))));
}

// dst[...] = value: a DeviceArray of the same dtype and size (device copy), a NumPy array of
// the same shape (converted to dst's dtype, uploaded), or a Python number (fill).
void assign(DeviceArray& dst, const py::object& value) {
  if (py::isinstance<DeviceArray>(value)) {
    dst.copy_from(value.cast<const DeviceArray&>());
    return;
  }
  if (py::isinstance<py::float_>(value) || py::isinstance<py::int_>(value) ||
      py::isinstance<py::bool_>(value)) {
    dst.fill(value.cast<double>());
    return;
  }
  py::module_ np = py::module_::import("numpy");
  py::array host = np.attr("asarray")(value, py::str(fk_cuda::dtype_name(dst.dtype())));
  if (host.ndim() == 0) {
    dst.fill(host.attr("item")().cast<double>());
    return;
  }
  copy_from_host(dst, host);
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
      .def_property_readonly("dtype", [](const DeviceArray& a) { return np_dtype(a.dtype()); })
      .def("reshape", [](const DeviceArray& a, const py::args& args) {
             return DeviceArray::view(a, resolve_shape(a, shape_arg(args)), 0);
           }, "A view with another shape (same elements; one -1 allowed).")
      .def("__getitem__", &first_axis_view, py::arg("key"))
      .def("__setitem__", [](DeviceArray& a, const py::object& key, const py::object& value) {
             DeviceArray view = first_axis_view(a, key);
             assign(view, value);
           }, py::arg("key"), py::arg("value"))
      .def("copy_from", &DeviceArray::copy_from, py::arg("src"),
           "Device-to-device copy of `src` (same dtype and size) into this array.")
      .def("fill", &DeviceArray::fill, py::arg("value"), "Sets every element to `value`.")
      .def_property_readonly("block_ptr", [](const DeviceArray& a) {
             return reinterpret_cast<uintptr_t>(a.block_ptr());
           }, "The start of the allocation: equal for arrays that share memory.")
      .def("__array__", [](const DeviceArray&, const py::args&, const py::kwargs&) -> py::object {
             throw py::type_error(
                 "A DeviceArray lives in GPU memory: copy it with .to_host() (fkeras Tensors "
                 "holding one convert with np.asarray or .numpy()).");
           })
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
  m.def("array_add", [](DeviceArray& out, const DeviceArray& a, const DeviceArray& b) {
    fk_cuda::check_dtype(out, DType::Float32, "array_add", "out");
    fk_cuda::check_dtype(a, DType::Float32, "array_add", "a");
    fk_cuda::check_dtype(b, DType::Float32, "array_add", "b");
    fk_cuda::check_same_shape(out, a, "array_add", "out", "a");
    fk_cuda::check_same_shape(out, b, "array_add", "out", "b");
    fk_cuda::launch_add(out.data_as<float>(), a.data_as<float>(), b.data_as<float>(), out.size(),
                        fk_cuda::stream());
  }, py::arg("out"), py::arg("a"), py::arg("b"), "out = a + b (float32, same shapes; out may be a or b).");
  m.def("array_axpby", [](DeviceArray& out, const DeviceArray& a, const DeviceArray& b,
                          double alpha, double beta) {
    fk_cuda::check_dtype(out, DType::Float32, "array_axpby", "out");
    fk_cuda::check_dtype(a, DType::Float32, "array_axpby", "a");
    fk_cuda::check_dtype(b, DType::Float32, "array_axpby", "b");
    fk_cuda::check_same_shape(out, a, "array_axpby", "out", "a");
    fk_cuda::check_same_shape(out, b, "array_axpby", "out", "b");
    fk_cuda::launch_axpby(out.data_as<float>(), a.data_as<float>(), b.data_as<float>(),
                          static_cast<float>(alpha), static_cast<float>(beta), out.size(),
                          fk_cuda::stream());
  }, py::arg("out"), py::arg("a"), py::arg("b"), py::arg("alpha"), py::arg("beta"),
     "out = alpha * a + beta * b (float32, same shapes; out may be a or b).");
  m.def("array_scale", [](DeviceArray& out, const DeviceArray& a, double alpha) {
    fk_cuda::check_dtype(out, DType::Float32, "array_scale", "out");
    fk_cuda::check_dtype(a, DType::Float32, "array_scale", "a");
    fk_cuda::check_same_shape(out, a, "array_scale", "out", "a");
    fk_cuda::launch_scale(out.data_as<float>(), a.data_as<float>(), static_cast<float>(alpha),
                          out.size(), fk_cuda::stream());
  }, py::arg("out"), py::arg("a"), py::arg("alpha"),
     "out = alpha * a (float32, alpha rounded to float32 first; out may be a).");
  m.def("array_sum", [](DeviceArray& out, const DeviceArray& a, double alpha) {
    fk_cuda::check_dtype(out, DType::Float32, "array_sum", "out");
    fk_cuda::check_dtype(a, DType::Float32, "array_sum", "a");
    if (out.size() != 1)
      throw py::value_error("array_sum: argument `out` must hold one element, received shape " +
                            fk_cuda::shape_str(out.shape()));
    DeviceArray partials({fk_cuda::kSumBlocks}, DType::Float64);
    fk_cuda::launch_sum(out.data_as<float>(), a.data_as<float>(), a.size(), alpha,
                        partials.data_as<double>(), fk_cuda::stream());
  }, py::arg("out"), py::arg("a"), py::arg("alpha") = 1.0,
     "out = alpha * sum(a) (float64 accumulation, deterministic).");
  m.def("array_broadcast_scalar", [](DeviceArray& out, const DeviceArray& src, double alpha) {
    fk_cuda::check_dtype(out, DType::Float32, "array_broadcast_scalar", "out");
    fk_cuda::check_dtype(src, DType::Float32, "array_broadcast_scalar", "src");
    if (src.size() != 1)
      throw py::value_error("array_broadcast_scalar: argument `src` must hold one element, "
                            "received shape " + fk_cuda::shape_str(src.shape()));
    fk_cuda::launch_broadcast_scalar(out.data_as<float>(), src.data_as<float>(), alpha, out.size(),
                                     fk_cuda::stream());
  }, py::arg("out"), py::arg("src"), py::arg("alpha") = 1.0,
     "out[...] = alpha * src[0] (a device scalar broadcast).");
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
