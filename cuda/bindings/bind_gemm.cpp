// bind_gemm.cpp: fkeras._C_cuda gemm, dense_forward, dense_backward (same names, argument order
// and semantics as fkeras._C's, on DeviceArrays) and the matmul precision switch
// (set_matmul_precision("highest" | "high"): "high" lets the GEMMs use TF32 tensor cores).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "fk_cuda/binders.h"
#include "fk_cuda/device_array.h"
#include "fk_cuda/gemm.cuh"
#include "fk_cuda/gemm_math.h"
#include "fk_cuda/runtime.h"

namespace py = pybind11;
using fk_cuda::DeviceArray;
using fk_cuda::DType;

namespace {

void check_sizes(const char* fn, std::initializer_list<std::pair<const char*, int64_t>> sizes) {
  for (const auto& s : sizes)
    if (s.second < 0)
      throw std::invalid_argument(std::string(fn) + ": " + s.first + " must be >= 0, received " +
                                  std::to_string(s.second));
}

const float* in_f32(const DeviceArray& a, const char* fn, const char* arg,
                    const std::vector<int64_t>& shape) {
  fk_cuda::check_dtype(a, DType::Float32, fn, arg);
  fk_cuda::check_shape(a, shape, fn, arg);
  return a.data_as<float>();
}

float* out_f32(DeviceArray* a, const char* fn, const char* arg, const std::vector<int64_t>& shape) {
  if (!a) return nullptr;
  fk_cuda::check_dtype(*a, DType::Float32, fn, arg);
  fk_cuda::check_shape(*a, shape, fn, arg);
  return a->data_as<float>();
}

// Outputs must not share memory with inputs or with each other (as the CPU bindings).
void check_no_alias(const char* fn, std::initializer_list<std::pair<const char*, const DeviceArray*>> outs,
                    std::initializer_list<std::pair<const char*, const DeviceArray*>> ins) {
  std::vector<std::pair<const char*, const DeviceArray*>> all(outs);
  all.insert(all.end(), ins.begin(), ins.end());
  for (size_t o = 0; o < outs.size(); ++o)
    for (size_t i = 0; i < all.size(); ++i) {
      if (i == o || !all[o].second || !all[i].second) continue;
      if (all[o].second->nbytes() && all[o].second->data() == all[i].second->data())
        throw std::invalid_argument(std::string(fn) + ": output " + all[o].first +
                                    " must not share memory with " + all[i].first);
    }
}

void check_activation(int64_t act, const char* fn) {
  namespace gm = fk_cuda::gemm_math;
  switch (act) {
    case gm::kLinear: case gm::kRelu: case gm::kSigmoid: case gm::kTanh: case gm::kElu:
    case gm::kSelu: case gm::kSoftplus: case gm::kSoftsign: case gm::kHardSigmoid:
    case gm::kExponential: case gm::kLeakyRelu: return;
    default:
      throw std::invalid_argument(std::string(fn) + ": activation code " + std::to_string(act) +
                                  " cannot be fused into the GEMM epilogue");
  }
}

}  // namespace

FK_BIND_FAMILY(gemm) {
  m.def("set_matmul_precision", [](const std::string& p) {
    if (p == "highest") fk_cuda::set_allow_tf32(false);
    else if (p == "high") fk_cuda::set_allow_tf32(true);
    else throw std::invalid_argument("set_matmul_precision: precision must be 'highest' or "
                                     "'high', received '" + p + "'");
  }, py::arg("precision"),
     "'highest': exact FP32 GEMMs (default); 'high': TF32 tensor cores allowed (sm_80+).");
  m.def("matmul_precision", [] { return std::string(fk_cuda::allow_tf32() ? "high" : "highest"); });

  m.def("gemm", [](DeviceArray& C, const DeviceArray& A, const DeviceArray& B, int64_t M,
                   int64_t N, int64_t K, bool trans_a, bool trans_b, float alpha, float beta) {
    const char* k = "gemm";
    check_sizes(k, {{"M", M}, {"N", N}, {"K", K}});
    float* c = out_f32(&C, k, "C", {M, N});
    const float* a = in_f32(A, k, "A", {trans_a ? K : M, trans_a ? M : K});
    const float* b = in_f32(B, k, "B", {trans_b ? N : K, trans_b ? K : N});
    check_no_alias(k, {{"C", &C}}, {{"A", &A}, {"B", &B}});
    py::gil_scoped_release nogil;
    fk_cuda::gemm(fk_cuda::stream(), c, a, b, M, N, K, trans_a, trans_b, alpha, beta,
                  trans_a ? M : K, trans_b ? K : N, N, fk_cuda::allow_tf32());
  }, py::arg("C"), py::arg("A"), py::arg("B"), py::arg("M"), py::arg("N"), py::arg("K"),
     py::arg("trans_a"), py::arg("trans_b"), py::arg("alpha"), py::arg("beta"),
     "C = alpha * op(A) @ op(B) + beta * C (row-major float32, on the device stream).");

  m.def("dense_forward", [](DeviceArray& y, const DeviceArray& x, const DeviceArray& kernel,
                            const DeviceArray* bias, int64_t M, int64_t N, int64_t K,
                            int64_t activation, float alpha) {
    const char* k = "dense_forward";
    check_sizes(k, {{"M", M}, {"N", N}, {"K", K}});
    check_activation(activation, k);
    float* py_ = out_f32(&y, k, "y", {M, N});
    const float* px = in_f32(x, k, "x", {M, K});
    const float* pw = in_f32(kernel, k, "kernel", {K, N});
    const float* pb = bias ? in_f32(*bias, k, "bias", {N}) : nullptr;
    check_no_alias(k, {{"y", &y}}, {{"x", &x}, {"kernel", &kernel}, {"bias", bias}});
    py::gil_scoped_release nogil;
    fk_cuda::gemm_ex(fk_cuda::stream(), py_, px, pw, M, N, K, false, false, 1.f, 0.f, K, N, N,
                     fk_cuda::allow_tf32(), pb, activation, alpha);
  }, py::arg("y"), py::arg("x"), py::arg("kernel"), py::arg("bias"), py::arg("M"), py::arg("N"),
     py::arg("K"), py::arg("activation"), py::arg("alpha"));

  m.def("dense_backward", [](DeviceArray* dx, DeviceArray* dkernel, DeviceArray* dbias,
                             const DeviceArray& dy, const DeviceArray& x, const DeviceArray& y,
                             const DeviceArray& kernel, int64_t M, int64_t N, int64_t K,
                             int64_t activation, float alpha) {
    const char* k = "dense_backward";
    check_sizes(k, {{"M", M}, {"N", N}, {"K", K}});
    check_activation(activation, k);
    float* pdx = out_f32(dx, k, "dx", {M, K});
    float* pdw = out_f32(dkernel, k, "dkernel", {K, N});
    float* pdb = out_f32(dbias, k, "dbias", {N});
    const float* pdy = in_f32(dy, k, "dy", {M, N});
    const float* px = in_f32(x, k, "x", {M, K});
    const float* pyy = in_f32(y, k, "y", {M, N});
    const float* pw = in_f32(kernel, k, "kernel", {K, N});
    check_no_alias(k, {{"dx", dx}, {"dkernel", dkernel}, {"dbias", dbias}},
                   {{"dy", &dy}, {"x", &x}, {"y", &y}, {"kernel", &kernel}});
    const bool linear = activation == fk_cuda::gemm_math::kLinear;
    DeviceArray dz({linear || !(pdx || pdw) ? 0 : M, N}, DType::Float32);
    const float* pdz = linear ? pdy : dz.data_as<float>();
    py::gil_scoped_release nogil;
    cudaStream_t s = fk_cuda::stream();
    fk_cuda::dense_dz_colsum(s, linear || !(pdx || pdw) ? nullptr : dz.data_as<float>(), pdb,
                             pdy, pyy, M, N, activation, alpha);
    const bool tf32 = fk_cuda::allow_tf32();
    if (pdx) fk_cuda::gemm(s, pdx, pdz, pw, M, K, N, false, true, 1.f, 0.f, N, N, K, tf32);
    if (pdw) fk_cuda::gemm(s, pdw, px, pdz, K, N, M, true, false, 1.f, 0.f, K, N, N, tf32);
  }, py::arg("dx"), py::arg("dkernel"), py::arg("dbias"), py::arg("dy"), py::arg("x"),
     py::arg("y"), py::arg("kernel"), py::arg("M"), py::arg("N"), py::arg("K"),
     py::arg("activation"), py::arg("alpha"));
}
