// check.h: argument validation shared by the binding files (the only files that see pybind11).
//
// Every buffer that crosses into a kernel is checked here first: a numpy array, the exact dtype
// (float32, or int64 for index buffers), C-contiguous, the element count the sizes imply, and
// writable if it is an output. Outputs are never converted: a converted output is a lost result.
// Sizes and window geometry are bounded (check_sizes, check_axis) and outputs may not overlap
// inputs or each other unless the kernel allows it in place (check_outputs). Failures raise
// ValueError naming the kernel, the argument, and the expected and received values.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <initializer_list>
#include <string>

namespace py = pybind11;

namespace fkb {

using Named = std::pair<const char*, int64_t>;

// Every size, stride, dilation and padding must lie below kMaxSize = 2**60 (so the bindings'
// small multiples such as 4 * U cannot overflow), the window geometry's products and sums below
// kMaxExtent = 2**62 (the kernels' index arithmetic adds a few such terms), element counts below
// 2**60 (their byte counts fit in int64). All checked without overflowing.
constexpr int64_t kMaxSize = int64_t(1) << 60;
constexpr int64_t kMaxExtent = int64_t(1) << 62;

// Raises ValueError unless every size is in [0, 2**60) (sizes are given as name/value pairs).
void check_sizes(const char* kernel, std::initializer_list<Named> sizes);
// Raises ValueError unless one spatial axis of a windowed kernel (convolution, pooling) fits:
// (out - 1) * stride + (k - 1) * dil + pad + size < 2**62, naming the argument whose product
// overflows. Each argument is a name/value pair, e.g. {"P", P}, {"R", R}, {"stride_h", sh}.
void check_axis(const char* kernel, Named size, Named out, Named k, Named stride, Named dil,
                Named pad);

// Float32 buffers. `optional` accepts None (returns nullptr).
float* out_f32(const py::object& obj, const char* kernel, const char* arg,
               std::initializer_list<int64_t> dims, bool optional = false);
const float* in_f32(const py::object& obj, const char* kernel, const char* arg,
                    std::initializer_list<int64_t> dims, bool optional = false);
// Int64 index buffers.
int64_t* out_i64(const py::object& obj, const char* kernel, const char* arg,
                 std::initializer_list<int64_t> dims, bool optional = false);
const int64_t* in_i64(const py::object& obj, const char* kernel, const char* arg,
                      std::initializer_list<int64_t> dims, bool optional = false);
// Int8 and int32 buffers (the int8 quantization kernels).
int8_t* out_i8(const py::object& obj, const char* kernel, const char* arg,
               std::initializer_list<int64_t> dims, bool optional = false);
const int8_t* in_i8(const py::object& obj, const char* kernel, const char* arg,
                    std::initializer_list<int64_t> dims, bool optional = false);
int32_t* out_i32(const py::object& obj, const char* kernel, const char* arg,
                 std::initializer_list<int64_t> dims, bool optional = false);
// Boolean buffers (numpy bool, read as bytes 0/1): attention masks.
const uint8_t* in_bool(const py::object& obj, const char* kernel, const char* arg,
                       std::initializer_list<int64_t> dims, bool optional = false);
// Raises ValueError unless every index in [0, n) lies in [0, bound).
void check_index_range(const int64_t* idx, int64_t n, int64_t bound, const char* kernel,
                       const char* arg);
// Called last, on the validated arrays. Raises ValueError when an output's memory overlaps
// another output's or an input's (byte ranges, not identity: a view into the same buffer
// counts). `in_place` lists the (output, input) pairs a kernel documents as safe in place: those
// may be the very same buffer (same start and size), never a partial overlap. None and empty
// arrays are skipped. Returns false when every output is None or empty: the kernel has nothing
// to write, and the binding returns without calling it (a kernel's loops could otherwise run
// over a huge size whose buffers are all empty, e.g. T = 2**50 with N = 0).
using NamedArray = std::pair<const char*, py::handle>;
bool check_outputs(const char* kernel, std::initializer_list<NamedArray> outputs,
                   std::initializer_list<NamedArray> inputs,
                   std::initializer_list<std::pair<const char*, const char*>> in_place = {});
// Raises ValueError unless `activation` is a code the kernel accepts (kernels.h):
// kAny for activation_*, kFused for dense/conv epilogues, kRecurrent for the recurrent kernels.
enum class ActUse { kAny, kFused, kRecurrent };
void check_activation(int64_t activation, const char* kernel, const char* arg, ActUse use);

}  // namespace fkb

// Every kernel family binds itself in its own file.
void bind_runtime(py::module_& m);
void bind_gemm(py::module_& m);
void bind_elementwise(py::module_& m);
void bind_conv(py::module_& m);
void bind_batchnorm(py::module_& m);
void bind_rnn(py::module_& m);
void bind_optimizers(py::module_& m);
void bind_quantize(py::module_& m);
void bind_inference_plan(py::module_& m);
void bind_attention(py::module_& m);
void bind_layernorm(py::module_& m);
