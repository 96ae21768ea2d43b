// check.cpp: the validation behind check.h.
#include "check.h"

#include <sstream>
#include <vector>

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

// The element count of `dims`. The product of the nonzero sizes is bounded too, so that a
// zero elsewhere cannot hide sizes whose products the kernels form (per-image strides, ...).
int64_t element_count(std::initializer_list<int64_t> dims, const char* kernel, const char* arg) {
  int64_t nonzero = 1;
  bool empty = false;
  for (int64_t d : dims) {
    if (d < 0) bad(kernel, arg, "has a negative size in its expected shape " + dims_str(dims));
    if (d == 0) {
      empty = true;
      continue;
    }
    if (__builtin_mul_overflow(nonzero, d, &nonzero) || nonzero > (INT64_MAX / 8))
      bad(kernel, arg, "is too large: the sizes " + dims_str(dims) + " overflow a byte count");
  }
  return empty ? 0 : nonzero;
}

std::string named_str(Named a) { return std::string(a.first) + "=" + std::to_string(a.second); }

// a * b + c for values in [0, kMaxExtent); false when it reaches kMaxExtent (or overflows).
bool fits(int64_t a, int64_t b, int64_t c, int64_t& out) {
  return !__builtin_mul_overflow(a, b, &out) && !__builtin_add_overflow(out, c, &out) &&
         out < kMaxExtent;
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

void check_sizes(const char* kernel, std::initializer_list<Named> sizes) {
  for (const auto& [name, value] : sizes) {
    if (value < 0)
      throw py::value_error(std::string(kernel) + ": size '" + name +
                            "' must be >= 0, received " + std::to_string(value));
    if (value >= kMaxSize)
      throw py::value_error(std::string(kernel) + ": size '" + name +
                            "' is too large: it must be below 2**60, received " +
                            std::to_string(value));
  }
}

void check_axis(const char* kernel, Named size, Named out, Named k, Named stride, Named dil,
                Named pad) {
  check_sizes(kernel, {size, out, k, stride, dil, pad});
  auto too_large = [&](Named culprit, const std::string& expr) {
    throw py::value_error(std::string(kernel) + ": argument '" + culprit.first + "' = " +
                          std::to_string(culprit.second) + " is too large: " + expr +
                          " must stay below 2**62 (" + named_str(size) + ", " + named_str(out) +
                          ", " + named_str(k) + ", " + named_str(stride) + ", " + named_str(dil) +
                          ", " + named_str(pad) + ")");
  };
  const std::string s = stride.first, d = dil.first, o = out.first, kk = k.first;
  int64_t reach_out = 0, reach_k = 0, total = 0;
  if (out.second > 0 && !fits(out.second - 1, stride.second, 0, reach_out))
    too_large(stride, "(" + o + " - 1) * " + s);
  if (k.second > 0 && !fits(k.second - 1, dil.second, 0, reach_k))
    too_large(dil, "(" + kk + " - 1) * " + d);
  if (!fits(1, reach_out, reach_k, total) || !fits(1, total, pad.second, total) ||
      !fits(1, total, size.second, total))
    too_large(reach_out >= reach_k ? stride : dil,
              "(" + o + " - 1) * " + s + " + (" + kk + " - 1) * " + d + " + " + pad.first +
                  " + " + size.first);
}

bool check_outputs(const char* kernel, std::initializer_list<NamedArray> outputs,
                   std::initializer_list<NamedArray> inputs,
                   std::initializer_list<std::pair<const char*, const char*>> in_place) {
  struct Range {
    const char* name;
    uintptr_t lo, hi;
  };
  auto range = [](const NamedArray& a, Range& r) {
    if (a.second.is_none()) return false;
    py::array arr = py::reinterpret_borrow<py::array>(a.second);
    if (arr.nbytes() == 0) return false;
    r.name = a.first;
    r.lo = reinterpret_cast<uintptr_t>(arr.data());
    r.hi = r.lo + static_cast<uintptr_t>(arr.nbytes());
    return true;
  };
  auto allowed = [&](const Range& out, const Range& in) {
    for (const auto& [o, i] : in_place)
      if (std::string(o) == out.name && std::string(i) == in.name) return true;
    return false;
  };
  auto fail = [&](const Range& a, const char* role, const Range& b, const std::string& why) {
    throw py::value_error(std::string(kernel) + ": output '" + a.name + "' overlaps " + role +
                          " '" + b.name + "' in memory" + why + "; pass separate arrays");
  };
  std::vector<Range> outs;
  for (const NamedArray& a : outputs) {
    Range r;
    if (!range(a, r)) continue;
    for (const Range& o : outs)
      if (r.lo < o.hi && o.lo < r.hi) fail(o, "output", r, "");
    outs.push_back(r);
  }
  for (const NamedArray& a : inputs) {
    Range in;
    if (!range(a, in)) continue;
    for (const Range& out : outs) {
      if (!(out.lo < in.hi && in.lo < out.hi)) continue;
      const bool same = out.lo == in.lo && out.hi == in.hi;
      if (allowed(out, in) && same) continue;
      fail(out, "input", in,
           allowed(out, in) ? " without being the same buffer (only exactly in place is allowed)"
                            : " (this kernel cannot compute in place)");
    }
  }
  return !outs.empty();
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

int8_t* out_i8(const py::object& o, const char* k, const char* a,
               std::initializer_list<int64_t> d, bool opt) {
  return checked<int8_t>(o, k, a, d, opt, true, "int8");
}
const int8_t* in_i8(const py::object& o, const char* k, const char* a,
                    std::initializer_list<int64_t> d, bool opt) {
  return checked<int8_t>(o, k, a, d, opt, false, "int8");
}
int32_t* out_i32(const py::object& o, const char* k, const char* a,
                 std::initializer_list<int64_t> d, bool opt) {
  return checked<int32_t>(o, k, a, d, opt, true, "int32");
}

const uint8_t* in_bool(const py::object& o, const char* k, const char* a,
                       std::initializer_list<int64_t> d, bool opt) {
  return reinterpret_cast<const uint8_t*>(checked<bool>(o, k, a, d, opt, false, "bool"));
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
