// binders.h: each kernel family binds itself from its own file, with no shared list to edit:
//   FK_BIND_FAMILY(gemm) { m.def("gemm", ...); }
// defines a function that a static registrar adds to the module's binder list before the
// module's init function runs. Used by both fkeras._C_cuda (nvcc) and fkeras._C_cuda_host
// (g++, the host build of the per-element math).
#pragma once

#include <pybind11/pybind11.h>

#include <vector>

namespace fk_cuda {

using Binder = void (*)(pybind11::module_&);

inline std::vector<Binder>& binders() {
  static std::vector<Binder> list;
  return list;
}

struct BinderRegistration {
  explicit BinderRegistration(Binder b) { binders().push_back(b); }
};

inline void bind_all(pybind11::module_& m) {
  for (Binder b : binders()) b(m);
}

}  // namespace fk_cuda

#define FK_BIND_FAMILY(family)                                                  \
  static void fk_bind_##family(pybind11::module_& m);                          \
  static ::fk_cuda::BinderRegistration fk_register_##family(&fk_bind_##family); \
  static void fk_bind_##family(pybind11::module_& m)
