// bind_checks.h: argument checks shared by the bindings of several kernel families (raised as
// Python ValueError naming the function and the argument). Include after pybind11.
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "fk_cuda/device_array.h"

namespace fk_cuda {
namespace bind {

[[noreturn]] inline void fail(const char* fn, const std::string& what) {
  throw pybind11::value_error(std::string(fn) + ": " + what);
}

// A (possibly null) float32 array of `count` elements: its data, or null when optional.
template <class A>
auto f32(A* a, const char* fn, const char* arg, int64_t count, bool optional = false)
    -> decltype(a->template data_as<float>()) {
  if (!a) {
    if (optional) return nullptr;
    fail(fn, std::string("argument '") + arg + "' must be a DeviceArray, received None");
  }
  check_dtype(*a, DType::Float32, fn, arg);
  if (a->size() != count)
    fail(fn, std::string("argument '") + arg + "' must have " + std::to_string(count) +
                 " elements, received shape " + shape_str(a->shape()));
  return a->template data_as<float>();
}

using Named = std::pair<const char*, const DeviceArray*>;

// Outputs must be distinct arrays and none of them an input (empty outputs are exempt).
inline void check_distinct(const char* fn, const std::vector<Named>& outs,
                           const std::vector<Named>& ins) {
  for (size_t i = 0; i < outs.size(); ++i) {
    if (!outs[i].second || outs[i].second->size() == 0) continue;
    for (size_t j = 0; j < outs.size(); ++j)
      if (j != i && outs[j].second == outs[i].second)
        fail(fn, std::string("outputs '") + outs[i].first + "' and '" + outs[j].first +
                     "' must be different arrays");
    for (const Named& in : ins)
      if (in.second == outs[i].second)
        fail(fn, std::string("output '") + outs[i].first + "' must not be the input '" +
                     in.first + "'");
  }
}

}  // namespace bind
}  // namespace fk_cuda
