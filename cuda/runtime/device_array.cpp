// device_array.cpp: fk_cuda::DeviceArray on the caching allocator.
#include "fk_cuda/device_array.h"

#include <stdexcept>
#include <utility>

#include "allocator.h"
#include "fk_cuda/runtime.h"

namespace fk_cuda {

size_t dtype_size(DType d) {
  switch (d) {
    case DType::Float32: return 4;
    case DType::Int32: return 4;
    case DType::Int64: return 8;
  }
  return 0;
}

const char* dtype_name(DType d) {
  switch (d) {
    case DType::Float32: return "float32";
    case DType::Int32: return "int32";
    case DType::Int64: return "int64";
  }
  return "?";
}

DType dtype_from_name(const std::string& name) {
  if (name == "float32") return DType::Float32;
  if (name == "int32") return DType::Int32;
  if (name == "int64") return DType::Int64;
  throw std::invalid_argument("DeviceArray: dtype must be one of float32, int32, int64, received '" +
                              name + "'");
}

std::string shape_str(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    s += std::to_string(shape[i]);
    if (shape.size() == 1 || i + 1 < shape.size()) s += shape.size() == 1 ? "," : ", ";
  }
  return s + ")";
}

DeviceArray::DeviceArray(std::vector<int64_t> shape, DType dtype)
    : shape_(std::move(shape)), dtype_(dtype) {
  size_ = 1;
  for (int64_t d : shape_) {
    if (d < 0)
      throw std::invalid_argument("DeviceArray: every dimension of shape must be >= 0, received " +
                                  shape_str(shape_));
    size_ *= d;
  }
  device_ = current_device();
  if (size_ > 0) ptr_ = device_allocator(device_).allocate(nbytes());
}

void DeviceArray::release() noexcept {
  if (ptr_ != nullptr) {
    try {
      device_allocator(device_).deallocate(ptr_);
    } catch (...) {
    }
    ptr_ = nullptr;
  }
}

DeviceArray::~DeviceArray() { release(); }

DeviceArray::DeviceArray(DeviceArray&& o) noexcept
    : shape_(std::move(o.shape_)), size_(o.size_), dtype_(o.dtype_), device_(o.device_), ptr_(o.ptr_) {
  o.ptr_ = nullptr;
  o.size_ = 0;
}

DeviceArray& DeviceArray::operator=(DeviceArray&& o) noexcept {
  if (this != &o) {
    release();
    shape_ = std::move(o.shape_);
    size_ = o.size_;
    dtype_ = o.dtype_;
    device_ = o.device_;
    ptr_ = o.ptr_;
    o.ptr_ = nullptr;
    o.size_ = 0;
  }
  return *this;
}

void DeviceArray::copy_from_host(const void* host) {
  if (nbytes() == 0) return;
  FK_CUDA_CHECK(cudaMemcpyAsync(ptr_, host, nbytes(), cudaMemcpyHostToDevice, stream()));
}

void DeviceArray::copy_to_host(void* host) const {
  if (nbytes() == 0) return;
  cudaStream_t s = stream();
  FK_CUDA_CHECK(cudaMemcpyAsync(host, ptr_, nbytes(), cudaMemcpyDeviceToHost, s));
  FK_CUDA_CHECK(cudaStreamSynchronize(s));
}

void DeviceArray::fill_zero() {
  if (nbytes() == 0) return;
  FK_CUDA_CHECK(cudaMemsetAsync(ptr_, 0, nbytes(), stream()));
}

void check_dtype(const DeviceArray& a, DType expected, const char* fn, const char* arg) {
  if (a.dtype() != expected)
    throw std::invalid_argument(std::string(fn) + ": argument `" + arg + "` must be " +
                                dtype_name(expected) + ", received " + dtype_name(a.dtype()));
}

void check_shape(const DeviceArray& a, const std::vector<int64_t>& expected, const char* fn,
                 const char* arg) {
  if (a.shape() != expected)
    throw std::invalid_argument(std::string(fn) + ": argument `" + arg + "` must have shape " +
                                shape_str(expected) + ", received " + shape_str(a.shape()));
}

void check_same_shape(const DeviceArray& a, const DeviceArray& b, const char* fn,
                      const char* arg_a, const char* arg_b) {
  if (a.shape() != b.shape())
    throw std::invalid_argument(std::string(fn) + ": arguments `" + arg_a + "` " +
                                shape_str(a.shape()) + " and `" + arg_b + "` " +
                                shape_str(b.shape()) + " must have the same shape");
}

}  // namespace fk_cuda
