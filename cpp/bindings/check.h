// check.h: argument validation shared by the binding files (the only files that see pybind11).
//
// Every buffer that crosses into a kernel is checked here first: a numpy array, the exact dtype
// (float32, or int64 for index buffers), C-contiguous, the element count the sizes imply, and
// writable if it is an output. Outputs are never converted: a converted output is a lost result.
// Failures raise ValueError naming the kernel, the argument, and the expected and received
// shapes.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <initializer_list>
#include <string>

namespace py = pybind11;

namespace fkb {

// Raises ValueError unless every size is >= 0 (sizes are given as name/value pairs).
void check_sizes(const char* kernel, std::initializer_list<std::pair<const char*, int64_t>> sizes);

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
// Raises ValueError unless every index in [0, n) lies in [0, bound).
void check_index_range(const int64_t* idx, int64_t n, int64_t bound, const char* kernel,
                       const char* arg);
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
