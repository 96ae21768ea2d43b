// bind_conv.cpp: fkeras._C_cuda conv2d_forward / conv2d_backward_input / conv2d_backward_weight
// and max/avg pooling forward/backward on DeviceArrays, with fkeras._C's names, argument order
// and checks (ValueError naming the kernel and argument, raised before any launch).
#include <pybind11/pybind11.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "fk_cuda/binders.h"
#include "fk_cuda/conv.cuh"
#include "fk_cuda/device_array.h"
#include "fk_cuda/gemm_math.h"
#include "fk_cuda/runtime.h"

namespace py = pybind11;
using fk_cuda::DeviceArray;
using fk_cuda::DType;
using fk_cuda::conv_math::Geom;

namespace {

[[noreturn]] void bad(const char* k, const std::string& what) {
  throw std::invalid_argument(std::string(k) + ": " + what);
}

void nonneg(const char* k, std::initializer_list<std::pair<const char*, int64_t>> sizes) {
  for (const auto& s : sizes)
    if (s.second < 0) bad(k, std::string(s.first) + " must be >= 0, received " + std::to_string(s.second));
}

template <class T>
T* arr(const DeviceArray* a, DType dt, const char* k, const char* arg, std::vector<int64_t> shape) {
  if (!a) return nullptr;
  fk_cuda::check_dtype(*a, dt, k, arg);
  fk_cuda::check_shape(*a, shape, k, arg);
  return const_cast<T*>(a->data_as<T>());
}

void no_alias(const char* k, const DeviceArray& out, const char* oname,
              std::initializer_list<std::pair<const char*, const DeviceArray*>> ins) {
  for (const auto& in : ins)
    if (in.second && out.nbytes() && out.data() == in.second->data())
      bad(k, std::string("output ") + oname + " must not share memory with " + in.first);
}

void check_conv(const char* k, const Geom& g) {
  nonneg(k, {{"N", g.N}, {"H", g.H}, {"W", g.W}, {"C", g.C}, {"K", g.K}, {"R", g.R}, {"S", g.S},
             {"P", g.P}, {"Q", g.Q}, {"pad_top", g.pad_top}, {"pad_left", g.pad_left}});
  if (g.stride_h < 1 || g.stride_w < 1 || g.dil_h < 1 || g.dil_w < 1)
    bad(k, "strides and dilations must be >= 1");
  if (g.groups < 1 || g.C % g.groups != 0 || g.K % g.groups != 0)
    bad(k, "argument 'groups' must be >= 1 and divide C and K, received groups=" +
               std::to_string(g.groups) + " with C=" + std::to_string(g.C) + ", K=" +
               std::to_string(g.K));
}

// The tiled conv kernels form coordinates in int32 (conv_math::tile_fits_int32); the weight
// gradient also its reduction index N*P*Q.
void check_tiles(const char* k, const Geom& g, bool wgrad) {
  if (!fk_cuda::conv_math::tile_fits_int32(g) ||
      (wgrad && !fk_cuda::conv_math::wgrad_fits_int32(g)))
    bad(k, std::string("sizes too large for the CUDA kernel: every size, padded extent and "
                       "R*S*C, R*S*K") + (wgrad ? ", N*P*Q" : "") + " must be < 2^31 - 1024");
}

void check_pool(const char* k, const Geom& g) {
  check_conv(k, g);
  auto axis_ok = [](int64_t out, int64_t r, int64_t stride, int64_t pad, int64_t size) {
    return out == 0 || (r - 1 - pad >= 0 && (out - 1) * stride - pad < size);
  };
  if (!axis_ok(g.P, g.R, g.stride_h, g.pad_top, g.H) ||
      !axis_ok(g.Q, g.S, g.stride_w, g.pad_left, g.W))
    bad(k, "some pooling window lies entirely in the padding");
}

Geom pool_geom(int64_t N, int64_t H, int64_t W, int64_t C, int64_t P, int64_t Q, int64_t R,
               int64_t S, int64_t sh, int64_t sw, int64_t pt, int64_t pl) {
  return Geom{N, H, W, C, C, R, S, P, Q, sh, sw, 1, 1, pt, pl, 1};
}

}  // namespace

FK_BIND_FAMILY(conv) {
  m.def("conv2d_forward", [](DeviceArray& y, const DeviceArray& x, const DeviceArray& w,
                             const DeviceArray* bias, int64_t N, int64_t H, int64_t W, int64_t C,
                             int64_t K, int64_t R, int64_t S, int64_t P, int64_t Q,
                             int64_t stride_h, int64_t stride_w, int64_t dil_h, int64_t dil_w,
                             int64_t pad_top, int64_t pad_left, int64_t groups,
                             int64_t activation, float alpha) {
    const char* k = "conv2d_forward";
    const Geom g{N, H, W, C, K, R, S, P, Q, stride_h, stride_w, dil_h, dil_w, pad_top, pad_left, groups};
    check_conv(k, g);
    check_tiles(k, g, false);
    namespace gm = fk_cuda::gemm_math;
    if (!(activation == gm::kLinear || activation == gm::kRelu || activation == gm::kSigmoid ||
          activation == gm::kTanh || activation == gm::kElu || activation == gm::kSelu ||
          activation == gm::kSoftplus || activation == gm::kSoftsign ||
          activation == gm::kHardSigmoid || activation == gm::kExponential ||
          activation == gm::kLeakyRelu))
      bad(k, "activation code " + std::to_string(activation) + " cannot be fused");
    float* py_ = arr<float>(&y, DType::Float32, k, "y", {N, P, Q, K});
    const float* px = arr<float>(&x, DType::Float32, k, "x", {N, H, W, C});
    const float* pw = arr<float>(&w, DType::Float32, k, "w", {R, S, C / groups, K});
    const float* pb = arr<float>(bias, DType::Float32, k, "bias", {K});
    no_alias(k, y, "y", {{"x", &x}, {"w", &w}, {"bias", bias}});
    py::gil_scoped_release nogil;
    fk_cuda::conv2d_forward(fk_cuda::stream(), py_, px, pw, pb, g, activation, alpha);
  }, py::arg("y"), py::arg("x"), py::arg("w"), py::arg("bias"), py::arg("N"), py::arg("H"),
     py::arg("W"), py::arg("C"), py::arg("K"), py::arg("R"), py::arg("S"), py::arg("P"),
     py::arg("Q"), py::arg("stride_h"), py::arg("stride_w"), py::arg("dil_h"), py::arg("dil_w"),
     py::arg("pad_top"), py::arg("pad_left"), py::arg("groups"), py::arg("activation"),
     py::arg("alpha"));

  m.def("conv2d_backward_input", [](DeviceArray& dx, const DeviceArray& dy, const DeviceArray& w,
                                    int64_t N, int64_t H, int64_t W, int64_t C, int64_t K,
                                    int64_t R, int64_t S, int64_t P, int64_t Q, int64_t stride_h,
                                    int64_t stride_w, int64_t dil_h, int64_t dil_w,
                                    int64_t pad_top, int64_t pad_left, int64_t groups) {
    const char* k = "conv2d_backward_input";
    const Geom g{N, H, W, C, K, R, S, P, Q, stride_h, stride_w, dil_h, dil_w, pad_top, pad_left, groups};
    check_conv(k, g);
    check_tiles(k, g, false);
    float* pdx = arr<float>(&dx, DType::Float32, k, "dx", {N, H, W, C});
    const float* pdy = arr<float>(&dy, DType::Float32, k, "dy", {N, P, Q, K});
    const float* pw = arr<float>(&w, DType::Float32, k, "w", {R, S, C / groups, K});
    no_alias(k, dx, "dx", {{"dy", &dy}, {"w", &w}});
    py::gil_scoped_release nogil;
    fk_cuda::conv2d_backward_input(fk_cuda::stream(), pdx, pdy, pw, g);
  }, py::arg("dx"), py::arg("dy"), py::arg("w"), py::arg("N"), py::arg("H"), py::arg("W"),
     py::arg("C"), py::arg("K"), py::arg("R"), py::arg("S"), py::arg("P"), py::arg("Q"),
     py::arg("stride_h"), py::arg("stride_w"), py::arg("dil_h"), py::arg("dil_w"),
     py::arg("pad_top"), py::arg("pad_left"), py::arg("groups"));

  m.def("conv2d_backward_weight", [](DeviceArray& dw, const DeviceArray& dy, const DeviceArray& x,
                                     int64_t N, int64_t H, int64_t W, int64_t C, int64_t K,
                                     int64_t R, int64_t S, int64_t P, int64_t Q, int64_t stride_h,
                                     int64_t stride_w, int64_t dil_h, int64_t dil_w,
                                     int64_t pad_top, int64_t pad_left, int64_t groups) {
    const char* k = "conv2d_backward_weight";
    const Geom g{N, H, W, C, K, R, S, P, Q, stride_h, stride_w, dil_h, dil_w, pad_top, pad_left, groups};
    check_conv(k, g);
    check_tiles(k, g, true);
    float* pdw = arr<float>(&dw, DType::Float32, k, "dw", {R, S, C / groups, K});
    const float* pdy = arr<float>(&dy, DType::Float32, k, "dy", {N, P, Q, K});
    const float* px = arr<float>(&x, DType::Float32, k, "x", {N, H, W, C});
    no_alias(k, dw, "dw", {{"dy", &dy}, {"x", &x}});
    const int64_t ws = fk_cuda::conv2d_backward_weight_workspace(g);
    DeviceArray workspace({ws}, DType::Float32);  // back to the cache after the stream's use
    py::gil_scoped_release nogil;
    fk_cuda::conv2d_backward_weight(fk_cuda::stream(), pdw, pdy, px, g,
                                    ws > 0 ? workspace.data_as<float>() : nullptr);
  }, py::arg("dw"), py::arg("dy"), py::arg("x"), py::arg("N"), py::arg("H"), py::arg("W"),
     py::arg("C"), py::arg("K"), py::arg("R"), py::arg("S"), py::arg("P"), py::arg("Q"),
     py::arg("stride_h"), py::arg("stride_w"), py::arg("dil_h"), py::arg("dil_w"),
     py::arg("pad_top"), py::arg("pad_left"), py::arg("groups"));

  m.def("maxpool2d_forward", [](DeviceArray& y, DeviceArray& indices, const DeviceArray& x,
                                int64_t N, int64_t H, int64_t W, int64_t C, int64_t P, int64_t Q,
                                int64_t R, int64_t S, int64_t stride_h, int64_t stride_w,
                                int64_t pad_top, int64_t pad_left) {
    const char* k = "maxpool2d_forward";
    const Geom g = pool_geom(N, H, W, C, P, Q, R, S, stride_h, stride_w, pad_top, pad_left);
    check_pool(k, g);
    float* py_ = arr<float>(&y, DType::Float32, k, "y", {N, P, Q, C});
    int64_t* pi = arr<int64_t>(&indices, DType::Int64, k, "indices", {N, P, Q, C});
    const float* px = arr<float>(&x, DType::Float32, k, "x", {N, H, W, C});
    no_alias(k, y, "y", {{"indices", &indices}, {"x", &x}});
    no_alias(k, indices, "indices", {{"x", &x}});
    py::gil_scoped_release nogil;
    fk_cuda::maxpool2d_forward(fk_cuda::stream(), py_, pi, px, g);
  }, py::arg("y"), py::arg("indices"), py::arg("x"), py::arg("N"), py::arg("H"), py::arg("W"),
     py::arg("C"), py::arg("P"), py::arg("Q"), py::arg("R"), py::arg("S"), py::arg("stride_h"),
     py::arg("stride_w"), py::arg("pad_top"), py::arg("pad_left"));

  m.def("maxpool2d_backward", [](DeviceArray& dx, const DeviceArray& dy, const DeviceArray& indices,
                                 int64_t N, int64_t H, int64_t W, int64_t C, int64_t P,
                                 int64_t Q) {
    const char* k = "maxpool2d_backward";
    nonneg(k, {{"N", N}, {"H", H}, {"W", W}, {"C", C}, {"P", P}, {"Q", Q}});
    float* pdx = arr<float>(&dx, DType::Float32, k, "dx", {N, H, W, C});
    const float* pdy = arr<float>(&dy, DType::Float32, k, "dy", {N, P, Q, C});
    const int64_t* pi = arr<int64_t>(&indices, DType::Int64, k, "indices", {N, P, Q, C});
    no_alias(k, dx, "dx", {{"dy", &dy}, {"indices", &indices}});
    const Geom g = pool_geom(N, H, W, C, P, Q, 1, 1, 1, 1, 0, 0);
    DeviceArray flag({1}, DType::Int32);
    int bad_index = 0;
    {
      py::gil_scoped_release nogil;
      fk_cuda::maxpool2d_backward(fk_cuda::stream(), pdx, pdy, pi, g, flag.data_as<int>());
      flag.copy_to_host(&bad_index);  // waits for the kernel
    }
    if (bad_index)
      bad(k, "argument 'indices' holds an offset outside its own image and channel of x "
             "(dx is unspecified)");
  }, py::arg("dx"), py::arg("dy"), py::arg("indices"), py::arg("N"), py::arg("H"), py::arg("W"),
     py::arg("C"), py::arg("P"), py::arg("Q"));

  m.def("avgpool2d_forward", [](DeviceArray& y, const DeviceArray& x, int64_t N, int64_t H,
                                int64_t W, int64_t C, int64_t P, int64_t Q, int64_t R, int64_t S,
                                int64_t stride_h, int64_t stride_w, int64_t pad_top,
                                int64_t pad_left) {
    const char* k = "avgpool2d_forward";
    const Geom g = pool_geom(N, H, W, C, P, Q, R, S, stride_h, stride_w, pad_top, pad_left);
    check_pool(k, g);
    float* py_ = arr<float>(&y, DType::Float32, k, "y", {N, P, Q, C});
    const float* px = arr<float>(&x, DType::Float32, k, "x", {N, H, W, C});
    no_alias(k, y, "y", {{"x", &x}});
    py::gil_scoped_release nogil;
    fk_cuda::avgpool2d_forward(fk_cuda::stream(), py_, px, g);
  }, py::arg("y"), py::arg("x"), py::arg("N"), py::arg("H"), py::arg("W"), py::arg("C"),
     py::arg("P"), py::arg("Q"), py::arg("R"), py::arg("S"), py::arg("stride_h"),
     py::arg("stride_w"), py::arg("pad_top"), py::arg("pad_left"));

  m.def("avgpool2d_backward", [](DeviceArray& dx, const DeviceArray& dy, int64_t N, int64_t H,
                                 int64_t W, int64_t C, int64_t P, int64_t Q, int64_t R, int64_t S,
                                 int64_t stride_h, int64_t stride_w, int64_t pad_top,
                                 int64_t pad_left) {
    const char* k = "avgpool2d_backward";
    const Geom g = pool_geom(N, H, W, C, P, Q, R, S, stride_h, stride_w, pad_top, pad_left);
    check_pool(k, g);
    float* pdx = arr<float>(&dx, DType::Float32, k, "dx", {N, H, W, C});
    const float* pdy = arr<float>(&dy, DType::Float32, k, "dy", {N, P, Q, C});
    no_alias(k, dx, "dx", {{"dy", &dy}});
    py::gil_scoped_release nogil;
    fk_cuda::avgpool2d_backward(fk_cuda::stream(), pdx, pdy, g);
  }, py::arg("dx"), py::arg("dy"), py::arg("N"), py::arg("H"), py::arg("W"), py::arg("C"),
     py::arg("P"), py::arg("Q"), py::arg("R"), py::arg("S"), py::arg("stride_h"),
     py::arg("stride_w"), py::arg("pad_top"), py::arg("pad_left"));
}
