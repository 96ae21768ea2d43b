// device_array.h: fk_cuda::DeviceArray, a C-contiguous array in GPU memory (Python:
// fkeras._C_cuda.DeviceArray). Memory comes from the caching allocator of the current device
// and goes back to it when the array is destroyed (stream-ordered on fk_cuda::stream()).
//
// Kernel bindings take arrays by reference and check them before launching:
//   m.def("relu", [](DeviceArray& out, const DeviceArray& x) {
//     fk_cuda::check_same_shape(out, x, "relu", "out", "x");
//     fk_cuda::check_dtype(x, DType::Float32, "relu", "x");
//     launch_relu(out.data_as<float>(), x.data_as<float>(), x.size(), fk_cuda::stream());
//   });
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace fk_cuda {

// Float32/Int32/Int64 are what kernels compute on; the others are held (copied, viewed,
// filled) so that any numeric value an op produces can stay on the device with its dtype.
enum class DType { Float32, Int32, Int64, Float64, Bool, UInt8, Int8, Int16, UInt16, UInt32,
                   UInt64, Float16 };

size_t dtype_size(DType d);
// "float32", "int32", "int64".
const char* dtype_name(DType d);
// Parses a NumPy-style name; throws std::invalid_argument (Python ValueError) otherwise.
DType dtype_from_name(const std::string& name);

// One allocation from the caching allocator, shared by an array and its views; returned to
// the allocator when the last of them goes.
struct DeviceBlock {
  DeviceBlock(size_t nbytes, int device);
  ~DeviceBlock();
  DeviceBlock(const DeviceBlock&) = delete;
  DeviceBlock& operator=(const DeviceBlock&) = delete;
  void* ptr = nullptr;
  int device = 0;
};

class DeviceArray {
 public:
  // Uninitialised memory for `shape` (every dim >= 0; a 0-size array holds no memory).
  DeviceArray(std::vector<int64_t> shape, DType dtype);
  ~DeviceArray();
  // A view of `size(shape)` elements of `base` starting `offset` elements after base's first
  // (same block, same dtype); throws std::out_of_range when it does not fit inside base.
  static DeviceArray view(const DeviceArray& base, std::vector<int64_t> shape, int64_t offset);
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  DeviceArray(DeviceArray&& other) noexcept;  // leaves `other` empty (size 0, no memory)
  DeviceArray& operator=(DeviceArray&& other) noexcept;

  void* data() { return ptr_; }
  const void* data() const { return ptr_; }
  template <class T>
  T* data_as() { return static_cast<T*>(ptr_); }
  template <class T>
  const T* data_as() const { return static_cast<const T*>(ptr_); }

  const std::vector<int64_t>& shape() const { return shape_; }
  int ndim() const { return static_cast<int>(shape_.size()); }
  int64_t dim(int i) const { return shape_[i < 0 ? i + ndim() : i]; }
  int64_t size() const { return size_; }  // number of elements
  size_t nbytes() const { return static_cast<size_t>(size_) * dtype_size(dtype_); }
  DType dtype() const { return dtype_; }
  int device() const { return device_; }

  // Host <-> device copies on fk_cuda::stream(); `host` holds nbytes() bytes. to_host waits
  // for the copy; from_host returns once the source may be reused (pageable memory).
  void copy_from_host(const void* host);
  void copy_to_host(void* host) const;
  void fill_zero();  // cudaMemsetAsync to 0 on the stream
  // Device-to-device copy of `src` (same dtype and size) into this array, on the stream.
  void copy_from(const DeviceArray& src);
  // Every element set to `value` (converted to the dtype), on the stream.
  void fill(double value);
  // The start of the allocation this array (or view) lives in: equal for arrays that share
  // memory.
  const void* block_ptr() const { return block_ ? block_->ptr : nullptr; }

 private:
  DeviceArray() = default;
  std::vector<int64_t> shape_;
  int64_t size_ = 0;
  DType dtype_ = DType::Float32;
  int device_ = 0;
  std::shared_ptr<DeviceBlock> block_;
  void* ptr_ = nullptr;
};

// Number of elements of `shape`; throws std::invalid_argument on a negative dimension.
int64_t shape_size(const std::vector<int64_t>& shape);

// Argument checks for bindings: throw std::invalid_argument (Python ValueError) naming the
// function, the argument, the expected and the received value.
void check_dtype(const DeviceArray& a, DType expected, const char* fn, const char* arg);
void check_shape(const DeviceArray& a, const std::vector<int64_t>& expected, const char* fn,
                 const char* arg);
void check_same_shape(const DeviceArray& a, const DeviceArray& b, const char* fn,
                      const char* arg_a, const char* arg_b);
std::string shape_str(const std::vector<int64_t>& shape);

}  // namespace fk_cuda
