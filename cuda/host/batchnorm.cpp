// batchnorm.cpp (host): the math of the CUDA batch-norm kernels (fk_cuda/batchnorm_math.h)
// compiled by the host compiler into fkeras._C_cuda_host, for tests/cuda/test_bnrnn_math_host.py:
// Welford accumulation and merge, and the three kernels EMULATED on the CPU with the GPU's
// reduction structure (a channel cut into stats_chunks chunks, kStatsThreads strided
// accumulators per chunk, a fixed-order tree in each chunk, chunks merged in index order), so
// the tests compare the GPU's algorithm with fkeras._C and NumPy float64 without a GPU.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>

#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "fk_cuda/batchnorm_math.h"
#include "fk_cuda/binders.h"

namespace py = pybind11;
using Arr = py::array_t<float, py::array::c_style | py::array::forcecast>;
using Arr64 = py::array_t<double, py::array::c_style | py::array::forcecast>;
namespace B = fk_cuda::bn;

namespace {

py::tuple to_tuple(const B::Welford& w) { return py::make_tuple(w.n, w.mean, w.m2, w.sum); }
B::Welford from_tuple(const py::tuple& t) {
  if (t.size() != 4) throw std::invalid_argument("welford state must be (n, mean, m2, sum)");
  return B::Welford{t[0].cast<double>(), t[1].cast<double>(), t[2].cast<double>(),
                    t[3].cast<double>()};
}

// The GPU's reduction of channel c: fn(acc, j) accumulates element j into a thread's state;
// merge combines two states; chunks then merged in order.
template <class S, class Acc, class Merge>
S reduce_channel(int64_t n, int64_t C, S zero, Acc acc, Merge merge) {
  const int64_t chunks = B::stats_chunks(n, C), len = B::chunk_len(n, chunks);
  S total = zero;
  for (int64_t k = 0; k < chunks; ++k) {
    const int64_t j0 = k * len, j1 = std::min(n, j0 + len);
    std::vector<S> s(B::kStatsThreads, zero);
    for (int t = 0; t < B::kStatsThreads; ++t)
      for (int64_t j = j0 + t; j < j1; j += B::kStatsThreads) acc(s[t], j);
    for (int h = B::kStatsThreads / 2; h > 0; h /= 2)
      for (int t = 0; t < h; ++t) s[t] = merge(s[t], s[t + h]);
    total = merge(total, s[0]);
  }
  return total;
}

void check_view(const Arr& a, int64_t count, const char* fn, const char* arg) {
  if (a.size() != count)
    throw std::invalid_argument(std::string(fn) + ": " + arg + " must have " +
                                std::to_string(count) + " elements, received " +
                                std::to_string(a.size()));
}

py::tuple forward_train(const Arr& x, std::optional<Arr> gamma, std::optional<Arr> beta,
                        int64_t outer, int64_t C, int64_t inner, float eps) {
  const char* fn = "bn_forward_train_emulated";
  check_view(x, outer * C * inner, fn, "x");
  if (gamma) check_view(*gamma, C, fn, "gamma");
  if (beta) check_view(*beta, C, fn, "beta");
  const int64_t n = outer * inner;
  Arr y(x.size()), var(C), mean(C), inv(C);
  const float* px = x.data();
  std::vector<float> m(C), s(C), t(C);
  for (int64_t c = 0; c < C; ++c) {
    const B::Welford w = reduce_channel<B::Welford>(
        n, C, B::welford_empty(),
        [&](B::Welford& a, int64_t j) { B::welford_add(a, px[B::channel_offset(j, c, C, inner)]); },
        [](const B::Welford& a, const B::Welford& b) { return B::welford_merge(a, b); });
    const B::TrainCoeffs k = B::train_coeffs(B::welford_mean(w), B::welford_var(w),
                                             gamma ? gamma->data()[c] : 1.0,
                                             beta ? beta->data()[c] : 0.0, eps);
    mean.mutable_data()[c] = k.mean;
    var.mutable_data()[c] = k.var;
    inv.mutable_data()[c] = k.inv_std;
    m[c] = k.m;
    s[c] = k.s;
    t[c] = k.t;
  }
  float* py_ = y.mutable_data();
  for (int64_t e = 0; e < x.size(); ++e) {
    const int64_t c = (e / inner) % C;
    py_[e] = B::normalize(px[e], m[c], s[c], t[c]);
  }
  return py::make_tuple(y, var, mean, inv);
}

Arr forward_infer(const Arr& x, const Arr& mean, const Arr& var, std::optional<Arr> gamma,
                  std::optional<Arr> beta, int64_t outer, int64_t C, int64_t inner, float eps) {
  const char* fn = "bn_forward_infer_emulated";
  check_view(x, outer * C * inner, fn, "x");
  Arr y(x.size());
  for (int64_t e = 0; e < x.size(); ++e) {
    const int64_t c = (e / inner) % C;
    float s;
    B::infer_coeffs(var.data()[c], gamma ? gamma->data()[c] : 1.0, eps, &s);
    y.mutable_data()[e] =
        B::normalize(x.data()[e], mean.data()[c], s, beta ? beta->data()[c] : 0.f);
  }
  return y;
}

struct Sums2 {
  double dy, d;
};

py::tuple backward(const Arr& dy, const Arr& x, const Arr& mean, const Arr& inv_std,
                   std::optional<Arr> gamma, int64_t outer, int64_t C, int64_t inner) {
  const char* fn = "bn_backward_emulated";
  check_view(x, outer * C * inner, fn, "x");
  check_view(dy, outer * C * inner, fn, "dy");
  const int64_t n = outer * inner;
  const float *px = x.data(), *pg = dy.data();
  Arr dx(x.size()), dgamma(C), dbeta(C);
  std::vector<float> a(C), b(C), cc(C);
  for (int64_t c = 0; c < C; ++c) {
    const float m = mean.data()[c];
    const Sums2 s = reduce_channel<Sums2>(
        n, C, Sums2{0.0, 0.0},
        [&](Sums2& acc, int64_t j) {
          const int64_t e = B::channel_offset(j, c, C, inner);
          acc.dy += pg[e];
          acc.d += static_cast<double>(px[e]) - m;
        },
        [](const Sums2& p, const Sums2& q) { return Sums2{p.dy + q.dy, p.d + q.d}; });
    const double delta = n ? s.d / n : 0.0;
    const double dot = reduce_channel<double>(
        n, C, 0.0,
        [&](double& acc, int64_t j) {
          const int64_t e = B::channel_offset(j, c, C, inner);
          acc += pg[e] * ((static_cast<double>(px[e]) - m) - delta);
        },
        [](double p, double q) { return p + q; });
    const B::BackwardCoeffs k = B::backward_coeffs(s.dy, delta, dot, static_cast<double>(n),
                                                   inv_std.data()[c],
                                                   gamma ? gamma->data()[c] : 1.0);
    dgamma.mutable_data()[c] = n ? k.dgamma : 0.f;
    dbeta.mutable_data()[c] = n ? k.dbeta : 0.f;
    a[c] = k.a;
    b[c] = k.b;
    cc[c] = k.c;
  }
  for (int64_t e = 0; e < x.size(); ++e) {
    const int64_t c = (e / inner) % C;
    dx.mutable_data()[e] = B::backward_dx(pg[e], px[e], mean.data()[c], a[c], b[c], cc[c]);
  }
  return py::make_tuple(dx, dgamma, dbeta);
}

}  // namespace

FK_BIND_FAMILY(batchnorm) {
  m.def("bn_welford", [](const Arr64& x) {
    B::Welford w = B::welford_empty();
    for (py::ssize_t k = 0; k < x.size(); ++k) B::welford_add(w, x.data()[k]);
    return to_tuple(w);
  }, py::arg("x"), "Welford state (n, mean, m2, sum) of x accumulated in order.");
  m.def("bn_welford_merge", [](const py::tuple& a, const py::tuple& b) {
    return to_tuple(B::welford_merge(from_tuple(a), from_tuple(b)));
  }, py::arg("a"), py::arg("b"), "Welford state of the union of two states' samples.");
  m.def("bn_welford_mean_var", [](const py::tuple& a) {
    const B::Welford w = from_tuple(a);
    return py::make_tuple(B::welford_mean(w), B::welford_var(w));
  }, py::arg("state"), "(mean, biased variance) of a Welford state.");
  m.def("bn_stats_chunks", &B::stats_chunks, py::arg("n"), py::arg("C"));
  m.def("bn_chunk_len", &B::chunk_len, py::arg("n"), py::arg("chunks"));
  m.def("bn_forward_train_emulated", &forward_train, py::arg("x"), py::arg("gamma"),
        py::arg("beta"), py::arg("outer"), py::arg("C"), py::arg("inner"), py::arg("epsilon"),
        "The GPU batchnorm_forward_train's algorithm on the CPU: (y, var, mean, inv_std).");
  m.def("bn_forward_infer_emulated", &forward_infer, py::arg("x"), py::arg("mean"),
        py::arg("var"), py::arg("gamma"), py::arg("beta"), py::arg("outer"), py::arg("C"),
        py::arg("inner"), py::arg("epsilon"));
  m.def("bn_backward_emulated", &backward, py::arg("dy"), py::arg("x"), py::arg("mean"),
        py::arg("inv_std"), py::arg("gamma"), py::arg("outer"), py::arg("C"), py::arg("inner"),
        "The GPU batchnorm_backward's algorithm on the CPU: (dx, dgamma, dbeta).");
}
