// check.cpp: the validation behind check.h.
#include "check.h"

#include <sstream>

#include "fkeras/kernels.h"

namespace fkb {
namespace {

std::string dims_str(std::initializer_list<int64_t> dims) {
  std::ostringstream os;
  os << "(";
  size_t i = 0;
  for (int64_t d : dims) os << (i++ ? ", " : "") << d;
  if (dims.size() == 1) os << ",";
  os << ")";
  return os.str();
}

std::string array_str(const py::array& a) {
  std::ostringstream os;
  os << py::str(a.dtype()).cast<std::string>() << " array of shape (";
  for (py::ssize_t i = 0; i < a.ndim(); ++i) os << (i ? ", " : "") << a.shape(i);
  if (a.ndim() == 1) os << ",";
  os << ")";
  return os.str();
}

[[noreturn]] void bad(const char* kernel, const char* arg, const std::string& what) {
  throw py::value_error(std::string(kernel) + ": argument '" + arg + "' " + what);
}

int64_t element_count(std::initializer_list<int64_t> dims, const char* kernel, const char* arg) {
  int64_t count = 1;
  for (int64_t d : dims) {
    if (d < 0) bad(kernel, arg, "has a negative size in its expected shape " + dims_str(dims));
    if (__builtin_mul_overflow(count, d, &count) || count > (INT64_MAX / 8))
      bad(kernel, arg, "is too large: the sizes " + dims_str(dims) + " overflow a byte count");
  }
  return count;
}

template <typename T>
T* checked(const py::object& obj, const char* kernel, const char* arg,
           std::initializer_list<int64_t> dims, bool optional, bool writable, const char* dtype) {
  if (obj.is_none()) {
    if (optional) return nullptr;
    bad(kernel, arg, "is required, received None");
  }
  const int64_t want = element_count(dims, kernel, arg);
  if (!py::isinstance<py::array>(obj))
    bad(kernel, arg, std::string("expected a ") + dtype + " numpy array of shape " +
                         dims_str(dims) + ", received an object of type " +
                         py::str(py::type::of(obj).attr("__name__")).cast<std::string>());
  py::array a = py::reinterpret_borrow<py::array>(obj);
  if (!a.dtype().is(py::dtype::of<T>()))
    bad(kernel, arg, std::string("expected dtype ") + dtype + " of shape " + dims_str(dims) +
                         ", received " + array_str(a));
  if (!(a.flags() & py::array::c_style))
    bad(kernel, arg, "must be C-contiguous, received a strided " + array_str(a));
  if (a.size() != want)
    bad(kernel, arg, "expected shape " + dims_str(dims) + " (" + std::to_string(want) +
                         " elements), received " + array_str(a));
  if (writable && !a.writeable()) bad(kernel, arg, "is an output and must be writable");
  return static_cast<T*>(writable ? a.mutable_data() : const_cast<void*>(a.data()));
}

}  // namespace

void check_sizes(const char* kernel, std::initializer_list<std::pair<const char*, int64_t>> sizes) {
  for (const auto& [name, value] : sizes)
    if (value < 0)
      throw py::value_error(std::string(kernel) + ": size '" + name +
                            "' must be >= 0, received " + std::to_string(value));
}

float* out_f32(const py::object& o, const char* k, const char* a, std::initializer_list<int64_t> d,
               bool opt) {
  return checked<float>(o, k, a, d, opt, true, "float32");
}
const float* in_f32(const py::object& o, const char* k, const char* a,
                    std::initializer_list<int64_t> d, bool opt) {
  return checked<float>(o, k, a, d, opt, false, "float32");
}
int64_t* out_i64(const py::object& o, const char* k, const char* a,
                 std::initializer_list<int64_t> d, bool opt) {
  return checked<int64_t>(o, k, a, d, opt, true, "int64");
}
const int64_t* in_i64(const py::object& o, const char* k, const char* a,
                      std::initializer_list<int64_t> d, bool opt) {
  return checked<int64_t>(o, k, a, d, opt, false, "int64");
}

void check_index_range(const int64_t* idx, int64_t n, int64_t bound, const char* kernel,
                       const char* arg) {
  for (int64_t i = 0; i < n; ++i)
    if (idx[i] < 0 || idx[i] >= bound)
      throw py::value_error(std::string(kernel) + ": argument '" + arg + "' holds index " +
                            std::to_string(idx[i]) + " at position " + std::to_string(i) +
                            ", outside the valid range [0, " + std::to_string(bound) + ")");
}

void check_activation(int64_t act, const char* kernel, const char* arg, ActUse use) {
  if (act < fk::kLinear || act > fk::kLeakyRelu)
    throw py::value_error(std::string(kernel) + ": argument '" + arg +
                          "' is not a known activation code: " + std::to_string(act));
  const bool fused_ok = act != fk::kGelu && act != fk::kGeluTanh && act != fk::kSwish;
  const bool recurrent_ok = act == fk::kLinear || act == fk::kRelu || act == fk::kSigmoid ||
                            act == fk::kTanh || act == fk::kHardSigmoid;
  if (use == ActUse::kFused && !fused_ok)
    throw py::value_error(std::string(kernel) + ": argument '" + arg +
                          "' cannot be gelu or swish in a fused epilogue (code " +
                          std::to_string(act) + "); apply it as a separate activation");
  if (use == ActUse::kRecurrent && !recurrent_ok)
    throw py::value_error(std::string(kernel) + ": argument '" + arg +
                          "' must be linear, relu, sigmoid, tanh or hard_sigmoid in the "
                          "recurrent kernels, received code " + std::to_string(act));
}

}  // namespace fkb
