// gemm.cpp (host): fkeras._C_cuda_host bindings of the CUDA GEMM family's math
// (fk_cuda/gemm_math.h) compiled by the host compiler, for tests without a GPU:
//   gemm_tiled_reference: a GEMM walked exactly as the kernel's tiles are (tile origins, bounds
//     predicates, op(A)/op(B) offsets, per-element epilogue), on flat NumPy buffers;
//   gemm_activation / gemm_activation_derivative / gemm_dz / gemm_epilogue: elementwise.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <stdexcept>

#include "fk_cuda/binders.h"
#include "fk_cuda/gemm_math.h"

namespace py = pybind11;
namespace gm = fk_cuda::gemm_math;

namespace {

using F32 = py::array_t<float, py::array::c_style | py::array::forcecast>;

F32 like(const F32& x) { return F32(std::vector<py::ssize_t>(x.shape(), x.shape() + x.ndim())); }

void need(bool ok, const char* what) {
  if (!ok) throw std::invalid_argument(what);
}

}  // namespace

FK_BIND_FAMILY(gemm) {
  m.def("gemm_tiled_reference", [](F32 C, F32 A, F32 B, int64_t M, int64_t N, int64_t K,
                                   bool trans_a, bool trans_b, float alpha, float beta,
                                   int64_t lda, int64_t ldb, int64_t ldc, py::object bias,
                                   int64_t act, float act_alpha, int64_t tile_m, int64_t tile_n,
                                   int64_t tile_k) {
    need(tile_m > 0 && tile_n > 0 && tile_k > 0, "gemm_tiled_reference: tiles must be > 0");
    need(C.size() >= (M > 0 ? (M - 1) * ldc + N : 0), "gemm_tiled_reference: C too small");
    need(A.size() >= (trans_a ? (K > 0 ? (K - 1) * lda + M : 0) : (M > 0 ? (M - 1) * lda + K : 0)),
         "gemm_tiled_reference: A too small");
    need(B.size() >= (trans_b ? (N > 0 ? (N - 1) * ldb + K : 0) : (K > 0 ? (K - 1) * ldb + N : 0)),
         "gemm_tiled_reference: B too small");
    F32 res = like(C);
    std::copy(C.data(), C.data() + C.size(), res.mutable_data());
    F32 bvec;
    const float* pb = nullptr;
    if (!bias.is_none()) {
      bvec = bias.cast<F32>();
      need(bvec.size() == N, "gemm_tiled_reference: bias must have N elements");
      pb = bvec.data();
    }
    const float* a = A.data();
    const float* b = B.data();
    float* c = res.mutable_data();
    const int64_t Keff = alpha == 0.f ? 0 : K;
    for (int64_t tm = 0; tm < gm::tile_count(M, tile_m); ++tm)
      for (int64_t tn = 0; tn < gm::tile_count(N, tile_n); ++tn) {
        const int64_t r0 = gm::tile_origin(tm, tile_m), c0 = gm::tile_origin(tn, tile_n);
        for (int64_t di = 0; di < tile_m; ++di)
          for (int64_t dj = 0; dj < tile_n; ++dj) {
            const int64_t i = r0 + di, j = c0 + dj;
            float acc = 0.f;
            // k tiles with zero fill outside K, as the kernel's predicated loads
            for (int64_t tk = 0; tk < gm::tile_count(Keff, tile_k); ++tk)
              for (int64_t dk = 0; dk < tile_k; ++dk) {
                const int64_t k = gm::tile_origin(tk, tile_k) + dk;
                const float av = gm::in_bounds(i, k, M, Keff) ? a[gm::a_offset(i, k, trans_a, lda)] : 0.f;
                const float bv = gm::in_bounds(k, j, Keff, N) ? b[gm::b_offset(k, j, trans_b, ldb)] : 0.f;
                acc = av * bv + acc;
              }
            if (!gm::in_bounds(i, j, M, N)) continue;
            const float old = beta != 0.f ? c[i * ldc + j] : 0.f;
            c[i * ldc + j] = gm::epilogue(acc, old, alpha, beta, pb ? pb[j] : 0.f, act, act_alpha);
          }
      }
    return res;
  }, py::arg("C"), py::arg("A"), py::arg("B"), py::arg("M"), py::arg("N"), py::arg("K"),
     py::arg("trans_a"), py::arg("trans_b"), py::arg("alpha"), py::arg("beta"), py::arg("lda"),
     py::arg("ldb"), py::arg("ldc"), py::arg("bias") = py::none(), py::arg("act") = 0,
     py::arg("act_alpha") = 0.f, py::arg("tile_m") = 128, py::arg("tile_n") = 128,
     py::arg("tile_k") = 8,
     "Returns a copy of C (flat) after the CUDA GEMM's tile walk on the host.");

  m.def("gemm_activation", [](F32 x, int64_t act, float alpha) {
    F32 y = like(x);
    for (py::ssize_t e = 0; e < x.size(); ++e)
      y.mutable_data()[e] = gm::activation(x.data()[e], act, alpha);
    return y;
  }, py::arg("x"), py::arg("act"), py::arg("alpha"));

  m.def("gemm_activation_derivative", [](F32 y, int64_t act, float alpha) {
    F32 d = like(y);
    for (py::ssize_t e = 0; e < y.size(); ++e)
      d.mutable_data()[e] = gm::derivative_from_output(y.data()[e], act, alpha);
    return d;
  }, py::arg("y"), py::arg("act"), py::arg("alpha"));

  m.def("gemm_dz", [](F32 dy, F32 y, int64_t act, float alpha) {
    need(dy.size() == y.size(), "gemm_dz: dy and y must have the same size");
    F32 d = like(dy);
    for (py::ssize_t e = 0; e < dy.size(); ++e)
      d.mutable_data()[e] = gm::dz_value(dy.data()[e], y.data()[e], act, alpha);
    return d;
  }, py::arg("dy"), py::arg("y"), py::arg("act"), py::arg("alpha"));

  m.def("gemm_epilogue", [](F32 acc, F32 c_old, float alpha, float beta, F32 bias, int64_t act,
                            float act_alpha) {
    need(acc.size() == c_old.size() && acc.size() == bias.size(),
         "gemm_epilogue: acc, c_old and bias must have the same size");
    F32 out = like(acc);
    for (py::ssize_t e = 0; e < acc.size(); ++e)
      out.mutable_data()[e] = gm::epilogue(acc.data()[e], c_old.data()[e], alpha, beta,
                                           bias.data()[e], act, act_alpha);
    return out;
  }, py::arg("acc"), py::arg("c_old"), py::arg("alpha"), py::arg("beta"), py::arg("bias"),
     py::arg("act"), py::arg("act_alpha"));
}
