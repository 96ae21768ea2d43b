// device_array.cpp: fk_cuda::DeviceArray on the caching allocator.
#include "fk_cuda/device_array.h"

#include <stdexcept>
#include <utility>

#include "allocator.h"
#include "array_ops.h"
#include "fk_cuda/runtime.h"

namespace fk_cuda {

size_t dtype_size(DType d) {
  switch (d) {
    case DType::Float32: return 4;
    case DType::Int32: return 4;
    case DType::Int64: return 8;
    case DType::Float64: return 8;
    case DType::Bool: return 1;
    case DType::UInt8: return 1;
    case DType::Int8: return 1;
    case DType::Int16: return 2;
    case DType::UInt16: return 2;
    case DType::UInt32: return 4;
    case DType::UInt64: return 8;
    case DType::Float16: return 2;
  }
  return 0;
}

const char* dtype_name(DType d) {
  switch (d) {
    case DType::Float32: return "float32";
    case DType::Int32: return "int32";
    case DType::Int64: return "int64";
    case DType::Float64: return "float64";
    case DType::Bool: return "bool";
    case DType::UInt8: return "uint8";
    case DType::Int8: return "int8";
    case DType::Int16: return "int16";
    case DType::UInt16: return "uint16";
    case DType::UInt32: return "uint32";
    case DType::UInt64: return "uint64";
    case DType::Float16: return "float16";
  }
  return "?";
}

DType dtype_from_name(const std::string& name) {
  if (name == "float32") return DType::Float32;
  if (name == "int32") return DType::Int32;
  if (name == "int64") return DType::Int64;
  if (name == "float64") return DType::Float64;
  if (name == "bool") return DType::Bool;
  if (name == "uint8") return DType::UInt8;
  if (name == "int8") return DType::Int8;
  if (name == "int16") return DType::Int16;
  if (name == "uint16") return DType::UInt16;
  if (name == "uint32") return DType::UInt32;
  if (name == "uint64") return DType::UInt64;
  if (name == "float16") return DType::Float16;
  throw std::invalid_argument(
      "DeviceArray: dtype must be a NumPy bool, integer or float16/32/64 name, received '" +
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

int64_t shape_size(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0)
      throw std::invalid_argument("DeviceArray: every dimension of shape must be >= 0, received " +
                                  shape_str(shape));
    n *= d;
  }
  return n;
}

DeviceBlock::DeviceBlock(size_t nbytes, int dev) : device(dev) {
  ptr = device_allocator(device).allocate(nbytes);
}

DeviceBlock::~DeviceBlock() {
  try {
    device_allocator(device).deallocate(ptr);
  } catch (...) {
  }
}

DeviceArray::DeviceArray(std::vector<int64_t> shape, DType dtype)
    : shape_(std::move(shape)), dtype_(dtype) {
  size_ = shape_size(shape_);
  device_ = current_device();
  if (size_ > 0) {
    block_ = std::make_shared<DeviceBlock>(nbytes(), device_);
    ptr_ = block_->ptr;
  }
}

DeviceArray::~DeviceArray() = default;

DeviceArray::DeviceArray(DeviceArray&& o) noexcept
    : shape_(std::move(o.shape_)), size_(o.size_), dtype_(o.dtype_), device_(o.device_),
      block_(std::move(o.block_)), ptr_(o.ptr_) {
  o.shape_.clear();
  o.size_ = 0;
  o.ptr_ = nullptr;
}

DeviceArray& DeviceArray::operator=(DeviceArray&& o) noexcept {
  if (this != &o) {
    shape_ = std::move(o.shape_);
    size_ = o.size_;
    dtype_ = o.dtype_;
    device_ = o.device_;
    block_ = std::move(o.block_);
    ptr_ = o.ptr_;
    o.shape_.clear();
    o.size_ = 0;
    o.ptr_ = nullptr;
  }
  return *this;
}

DeviceArray DeviceArray::view(const DeviceArray& base, std::vector<int64_t> shape, int64_t offset) {
  DeviceArray v;
  v.size_ = shape_size(shape);
  if (offset < 0 || offset + v.size_ > base.size_)
    throw std::out_of_range("DeviceArray.view: elements [" + std::to_string(offset) + ", " +
                            std::to_string(offset + v.size_) + ") are outside an array of " +
                            std::to_string(base.size_) + " elements");
  v.shape_ = std::move(shape);
  v.dtype_ = base.dtype_;
  v.device_ = base.device_;
  v.block_ = base.block_;
  v.ptr_ = v.size_ > 0 ? static_cast<char*>(base.ptr_) + offset * dtype_size(base.dtype_) : nullptr;
  return v;
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

void DeviceArray::copy_from(const DeviceArray& src) {
  if (src.dtype_ != dtype_ || src.size_ != size_)
    throw std::invalid_argument("DeviceArray.copy_from: source " + std::string(dtype_name(src.dtype_)) +
                                " " + shape_str(src.shape_) + " does not match the destination " +
                                dtype_name(dtype_) + " " + shape_str(shape_));
  if (nbytes() == 0 || src.ptr_ == ptr_) return;
  FK_CUDA_CHECK(cudaMemcpyAsync(ptr_, src.ptr_, nbytes(), cudaMemcpyDeviceToDevice, stream()));
}

void DeviceArray::fill(double value) {
  if (nbytes() == 0) return;
  launch_fill(ptr_, size_, dtype_, value, stream());
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
