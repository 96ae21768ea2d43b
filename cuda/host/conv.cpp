// conv.cpp (host): fkeras._C_cuda_host bindings of the CUDA conv family's index maps
// (fk_cuda/conv_math.h): conv2d forward as the implicit GEMM the kernel walks (rows (n, p, q),
// cols k, depth (r, s, c) of the group) and the input gradient through the inverse map, on
// NumPy arrays, so tests compare them with NumPy float64 convolutions.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "fk_cuda/binders.h"
#include "fk_cuda/conv_math.h"

namespace py = pybind11;
namespace cm = fk_cuda::conv_math;

namespace {
using F64 = py::array_t<double, py::array::c_style | py::array::forcecast>;
}

FK_BIND_FAMILY(conv) {
  m.def("conv2d_implicit_gemm_reference", [](F64 x, F64 w, int64_t N, int64_t H, int64_t W,
                                             int64_t C, int64_t K, int64_t R, int64_t S,
                                             int64_t P, int64_t Q, int64_t sh, int64_t sw,
                                             int64_t dh, int64_t dw, int64_t pt, int64_t pl,
                                             int64_t groups) {
    const cm::Geom g{N, H, W, C, K, R, S, P, Q, sh, sw, dh, dw, pt, pl, groups};
    F64 y({N, P, Q, K});
    const double* px = x.data();
    const double* pw = w.data();
    double* py_ = y.mutable_data();
    for (int64_t row = 0; row < N * P * Q; ++row)
      for (int64_t k = 0; k < K; ++k) {
        double acc = 0.0;
        for (int64_t kk = 0; kk < cm::depth_size(g); ++kk) {
          const int64_t off = cm::a_offset(row, kk, cm::group_of(k, g), g);
          if (off < 0) continue;
          const cm::Pos3 t = cm::depth_to_rsc(kk, g);
          acc += px[off] * pw[cm::w_offset(t.a, t.b, t.c, k, g)];
        }
        const cm::Pos3 o = cm::row_to_npq(row, g);
        py_[cm::y_offset(o.a, o.b, o.c, k, g)] = acc;
      }
    return y;
  });

  m.def("conv2d_backward_input_reference", [](F64 dy, F64 w, int64_t N, int64_t H, int64_t W,
                                              int64_t C, int64_t K, int64_t R, int64_t S,
                                              int64_t P, int64_t Q, int64_t sh, int64_t sw,
                                              int64_t dh, int64_t dw, int64_t pt, int64_t pl,
                                              int64_t groups) {
    const cm::Geom g{N, H, W, C, K, R, S, P, Q, sh, sw, dh, dw, pt, pl, groups};
    F64 dx({N, H, W, C});
    const int64_t cg = C / groups, kg = K / groups;
    for (int64_t n = 0; n < N; ++n)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t wi = 0; wi < W; ++wi)
          for (int64_t c = 0; c < C; ++c) {
            double acc = 0.0;
            for (int64_t r = 0; r < R; ++r) {
              int64_t p;
              if (!cm::out_coord(h, r, sh, dh, pt, P, &p)) continue;
              for (int64_t s = 0; s < S; ++s) {
                int64_t q;
                if (!cm::out_coord(wi, s, sw, dw, pl, Q, &q)) continue;
                for (int64_t k = (c / cg) * kg; k < (c / cg + 1) * kg; ++k)
                  acc += dy.data()[cm::y_offset(n, p, q, k, g)] *
                         w.data()[cm::w_offset(r, s, c % cg, k, g)];
              }
            }
            dx.mutable_data()[cm::x_offset(n, h, wi, c, g)] = acc;
          }
    return dx;
  });

  m.def("pool_window", [](int64_t o, int64_t R, int64_t stride, int64_t pad, int64_t H) {
    int64_t t0, t1;
    cm::window(o, R, stride, pad, H, &t0, &t1);
    return py::make_tuple(t0, t1);
  });
}
