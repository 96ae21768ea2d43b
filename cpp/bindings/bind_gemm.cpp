// bind_gemm.cpp: Python bindings of gemm, dense_forward, dense_backward and
// bias_activation_backward (the dy pass of a fused backward), and test hooks for the internal
// GEMM entry points: GEMMs run inside a parallel region (gemm_strided's in-region plan) and a
// B packed ahead (gemm_pack_b / gemm_prepacked).
#include <chrono>
#include <vector>

#include "check.h"
#include "fkeras/gemm.h"
#include "fkeras/kernels.h"
#include "fkeras/runtime.h"

void bind_gemm(py::module_& m) {
  m.def("gemm", [](py::object C, py::object A, py::object B, int64_t M, int64_t N, int64_t K,
                   bool trans_a, bool trans_b, float alpha, float beta) {
    fkb::check_sizes("gemm", {{"M", M}, {"N", N}, {"K", K}});
    float* c = fkb::out_f32(C, "gemm", "C", {M, N});
    const float* a = fkb::in_f32(A, "gemm", "A", {trans_a ? K : M, trans_a ? M : K});
    const float* b = fkb::in_f32(B, "gemm", "B", {trans_b ? N : K, trans_b ? K : N});
    if (!fkb::check_outputs("gemm", {{"C", C}}, {{"A", A}, {"B", B}})) return;
    py::gil_scoped_release nogil;
    fk::gemm(c, a, b, M, N, K, trans_a, trans_b, alpha, beta);
  }, py::arg("C"), py::arg("A"), py::arg("B"), py::arg("M"), py::arg("N"), py::arg("K"),
     py::arg("trans_a"), py::arg("trans_b"), py::arg("alpha"), py::arg("beta"),
     "C = alpha * op(A) @ op(B) + beta * C (row-major float32).");

  m.def("dense_forward", [](py::object y, py::object x, py::object kernel, py::object bias,
                            int64_t M, int64_t N, int64_t K, int64_t activation, float alpha) {
    const char* k = "dense_forward";
    fkb::check_sizes(k, {{"M", M}, {"N", N}, {"K", K}});
    fkb::check_activation(activation, k, "activation", fkb::ActUse::kFused);
    float* py_ = fkb::out_f32(y, k, "y", {M, N});
    const float* px = fkb::in_f32(x, k, "x", {M, K});
    const float* pw = fkb::in_f32(kernel, k, "kernel", {K, N});
    const float* pb = fkb::in_f32(bias, k, "bias", {N}, true);
    if (!fkb::check_outputs(k, {{"y", y}}, {{"x", x}, {"kernel", kernel}, {"bias", bias}})) return;
    py::gil_scoped_release nogil;
    fk::dense_forward(py_, px, pw, pb, M, N, K, activation, alpha);
  }, py::arg("y"), py::arg("x"), py::arg("kernel"), py::arg("bias"), py::arg("M"), py::arg("N"),
     py::arg("K"), py::arg("activation"), py::arg("alpha"));

  m.def("bias_activation_backward", [](py::object dz, py::object dbias, py::object dy,
                                       py::object y, int64_t M, int64_t N, int64_t activation,
                                       float alpha) {
    const char* k = "bias_activation_backward";
    fkb::check_sizes(k, {{"M", M}, {"N", N}});
    fkb::check_activation(activation, k, "activation", fkb::ActUse::kFused);
    float* pdz = fkb::out_f32(dz, k, "dz", {M, N}, true);
    float* pdb = fkb::out_f32(dbias, k, "dbias", {N}, true);
    const float* pdy = fkb::in_f32(dy, k, "dy", {M, N});
    const float* py_ = fkb::in_f32(y, k, "y", {M, N});
    if (!fkb::check_outputs(k, {{"dz", dz}, {"dbias", dbias}}, {{"dy", dy}, {"y", y}})) return;
    py::gil_scoped_release nogil;
    fk::bias_activation_backward(pdz, pdb, pdy, py_, M, N, activation, alpha);
  }, py::arg("dz"), py::arg("dbias"), py::arg("dy"), py::arg("y"), py::arg("M"), py::arg("N"),
     py::arg("activation"), py::arg("alpha"));

  m.def("dense_backward", [](py::object dx, py::object dkernel, py::object dbias, py::object dy,
                             py::object x, py::object y, py::object kernel, int64_t M, int64_t N,
                             int64_t K, int64_t activation, float alpha) {
    const char* k = "dense_backward";
    fkb::check_sizes(k, {{"M", M}, {"N", N}, {"K", K}});
    fkb::check_activation(activation, k, "activation", fkb::ActUse::kFused);
    float* pdx = fkb::out_f32(dx, k, "dx", {M, K}, true);
    float* pdw = fkb::out_f32(dkernel, k, "dkernel", {K, N}, true);
    float* pdb = fkb::out_f32(dbias, k, "dbias", {N}, true);
    const float* pdy = fkb::in_f32(dy, k, "dy", {M, N});
    const float* px = fkb::in_f32(x, k, "x", {M, K});
    const float* py_ = fkb::in_f32(y, k, "y", {M, N});
    const float* pw = fkb::in_f32(kernel, k, "kernel", {K, N});
    if (!fkb::check_outputs(k, {{"dx", dx}, {"dkernel", dkernel}, {"dbias", dbias}}, {{"dy", dy},
                                 {"x", x}, {"y", y}, {"kernel", kernel}})) return;
    py::gil_scoped_release nogil;
    fk::dense_backward(pdx, pdw, pdb, pdy, px, py_, pw, M, N, K, activation, alpha);
  }, py::arg("dx"), py::arg("dkernel"), py::arg("dbias"), py::arg("dy"), py::arg("x"),
     py::arg("y"), py::arg("kernel"), py::arg("M"), py::arg("N"), py::arg("K"),
     py::arg("activation"), py::arg("alpha"));

  // For tests: C[i] (M, N) = A[i] (M, K) @ B[i] (K, N) for i < batch, one GEMM per chunk of a
  // parallel_for (so each runs inside the region, where it must plan for one thread). Returns
  // (in_parallel_region() outside, whether every chunk saw in_parallel_region() true).
  m.def("_gemm_in_region_for_test", [](py::object C, py::object A, py::object B, int64_t batch,
                                       int64_t M, int64_t N, int64_t K) {
    const char* k = "_gemm_in_region_for_test";
    fkb::check_sizes(k, {{"batch", batch}, {"M", M}, {"N", N}, {"K", K}});
    float* c = fkb::out_f32(C, k, "C", {batch, M, N});
    const float* a = fkb::in_f32(A, k, "A", {batch, M, K});
    const float* b = fkb::in_f32(B, k, "B", {batch, K, N});
    std::vector<char> inside(static_cast<size_t>(batch), 0);
    bool outside;
    {
      py::gil_scoped_release nogil;
      outside = fk::in_parallel_region();
      fk::parallel_for(batch, 1, [&](int64_t i0, int64_t i1) {
        for (int64_t i = i0; i < i1; ++i) {
          inside[i] = fk::in_parallel_region() || fk::num_threads() == 1 || batch == 1;
          fk::gemm_strided(c + i * M * N, N, a + i * M * K, K, b + i * K * N, N, M, N, K, false,
                           false, 1.f, 0.f);
        }
      });
    }
    bool all = true;
    for (char v : inside) all = all && v;
    return py::make_tuple(outside, all);
  }, py::arg("C"), py::arg("A"), py::arg("B"), py::arg("batch"), py::arg("M"), py::arg("N"),
     py::arg("K"));

  // For tests: C (M, N) = alpha * A (M, K) @ op(B) + beta * C with op(B) packed by gemm_pack_b
  // first (B (K, N), or (N, K) when trans_b); calls gemm_prepacked `calls` times on row slices
  // of about M / calls rows each (the same packed B reused).
  // For benchmarks (bench/bench_gemm.py --peak): seconds for a register-only loop of `iters` x
  // 24 fp32 FMAs or VDPBF16PS on the calling thread, and the flops it did.
  m.def("_peak_loop_for_bench", [](bool bf16, int64_t iters) {
    double flops;
    const auto t0 = std::chrono::steady_clock::now();
    {
      py::gil_scoped_release nogil;
      flops = fk::gemm_peak_loop(bf16, iters);
    }
    const std::chrono::duration<double> dt = std::chrono::steady_clock::now() - t0;
    return py::make_tuple(dt.count(), flops);
  }, py::arg("bf16"), py::arg("iters"));

  m.def("_gemm_prepacked_for_test", [](py::object C, py::object A, py::object B, int64_t M,
                                       int64_t N, int64_t K, bool trans_b, float alpha,
                                       float beta, int64_t calls) {
    const char* k = "_gemm_prepacked_for_test";
    fkb::check_sizes(k, {{"M", M}, {"N", N}, {"K", K}, {"calls", calls}});
    float* c = fkb::out_f32(C, k, "C", {M, N});
    const float* a = fkb::in_f32(A, k, "A", {M, K});
    const float* b = fkb::in_f32(B, k, "B", {trans_b ? N : K, trans_b ? K : N});
    py::gil_scoped_release nogil;
    fk::GemmPackedB packed;
    fk::gemm_pack_b(packed, b, trans_b ? K : N, K, N, trans_b);
    const int64_t parts = calls < 1 ? 1 : calls;
    for (int64_t i = 0; i < parts; ++i) {
      const int64_t r0 = i * M / parts, r1 = (i + 1) * M / parts;
      fk::gemm_prepacked(c + r0 * N, N, a + r0 * K, K, packed, r1 - r0, false, alpha, beta);
    }
  }, py::arg("C"), py::arg("A"), py::arg("B"), py::arg("M"), py::arg("N"), py::arg("K"),
     py::arg("trans_b"), py::arg("alpha"), py::arg("beta"), py::arg("calls"));
}
