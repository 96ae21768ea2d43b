// bind_quantize.cpp: Python bindings of the int8 quantization kernels (fkeras/kernels.h).
// Outputs first, then inputs, then sizes; every buffer is checked (dtype, C order, element
// count) and outputs may not overlap inputs.
#include "check.h"
#include "fkeras/kernels.h"

void bind_quantize(py::module_& m) {
  m.def("quantize_int8_rows", [](py::object q, py::object scale, py::object x, int64_t M,
                                 int64_t K) {
    const char* k = "quantize_int8_rows";
    fkb::check_sizes(k, {{"M", M}, {"K", K}});
    int8_t* pq = fkb::out_i8(q, k, "q", {M, K});
    float* ps = fkb::out_f32(scale, k, "scale", {M});
    const float* px = fkb::in_f32(x, k, "x", {M, K});
    if (!fkb::check_outputs(k, {{"q", q}, {"scale", scale}}, {{"x", x}})) return;
    py::gil_scoped_release nogil;
    fk::quantize_int8_rows(pq, ps, px, M, K);
  }, py::arg("q"), py::arg("scale"), py::arg("x"), py::arg("M"), py::arg("K"),
     "Per-row abs-max int8 quantization (Keras's abs_max_quantize(axis=-1)): q (M, K) int8 and "
     "scale (M) float32 overwritten from x (M, K) float32.");

  m.def("matmul_int8", [](py::object c, py::object a, py::object b, int64_t M, int64_t N,
                          int64_t K) {
    const char* k = "matmul_int8";
    fkb::check_sizes(k, {{"M", M}, {"N", N}, {"K", K}});
    int32_t* pc = fkb::out_i32(c, k, "C", {M, N});
    const int8_t* pa = fkb::in_i8(a, k, "A", {M, K});
    const int8_t* pb = fkb::in_i8(b, k, "B", {K, N});
    if (!fkb::check_outputs(k, {{"C", c}}, {{"A", a}, {"B", b}})) return;
    py::gil_scoped_release nogil;
    fk::matmul_int8(pc, pa, pb, M, N, K);
  }, py::arg("C"), py::arg("A"), py::arg("B"), py::arg("M"), py::arg("N"), py::arg("K"),
     "C (M, N) int32 = A (M, K) int8 @ B (K, N) int8, exact integer sums (overwritten).");

  m.def("dense_int8_forward", [](py::object y, py::object x, py::object kernel,
                                 py::object kernel_scale, int64_t M, int64_t N, int64_t K) {
    const char* k = "dense_int8_forward";
    fkb::check_sizes(k, {{"M", M}, {"N", N}, {"K", K}});
    float* py_ = fkb::out_f32(y, k, "y", {M, N});
    const float* px = fkb::in_f32(x, k, "x", {M, K});
    const int8_t* pk = fkb::in_i8(kernel, k, "kernel", {K, N});
    const float* ps = fkb::in_f32(kernel_scale, k, "kernel_scale", {N});
    if (!fkb::check_outputs(k, {{"y", y}}, {{"x", x}, {"kernel", kernel},
                                             {"kernel_scale", kernel_scale}})) return;
    py::gil_scoped_release nogil;
    fk::dense_int8_forward(py_, px, pk, ps, M, N, K);
  }, py::arg("y"), py::arg("x"), py::arg("kernel"), py::arg("kernel_scale"), py::arg("M"),
     py::arg("N"), py::arg("K"),
     "Keras's int8 Dense product: y (M, N) = float(quantize_rows(x) @ kernel) / "
     "(kernel_scale * inputs_scale), overwritten.");
}
