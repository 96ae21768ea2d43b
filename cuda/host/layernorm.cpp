// layernorm.cpp (host): the math of the CUDA layer-norm kernels (fk_cuda/layernorm_math.h)
// compiled by the host compiler into fkeras._C_cuda_host, for
// tests/cuda/test_layernorm_math_host.py:
// both kernels EMULATED on the CPU with the GPU's reduction structure (threads_per_row(D) lanes
// summing strided elements in float64, a halving tree over each warp's 32 lanes, the warp totals
// added in warp order; parameter gradients as float64 column partials over col_chunks row
// chunks added in chunk order), so the tests check the GPU's algorithm against fkeras._C and
// NumPy float64 without a GPU.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "fk_cuda/binders.h"
#include "fk_cuda/layernorm_math.h"

namespace py = pybind11;
using Arr = py::array_t<float, py::array::c_style | py::array::forcecast>;
namespace L = fk_cuda::ln;

namespace {

constexpr int kMaxSums = 3;

// One row's float64 sums as the GPU forms them: lane t adds term(j, out) for j = t, t + T, ...;
// each warp's lanes are combined by a halving tree, then the warps in order.
template <class Term>
void row_sums(int64_t D, int nsum, Term term, double* total) {
  const int T = L::threads_per_row(D);
  std::vector<double> lane(static_cast<size_t>(T) * kMaxSums, 0.0);
  for (int t = 0; t < T; ++t)
    for (int64_t j = t; j < D; j += T) term(j, &lane[static_cast<size_t>(t) * kMaxSums]);
  for (int i = 0; i < nsum; ++i) total[i] = 0.0;
  for (int w = 0; w < T / 32; ++w) {
    double* base = &lane[static_cast<size_t>(w) * 32 * kMaxSums];
    for (int o = 16; o > 0; o >>= 1)
      for (int l = 0; l < o; ++l)
        for (int i = 0; i < nsum; ++i) base[l * kMaxSums + i] += base[(l + o) * kMaxSums + i];
    for (int i = 0; i < nsum; ++i) total[i] = w == 0 ? base[i] : total[i] + base[i];
  }
}

void check_count(const Arr& a, int64_t count, const char* fn, const char* arg) {
  if (a.size() != count)
    throw std::invalid_argument(std::string(fn) + ": argument '" + arg + "' must have " +
                                std::to_string(count) + " elements, received " +
                                std::to_string(a.size()));
}

py::tuple forward(const Arr& x, std::optional<Arr> gamma, std::optional<Arr> beta, int64_t rows,
                  int64_t D, double eps, bool rms) {
  const char* fn = "ln_forward_emulated";
  check_count(x, rows * D, fn, "x");
  if (gamma) check_count(*gamma, D, fn, "gamma");
  if (beta) check_count(*beta, D, fn, "beta");
  Arr y(rows * D), mean(rows), rstd(rows);
  const bool affine = gamma || beta;
  for (int64_t r = 0; r < rows; ++r) {
    if (D == 0) {
      mean.mutable_data()[r] = 0.f;
      rstd.mutable_data()[r] = L::empty_rstd(eps);
      continue;
    }
    const float* px = x.data() + r * D;
    double s[kMaxSums];
    row_sums(D, 1, [&](int64_t j, double* a) { a[0] += static_cast<double>(px[j]); }, s);
    const float m_f = L::row_mean(s[0], D);
    row_sums(D, 2, [&](int64_t j, double* a) {
      const double d = static_cast<double>(px[j]) - static_cast<double>(m_f);
      a[0] += d;
      a[1] = std::fma(d, d, a[1]);
    }, s);
    const L::RowCoeffs k = L::forward_coeffs(m_f, s[0], s[1], D, eps, rms);
    for (int64_t j = 0; j < D; ++j)
      y.mutable_data()[r * D + j] = L::forward_elem(px[j], k, gamma ? gamma->data()[j] : 1.f,
                                                    beta ? beta->data()[j] : 0.f, affine);
    mean.mutable_data()[r] = k.mean;
    rstd.mutable_data()[r] = k.rstd;
  }
  return py::make_tuple(y, mean, rstd);
}

py::tuple backward(const Arr& dy, const Arr& x, const Arr& mean, const Arr& rstd,
                   std::optional<Arr> gamma, int64_t rows, int64_t D, bool rms) {
  const char* fn = "ln_backward_emulated";
  check_count(dy, rows * D, fn, "dy");
  check_count(x, rows * D, fn, "x");
  check_count(mean, rows, fn, "mean");
  check_count(rstd, rows, fn, "rstd");
  if (gamma) check_count(*gamma, D, fn, "gamma");
  Arr dx(rows * D), dgamma(D), dbeta(D);
  std::vector<L::BackCoeffs> coef(static_cast<size_t>(rows));
  const float* pg = gamma ? gamma->data() : nullptr;
  for (int64_t r = 0; r < rows && D > 0; ++r) {
    const float* px = x.data() + r * D;
    const float* pdy = dy.data() + r * D;
    const float m_f = mean.data()[r];
    double s[kMaxSums];
    row_sums(D, 3, [&](int64_t j, double* a) {
      const double dz = pg ? L::dz_elem(pdy[j], pg[j]) : pdy[j];
      const double d = static_cast<double>(px[j]) - static_cast<double>(m_f);
      a[0] += dz;
      a[1] += d;
      a[2] = std::fma(dz, d, a[2]);
    }, s);
    const L::BackCoeffs k = L::backward_coeffs(s[0], s[1], s[2], D, m_f, rstd.data()[r], rms);
    coef[static_cast<size_t>(r)] = k;
    for (int64_t j = 0; j < D; ++j)
      dx.mutable_data()[r * D + j] =
          L::dx_elem(pg ? L::dz_elem(pdy[j], pg[j]) : pdy[j], px[j], m_f, k);
  }
  const int64_t chunks = L::col_chunks(rows, D), len = L::col_chunk_len(rows, chunks);
  for (int64_t j = 0; j < D; ++j) {
    double tb = 0.0, tg = 0.0;
    for (int64_t c = 0; c < chunks; ++c) {
      double sb = 0.0, sg = 0.0;
      for (int64_t r = c * len; r < std::min(rows, (c + 1) * len); ++r) {
        const double g = dy.data()[r * D + j];
        sb += g;
        sg = std::fma(g, static_cast<double>(L::z_elem(x.data()[r * D + j],
                                                        coef[static_cast<size_t>(r)])), sg);
      }
      tb += sb;
      tg += sg;
    }
    dbeta.mutable_data()[j] = static_cast<float>(tb);
    dgamma.mutable_data()[j] = static_cast<float>(tg);
  }
  return py::make_tuple(dx, dgamma, dbeta);
}

}  // namespace

FK_BIND_FAMILY(layernorm) {
  m.def("ln_threads_per_row", &L::threads_per_row, py::arg("D"));
  m.def("ln_col_chunks", &L::col_chunks, py::arg("rows"), py::arg("D"));
  m.def("ln_col_chunk_len", &L::col_chunk_len, py::arg("rows"), py::arg("chunks"));
  m.def("ln_forward_emulated", &forward, py::arg("x"), py::arg("gamma"), py::arg("beta"),
        py::arg("rows"), py::arg("D"), py::arg("epsilon"), py::arg("rms_scaling") = false,
        "The GPU layer_norm_forward's algorithm on the CPU: (y, mean, rstd).");
  m.def("ln_backward_emulated", &backward, py::arg("dy"), py::arg("x"), py::arg("mean"),
        py::arg("rstd"), py::arg("gamma"), py::arg("rows"), py::arg("D"),
        py::arg("rms_scaling") = false,
        "The GPU layer_norm_backward's algorithm on the CPU: (dx, dgamma, dbeta).");
}
