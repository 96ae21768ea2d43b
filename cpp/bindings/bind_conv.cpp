// bind_conv.cpp: Python bindings of the convolution and pooling kernels (see fkeras/kernels.h).
// Every argument is validated here (ValueError naming the kernel and argument), including the
// window geometry's int64 range (fkb::check_axis) and overlapping outputs; the kernels run
// without the GIL.
#include <string>

#include "check.h"
#include "fkeras/kernels.h"

namespace {

[[noreturn]] void bad(const char* kernel, const std::string& what) {
  throw py::value_error(std::string(kernel) + ": " + what);
}

void check_window(const char* k, int64_t stride_h, int64_t stride_w, int64_t dil_h,
                  int64_t dil_w) {
  if (stride_h < 1 || stride_w < 1 || dil_h < 1 || dil_w < 1)
    bad(k, "strides and dilations must be >= 1, received strides (" + std::to_string(stride_h) +
               ", " + std::to_string(stride_w) + "), dilations (" + std::to_string(dil_h) + ", " +
               std::to_string(dil_w) + ")");
}

// Checks the sizes shared by the three conv kernels.
void check_conv(const char* k, int64_t N, int64_t H, int64_t W, int64_t C, int64_t K, int64_t R,
                int64_t S, int64_t P, int64_t Q, int64_t stride_h, int64_t stride_w,
                int64_t dil_h, int64_t dil_w, int64_t pad_top, int64_t pad_left,
                int64_t groups) {
  fkb::check_sizes(k, {{"N", N}, {"H", H}, {"W", W}, {"C", C}, {"K", K}, {"R", R}, {"S", S},
                       {"P", P}, {"Q", Q}, {"pad_top", pad_top}, {"pad_left", pad_left}});
  check_window(k, stride_h, stride_w, dil_h, dil_w);
  fkb::check_axis(k, {"H", H}, {"P", P}, {"R", R}, {"stride_h", stride_h}, {"dil_h", dil_h},
                  {"pad_top", pad_top});
  fkb::check_axis(k, {"W", W}, {"Q", Q}, {"S", S}, {"stride_w", stride_w}, {"dil_w", dil_w},
                  {"pad_left", pad_left});
  if (groups < 1 || C % groups != 0 || K % groups != 0)
    bad(k, "argument 'groups' must be >= 1 and divide C and K, received groups=" +
               std::to_string(groups) + " with C=" + std::to_string(C) +
               ", K=" + std::to_string(K));
}

void check_pool(const char* k, int64_t N, int64_t H, int64_t W, int64_t C, int64_t P, int64_t Q,
                int64_t R, int64_t S, int64_t stride_h, int64_t stride_w, int64_t pad_top,
                int64_t pad_left) {
  fkb::check_sizes(k, {{"N", N}, {"H", H}, {"W", W}, {"C", C}, {"P", P}, {"Q", Q}, {"R", R},
                       {"S", S}, {"pad_top", pad_top}, {"pad_left", pad_left}});
  check_window(k, stride_h, stride_w, 1, 1);
  fkb::check_axis(k, {"H", H}, {"P", P}, {"R", R}, {"stride_h", stride_h}, {"dilation", 1},
                  {"pad_top", pad_top});
  fkb::check_axis(k, {"W", W}, {"Q", Q}, {"S", S}, {"stride_w", stride_w}, {"dilation", 1},
                  {"pad_left", pad_left});
  auto axis_ok = [](int64_t out, int64_t k_, int64_t stride, int64_t pad, int64_t size) {
    return out == 0 || (k_ - 1 - pad >= 0 && (out - 1) * stride - pad < size);
  };
  if (!axis_ok(P, R, stride_h, pad_top, H) || !axis_ok(Q, S, stride_w, pad_left, W))
    bad(k, "some pooling window lies entirely in the padding: H, W = " + std::to_string(H) +
               ", " + std::to_string(W) + "; P, Q = " + std::to_string(P) + ", " +
               std::to_string(Q) + "; R, S = " + std::to_string(R) + ", " + std::to_string(S) +
               "; pad_top, pad_left = " + std::to_string(pad_top) + ", " +
               std::to_string(pad_left));
}

}  // namespace

void bind_conv(py::module_& m) {
  m.def("conv2d_forward", [](py::object y, py::object x, py::object w, py::object bias,
                             int64_t N, int64_t H, int64_t W, int64_t C, int64_t K, int64_t R,
                             int64_t S, int64_t P, int64_t Q, int64_t stride_h, int64_t stride_w,
                             int64_t dil_h, int64_t dil_w, int64_t pad_top, int64_t pad_left,
                             int64_t groups, int64_t activation, float alpha) {
    const char* k = "conv2d_forward";
    check_conv(k, N, H, W, C, K, R, S, P, Q, stride_h, stride_w, dil_h, dil_w, pad_top, pad_left,
               groups);
    fkb::check_activation(activation, k, "activation", fkb::ActUse::kFused);
    float* py_ = fkb::out_f32(y, k, "y", {N, P, Q, K});
    const float* px = fkb::in_f32(x, k, "x", {N, H, W, C});
    const float* pw = fkb::in_f32(w, k, "w", {R, S, C / groups, K});
    const float* pb = fkb::in_f32(bias, k, "bias", {K}, true);
    if (!fkb::check_outputs(k, {{"y", y}}, {{"x", x}, {"w", w}, {"bias", bias}})) return;
    py::gil_scoped_release nogil;
    fk::conv2d_forward(py_, px, pw, pb, N, H, W, C, K, R, S, P, Q, stride_h, stride_w, dil_h,
                       dil_w, pad_top, pad_left, groups, activation, alpha);
  }, py::arg("y"), py::arg("x"), py::arg("w"), py::arg("bias"), py::arg("N"), py::arg("H"),
     py::arg("W"), py::arg("C"), py::arg("K"), py::arg("R"), py::arg("S"), py::arg("P"),
     py::arg("Q"), py::arg("stride_h"), py::arg("stride_w"), py::arg("dil_h"), py::arg("dil_w"),
     py::arg("pad_top"), py::arg("pad_left"), py::arg("groups"), py::arg("activation"),
     py::arg("alpha"),
     "y (N, P, Q, K) = act(conv(x (N, H, W, C), w (R, S, C/groups, K)) + bias (K)).");

  m.def("conv2d_forward_maxpool2d", [](py::object y, py::object x, py::object w,
                                       py::object bias, int64_t N, int64_t H, int64_t W,
                                       int64_t C, int64_t K, int64_t R, int64_t S, int64_t P,
                                       int64_t Q, int64_t stride_h, int64_t stride_w,
                                       int64_t dil_h, int64_t dil_w, int64_t pad_top,
                                       int64_t pad_left, int64_t groups, int64_t activation,
                                       float alpha, int64_t pool_h, int64_t pool_w,
                                       py::object indices) {
    const char* k = "conv2d_forward_maxpool2d";
    check_conv(k, N, H, W, C, K, R, S, P, Q, stride_h, stride_w, dil_h, dil_w, pad_top, pad_left,
               groups);
    fkb::check_activation(activation, k, "activation", fkb::ActUse::kFused);
    if (pool_h < 1 || pool_w < 1)
      bad(k, "arguments 'pool_h', 'pool_w' must be >= 1, received (" + std::to_string(pool_h) +
                 ", " + std::to_string(pool_w) + ")");
    float* py_ = fkb::out_f32(y, k, "y", {N, P / pool_h, Q / pool_w, K});
    int64_t* pi = fkb::out_i64(indices, k, "indices", {N, P / pool_h, Q / pool_w, K}, true);
    const float* px = fkb::in_f32(x, k, "x", {N, H, W, C});
    const float* pw = fkb::in_f32(w, k, "w", {R, S, C / groups, K});
    const float* pb = fkb::in_f32(bias, k, "bias", {K}, true);
    if (!fkb::check_outputs(k, {{"y", y}, {"indices", indices}},
                            {{"x", x}, {"w", w}, {"bias", bias}}))
      return;
    py::gil_scoped_release nogil;
    fk::conv2d_forward_maxpool2d(py_, px, pw, pb, N, H, W, C, K, R, S, P, Q, stride_h, stride_w,
                                 dil_h, dil_w, pad_top, pad_left, groups, activation, alpha,
                                 pool_h, pool_w, pi);
  }, py::arg("y"), py::arg("x"), py::arg("w"), py::arg("bias"), py::arg("N"), py::arg("H"),
     py::arg("W"), py::arg("C"), py::arg("K"), py::arg("R"), py::arg("S"), py::arg("P"),
     py::arg("Q"), py::arg("stride_h"), py::arg("stride_w"), py::arg("dil_h"), py::arg("dil_w"),
     py::arg("pad_top"), py::arg("pad_left"), py::arg("groups"), py::arg("activation"),
     py::arg("alpha"), py::arg("pool_h"), py::arg("pool_w"), py::arg("indices") = py::none(),
     "y (N, P // pool_h, Q // pool_w, K) = 'valid' max pooling of conv2d_forward's output; "
     "indices (same shape, int64) or None: each maximum's flat offset into that output.");

  m.def("conv2d_maxpool2d_backward", [](py::object dz, py::object dbias, py::object dy,
                                        py::object y, py::object indices, int64_t N, int64_t P,
                                        int64_t Q, int64_t K, int64_t pool_h, int64_t pool_w,
                                        int64_t activation, float alpha) {
    const char* k = "conv2d_maxpool2d_backward";
    fkb::check_sizes(k, {{"N", N}, {"P", P}, {"Q", Q}, {"K", K}});
    if (activation != fk::kLinear && activation != fk::kRelu && activation != fk::kLeakyRelu)
      bad(k, "argument 'activation' must be linear (0), relu (1) or leaky_relu, received code " +
                 std::to_string(activation));
    if (pool_h < 1 || pool_w < 1)
      bad(k, "arguments 'pool_h', 'pool_w' must be >= 1, received (" + std::to_string(pool_h) +
                 ", " + std::to_string(pool_w) + ")");
    const int64_t Pp = P / pool_h, Qp = Q / pool_w;
    float* pdz = fkb::out_f32(dz, k, "dz", {N, P, Q, K}, true);
    float* pdb = fkb::out_f32(dbias, k, "dbias", {K}, true);
    const float* pdy = fkb::in_f32(dy, k, "dy", {N, Pp, Qp, K});
    const float* pyv = fkb::in_f32(y, k, "y", {N, Pp, Qp, K});
    const int64_t* pi = fkb::in_i64(indices, k, "indices", {N, Pp, Qp, K});
    if (!fkb::check_outputs(k, {{"dz", dz}, {"dbias", dbias}},
                            {{"dy", dy}, {"y", y}, {"indices", indices}}))
      return;
    py::gil_scoped_release nogil;
    fk::conv2d_maxpool2d_backward(pdz, pdb, pdy, pyv, pi, N, P, Q, K, pool_h, pool_w,
                                  activation, alpha);
  }, py::arg("dz"), py::arg("dbias"), py::arg("dy"), py::arg("y"), py::arg("indices"),
     py::arg("N"), py::arg("P"), py::arg("Q"), py::arg("K"), py::arg("pool_h"),
     py::arg("pool_w"), py::arg("activation"), py::arg("alpha"),
     "dz (N, P, Q, K) [or None] and dbias (K) [or None] from the pooled cotangent dy, output y "
     "and indices (N, P // pool_h, Q // pool_w, K) of conv2d_forward_maxpool2d.");

  m.def("conv2d_backward_input", [](py::object dx, py::object dy, py::object w, int64_t N,
                                    int64_t H, int64_t W, int64_t C, int64_t K, int64_t R,
                                    int64_t S, int64_t P, int64_t Q, int64_t stride_h,
                                    int64_t stride_w, int64_t dil_h, int64_t dil_w,
                                    int64_t pad_top, int64_t pad_left, int64_t groups) {
    const char* k = "conv2d_backward_input";
    check_conv(k, N, H, W, C, K, R, S, P, Q, stride_h, stride_w, dil_h, dil_w, pad_top, pad_left,
               groups);
    float* pdx = fkb::out_f32(dx, k, "dx", {N, H, W, C});
    const float* pdy = fkb::in_f32(dy, k, "dy", {N, P, Q, K});
    const float* pw = fkb::in_f32(w, k, "w", {R, S, C / groups, K});
    if (!fkb::check_outputs(k, {{"dx", dx}}, {{"dy", dy}, {"w", w}})) return;
    py::gil_scoped_release nogil;
    fk::conv2d_backward_input(pdx, pdy, pw, N, H, W, C, K, R, S, P, Q, stride_h, stride_w, dil_h,
                              dil_w, pad_top, pad_left, groups);
  }, py::arg("dx"), py::arg("dy"), py::arg("w"), py::arg("N"), py::arg("H"), py::arg("W"),
     py::arg("C"), py::arg("K"), py::arg("R"), py::arg("S"), py::arg("P"), py::arg("Q"),
     py::arg("stride_h"), py::arg("stride_w"), py::arg("dil_h"), py::arg("dil_w"),
     py::arg("pad_top"), py::arg("pad_left"), py::arg("groups"),
     "dx (N, H, W, C) from dy (N, P, Q, K) and w (R, S, C/groups, K).");

  m.def("conv2d_backward_weight", [](py::object dw, py::object dy, py::object x, int64_t N,
                                     int64_t H, int64_t W, int64_t C, int64_t K, int64_t R,
                                     int64_t S, int64_t P, int64_t Q, int64_t stride_h,
                                     int64_t stride_w, int64_t dil_h, int64_t dil_w,
                                     int64_t pad_top, int64_t pad_left, int64_t groups) {
    const char* k = "conv2d_backward_weight";
    check_conv(k, N, H, W, C, K, R, S, P, Q, stride_h, stride_w, dil_h, dil_w, pad_top, pad_left,
               groups);
    float* pdw = fkb::out_f32(dw, k, "dw", {R, S, C / groups, K});
    const float* pdy = fkb::in_f32(dy, k, "dy", {N, P, Q, K});
    const float* px = fkb::in_f32(x, k, "x", {N, H, W, C});
    if (!fkb::check_outputs(k, {{"dw", dw}}, {{"dy", dy}, {"x", x}})) return;
    py::gil_scoped_release nogil;
    fk::conv2d_backward_weight(pdw, pdy, px, N, H, W, C, K, R, S, P, Q, stride_h, stride_w,
                               dil_h, dil_w, pad_top, pad_left, groups);
  }, py::arg("dw"), py::arg("dy"), py::arg("x"), py::arg("N"), py::arg("H"), py::arg("W"),
     py::arg("C"), py::arg("K"), py::arg("R"), py::arg("S"), py::arg("P"), py::arg("Q"),
     py::arg("stride_h"), py::arg("stride_w"), py::arg("dil_h"), py::arg("dil_w"),
     py::arg("pad_top"), py::arg("pad_left"), py::arg("groups"),
     "dw (R, S, C/groups, K) from dy (N, P, Q, K) and x (N, H, W, C).");

  m.def("maxpool2d_forward", [](py::object y, py::object indices, py::object x, int64_t N,
                                int64_t H, int64_t W, int64_t C, int64_t P, int64_t Q, int64_t R,
                                int64_t S, int64_t stride_h, int64_t stride_w, int64_t pad_top,
                                int64_t pad_left) {
    const char* k = "maxpool2d_forward";
    check_pool(k, N, H, W, C, P, Q, R, S, stride_h, stride_w, pad_top, pad_left);
    float* py_ = fkb::out_f32(y, k, "y", {N, P, Q, C});
    int64_t* pi = fkb::out_i64(indices, k, "indices", {N, P, Q, C}, true);  // None: values only
    const float* px = fkb::in_f32(x, k, "x", {N, H, W, C});
    if (!fkb::check_outputs(k, {{"y", y}, {"indices", indices}}, {{"x", x}})) return;
    py::gil_scoped_release nogil;
    fk::maxpool2d_forward(py_, pi, px, N, H, W, C, P, Q, R, S, stride_h, stride_w, pad_top,
                          pad_left);
  }, py::arg("y"), py::arg("indices"), py::arg("x"), py::arg("N"), py::arg("H"), py::arg("W"),
     py::arg("C"), py::arg("P"), py::arg("Q"), py::arg("R"), py::arg("S"), py::arg("stride_h"),
     py::arg("stride_w"), py::arg("pad_top"), py::arg("pad_left"),
     "y (N, P, Q, C) = window maxima of x (N, H, W, C); indices: flat offsets into x or None.");

  m.def("maxpool2d_backward", [](py::object dx, py::object dy, py::object indices, int64_t N,
                                 int64_t H, int64_t W, int64_t C, int64_t P, int64_t Q) {
    const char* k = "maxpool2d_backward";
    fkb::check_sizes(k, {{"N", N}, {"H", H}, {"W", W}, {"C", C}, {"P", P}, {"Q", Q}});
    float* pdx = fkb::out_f32(dx, k, "dx", {N, H, W, C});
    const float* pdy = fkb::in_f32(dy, k, "dy", {N, P, Q, C});
    const int64_t* pi = fkb::in_i64(indices, k, "indices", {N, P, Q, C});
    // The indices are checked by the kernel itself, in parallel and more strictly than a range
    // check (each must lie in its own image), before any write; its fk::Error is a ValueError.
    // Called even when dx is empty: the kernel is where the indices are checked.
    fkb::check_outputs(k, {{"dx", dx}}, {{"dy", dy}, {"indices", indices}});
    py::gil_scoped_release nogil;
    fk::maxpool2d_backward(pdx, pdy, pi, N, H, W, C, P, Q);
  }, py::arg("dx"), py::arg("dy"), py::arg("indices"), py::arg("N"), py::arg("H"), py::arg("W"),
     py::arg("C"), py::arg("P"), py::arg("Q"),
     "dx (N, H, W, C) = scatter-add of dy (N, P, Q, C) at the forward's indices.");

  m.def("avgpool2d_forward", [](py::object y, py::object x, int64_t N, int64_t H, int64_t W,
                                int64_t C, int64_t P, int64_t Q, int64_t R, int64_t S,
                                int64_t stride_h, int64_t stride_w, int64_t pad_top,
                                int64_t pad_left) {
    const char* k = "avgpool2d_forward";
    check_pool(k, N, H, W, C, P, Q, R, S, stride_h, stride_w, pad_top, pad_left);
    float* py_ = fkb::out_f32(y, k, "y", {N, P, Q, C});
    const float* px = fkb::in_f32(x, k, "x", {N, H, W, C});
    if (!fkb::check_outputs(k, {{"y", y}}, {{"x", x}})) return;
    py::gil_scoped_release nogil;
    fk::avgpool2d_forward(py_, px, N, H, W, C, P, Q, R, S, stride_h, stride_w, pad_top,
                          pad_left);
  }, py::arg("y"), py::arg("x"), py::arg("N"), py::arg("H"), py::arg("W"), py::arg("C"),
     py::arg("P"), py::arg("Q"), py::arg("R"), py::arg("S"), py::arg("stride_h"),
     py::arg("stride_w"), py::arg("pad_top"), py::arg("pad_left"),
     "y (N, P, Q, C) = window means of x (N, H, W, C) over in-bounds elements.");

  m.def("avgpool2d_backward", [](py::object dx, py::object dy, int64_t N, int64_t H, int64_t W,
                                 int64_t C, int64_t P, int64_t Q, int64_t R, int64_t S,
                                 int64_t stride_h, int64_t stride_w, int64_t pad_top,
                                 int64_t pad_left) {
    const char* k = "avgpool2d_backward";
    check_pool(k, N, H, W, C, P, Q, R, S, stride_h, stride_w, pad_top, pad_left);
    float* pdx = fkb::out_f32(dx, k, "dx", {N, H, W, C});
    const float* pdy = fkb::in_f32(dy, k, "dy", {N, P, Q, C});
    if (!fkb::check_outputs(k, {{"dx", dx}}, {{"dy", dy}})) return;
    py::gil_scoped_release nogil;
    fk::avgpool2d_backward(pdx, pdy, N, H, W, C, P, Q, R, S, stride_h, stride_w, pad_top,
                           pad_left);
  }, py::arg("dx"), py::arg("dy"), py::arg("N"), py::arg("H"), py::arg("W"), py::arg("C"),
     py::arg("P"), py::arg("Q"), py::arg("R"), py::arg("S"), py::arg("stride_h"),
     py::arg("stride_w"), py::arg("pad_top"), py::arg("pad_left"),
     "dx (N, H, W, C) = each dy (N, P, Q, C) spread evenly over its window's in-bounds elements.");
}
