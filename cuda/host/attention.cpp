// attention.cpp (host): the CUDA fused attention (cuda/kernels/attention.cu) EMULATED on the CPU
// for tests/cuda/test_attention_math_host.py: the same per-thread functions of
// fk_cuda/attention_math.h (forward_tile, dq_tile, dkv_rows, ...) run over the same zero-padded
// key tiles, query tiles, causal bounds and skips as the kernels, one loop iteration per GPU
// thread, so the tests check the GPU's algorithm against fkeras._C and NumPy float64.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "fk_cuda/attention_math.h"
#include "fk_cuda/binders.h"

namespace py = pybind11;
using Arr = py::array_t<float, py::array::c_style | py::array::forcecast>;
using Mask = py::array_t<int32_t, py::array::c_style | py::array::forcecast>;
namespace A = fk_cuda::attn;

namespace {

struct Sizes {
  int64_t N, Tq, Tk, heads, kv_heads, D, Dv, mask_batch, mask_heads;
};

void check_count(const Arr& a, int64_t count, const char* arg) {
  if (a.size() != count)
    throw std::invalid_argument(std::string("attention emulation: argument '") + arg +
                                "' must have " + std::to_string(count) + " elements, received " +
                                std::to_string(a.size()));
}

A::Problem problem(const Sizes& s, const std::vector<int32_t>& mask, bool has_mask, bool causal,
                   float scale, float rate, int64_t seed) {
  if (s.kv_heads <= 0 || s.heads % s.kv_heads != 0)
    throw std::invalid_argument("attention emulation: heads must be a positive multiple of "
                                "kv_heads");
  A::Problem p{};
  p.N = s.N, p.Tq = s.Tq, p.Tk = s.Tk, p.heads = s.heads, p.kv_heads = s.kv_heads;
  p.D = s.D, p.Dv = s.Dv;
  p.mask = has_mask ? mask.data() : nullptr;
  p.mask_batch = s.mask_batch, p.mask_heads = s.mask_heads;
  p.causal = causal, p.scale = scale;
  p.dropout = rate > 0.f;
  p.drop = fk_cuda::dropout_params(rate, seed);
  return p;
}

std::vector<int32_t> mask_of(const py::object& m, const Sizes& s) {
  if (m.is_none()) return {};
  Mask a = m.cast<Mask>();
  if (a.size() != s.mask_batch * s.mask_heads * s.Tq * s.Tk)
    throw std::invalid_argument("attention emulation: mask has the wrong element count");
  return std::vector<int32_t>(a.data(), a.data() + a.size());
}

// The key tile [j0, j0 + kBk) of head (n, kv) as the kernel loads it: transposed, kt (D, kBk)
// and vt (Dv, kBk), zero past Tk.
void key_tile(std::vector<float>& kt, std::vector<float>& vt, const float* k, const float* v,
              const A::Problem& p, int64_t n, int64_t kv, int64_t j0) {
  kt.assign(static_cast<size_t>(A::kBk * p.D), 0.f);
  vt.assign(static_cast<size_t>(A::kBk * p.Dv), 0.f);
  for (int64_t c = 0; c < A::kBk && j0 + c < p.Tk; ++c) {
    const float* kr = k + ((n * p.Tk + j0 + c) * p.kv_heads + kv) * p.D;
    const float* vr = v + ((n * p.Tk + j0 + c) * p.kv_heads + kv) * p.Dv;
    for (int64_t d = 0; d < p.D; ++d) kt[d * A::kBk + c] = kr[d];
    for (int64_t d = 0; d < p.Dv; ++d) vt[d * A::kBk + c] = vr[d];
  }
}

py::tuple forward(const Arr& q, const Arr& k, const Arr& v, py::object mask, const Sizes& s,
                  bool causal, float scale, float rate, int64_t seed) {
  check_count(q, s.N * s.Tq * s.heads * s.D, "q");
  check_count(k, s.N * s.Tk * s.kv_heads * s.D, "k");
  check_count(v, s.N * s.Tk * s.kv_heads * s.Dv, "v");
  const std::vector<int32_t> m = mask_of(mask, s);
  const A::Problem p = problem(s, m, !mask.is_none(), causal, scale, rate, seed);
  Arr out(s.N * s.Tq * s.heads * s.Dv), lse(s.N * s.heads * s.Tq);
  std::vector<float> kt, vt, o(static_cast<size_t>(s.Dv));
  const int64_t group = p.heads / p.kv_heads;
  for (int64_t n = 0; n < p.N; ++n)
    for (int64_t h = 0; h < p.heads; ++h)
      for (int64_t r0 = 0; r0 < p.Tq; r0 += A::kRows) {
        const int64_t rows = std::min<int64_t>(A::kRows, p.Tq - r0), kv = h / group;
        const int32_t* mrows = A::mask_rows(p, n, h);
        for (int64_t i = r0; i < r0 + rows; ++i) {  // one GPU thread each
          std::fill(o.begin(), o.end(), 0.f);
          A::RowState st = A::row_start();
          const float* qi = q.data() + ((n * p.Tq + i) * p.heads + h) * p.D;
          for (int64_t j0 = 0; j0 < A::key_end(p, r0, rows); j0 += A::kBk) {
            key_tile(kt, vt, k.data(), v.data(), p, n, kv, j0);
            A::forward_tile(st, o.data(), qi, kt.data(), vt.data(), p, mrows, n, h, i, j0);
          }
          const bool uniform = A::is_uniform(st, p, mrows, i);
          if (uniform)
            for (int64_t j = 0; j < p.Tk; ++j)
              A::uniform_add(o.data(), v.data() + ((n * p.Tk + j) * p.kv_heads + kv) * p.Dv,
                             A::drop_factor(p, n, h, i, j), p.Dv);
          lse.mutable_data()[(n * p.heads + h) * p.Tq + i] =
              A::forward_finish(st, o.data(), p, uniform);
          std::copy(o.begin(), o.end(), out.mutable_data() + ((n * p.Tq + i) * p.heads + h) * p.Dv);
        }
      }
  return py::make_tuple(out, lse);
}

py::tuple backward(const Arr& dout, const Arr& q, const Arr& k, const Arr& v, const Arr& out,
                   const Arr& lse, py::object mask, const Sizes& s, bool causal, float scale,
                   float rate, int64_t seed) {
  check_count(dout, s.N * s.Tq * s.heads * s.Dv, "dout");
  check_count(out, s.N * s.Tq * s.heads * s.Dv, "out");
  check_count(q, s.N * s.Tq * s.heads * s.D, "q");
  check_count(k, s.N * s.Tk * s.kv_heads * s.D, "k");
  check_count(v, s.N * s.Tk * s.kv_heads * s.Dv, "v");
  check_count(lse, s.N * s.heads * s.Tq, "lse");
  const std::vector<int32_t> m = mask_of(mask, s);
  const A::Problem p = problem(s, m, !mask.is_none(), causal, scale, rate, seed);
  Arr dq(q.size()), dk(k.size()), dv(v.size());
  const int64_t group = p.heads / p.kv_heads;
  std::vector<float> delta(static_cast<size_t>(p.N * p.heads * p.Tq));
  for (int64_t n = 0; n < p.N; ++n)
    for (int64_t h = 0; h < p.heads; ++h)
      for (int64_t i = 0; i < p.Tq; ++i) {
        const int64_t off = ((n * p.Tq + i) * p.heads + h) * p.Dv;
        delta[(n * p.heads + h) * p.Tq + i] = A::row_delta(dout.data() + off, out.data() + off,
                                                           p.Dv);
      }
  // dq: the forward's tiles.
  std::vector<float> kt, vt;
  for (int64_t n = 0; n < p.N; ++n)
    for (int64_t h = 0; h < p.heads; ++h)
      for (int64_t r0 = 0; r0 < p.Tq; r0 += A::kRows) {
        const int64_t rows = std::min<int64_t>(A::kRows, p.Tq - r0), kv = h / group;
        const int32_t* mrows = A::mask_rows(p, n, h);
        for (int64_t i = r0; i < r0 + rows; ++i) {
          float* acc = dq.mutable_data() + ((n * p.Tq + i) * p.heads + h) * p.D;
          std::fill(acc, acc + p.D, 0.f);
          const int64_t e = (n * p.heads + h) * p.Tq + i;
          if (lse.data()[e] == A::neg_inf()) continue;
          const int64_t qoff = (n * p.Tq + i) * p.heads + h;
          for (int64_t j0 = 0; j0 < A::key_end(p, r0, rows); j0 += A::kBk) {
            key_tile(kt, vt, k.data(), v.data(), p, n, kv, j0);
            A::dq_tile(acc, q.data() + qoff * p.D, dout.data() + qoff * p.Dv, lse.data()[e],
                       delta[e], kt.data(), vt.data(), p, mrows, n, h, i, j0);
          }
        }
      }
  // dk, dv: blocks of kRows keys, query tiles of kBq rows (q and dout transposed, rows past the
  // end zero), each GPU thread one key, 4 query rows per step.
  std::vector<float> qt, gt;
  float lt[A::kBq], dt[A::kBq], ut[A::kBq];
  for (int64_t n = 0; n < p.N; ++n)
    for (int64_t kv = 0; kv < p.kv_heads; ++kv)
      for (int64_t j0 = 0; j0 < p.Tk; j0 += A::kRows) {
        const int64_t keys = std::min<int64_t>(A::kRows, p.Tk - j0);
        for (int64_t j = j0; j < j0 + keys; ++j) {
          const int64_t koff = (n * p.Tk + j) * p.kv_heads + kv;
          std::fill(dk.mutable_data() + koff * p.D, dk.mutable_data() + (koff + 1) * p.D, 0.f);
          std::fill(dv.mutable_data() + koff * p.Dv, dv.mutable_data() + (koff + 1) * p.Dv, 0.f);
        }
        for (int64_t h = kv * group; h < (kv + 1) * group; ++h) {
          const int32_t* mrows = A::mask_rows(p, n, h);
          for (int64_t r0 = 0; r0 < p.Tq; r0 += A::kBq) {
            const int64_t rows = std::min<int64_t>(A::kBq, p.Tq - r0);
            bool any_uniform = false;
            for (int64_t r = 0; r < rows; ++r) {
              const int64_t e = (n * p.heads + h) * p.Tq + r0 + r;
              lt[r] = lse.data()[e];
              dt[r] = delta[e];
              ut[r] = lt[r] == A::neg_inf() && !A::row_visible(p, mrows, r0 + r) ? 1.f : 0.f;
              any_uniform = any_uniform || ut[r] != 0.f;
            }
            if (p.causal && r0 + rows - 1 < j0 && !any_uniform) continue;
            qt.assign(static_cast<size_t>(A::kBq * p.D), 0.f);
            gt.assign(static_cast<size_t>(A::kBq * p.Dv), 0.f);
            for (int64_t r = 0; r < rows; ++r) {
              const int64_t qoff = (n * p.Tq + r0 + r) * p.heads + h;
              for (int64_t d = 0; d < p.D; ++d) qt[d * A::kBq + r] = q.data()[qoff * p.D + d];
              for (int64_t d = 0; d < p.Dv; ++d) gt[d * A::kBq + r] = dout.data()[qoff * p.Dv + d];
            }
            for (int64_t j = j0; j < j0 + keys; ++j) {
              const int64_t koff = (n * p.Tk + j) * p.kv_heads + kv;
              for (int64_t r = 0; r < rows; r += 4)
                A::dkv_rows(dk.mutable_data() + koff * p.D, dv.mutable_data() + koff * p.Dv,
                            k.data() + koff * p.D, v.data() + koff * p.Dv, qt.data() + r,
                            gt.data() + r, lt + r, dt + r, ut + r,
                            static_cast<int>(std::min<int64_t>(4, rows - r)), p, mrows, n, h,
                            r0 + r, j);
            }
          }
        }
      }
  return py::make_tuple(dq, dk, dv);
}

Sizes sizes(int64_t N, int64_t Tq, int64_t Tk, int64_t heads, int64_t kv_heads, int64_t D,
            int64_t Dv, int64_t mask_batch, int64_t mask_heads) {
  return Sizes{N, Tq, Tk, heads, kv_heads, D, Dv, mask_batch, mask_heads};
}

}  // namespace

FK_BIND_FAMILY(attention) {
  m.def("attention_tiles", [] { return py::make_tuple(A::kRows, A::kBk, A::kBq); },
        "(threads per block, keys per tile, query rows per tile) of the CUDA attention.");
  m.def("attention_smem_floats", [](int64_t D, int64_t Dv) {
    return py::make_tuple(A::forward_floats(D, Dv), A::dq_floats(D, Dv), A::dkv_floats(D, Dv));
  }, py::arg("D"), py::arg("Dv"), "Floats per block of the forward, dq and dk/dv kernels.");
  m.def("attention_forward_emulated",
        [](const Arr& q, const Arr& k, const Arr& v, py::object mask, int64_t N, int64_t Tq,
           int64_t Tk, int64_t heads, int64_t kv_heads, int64_t D, int64_t Dv, int64_t mask_batch,
           int64_t mask_heads, bool causal, float scale, float rate, int64_t seed) {
          return forward(q, k, v, mask, sizes(N, Tq, Tk, heads, kv_heads, D, Dv, mask_batch,
                                              mask_heads), causal, scale, rate, seed);
        },
        py::arg("q"), py::arg("k"), py::arg("v"), py::arg("mask"), py::arg("N"), py::arg("Tq"),
        py::arg("Tk"), py::arg("heads"), py::arg("kv_heads"), py::arg("D"), py::arg("Dv"),
        py::arg("mask_batch"), py::arg("mask_heads"), py::arg("causal"), py::arg("scale"),
        py::arg("dropout_rate"), py::arg("seed"),
        "The GPU attention_forward's algorithm on the CPU: (out, lse).");
  m.def("attention_backward_emulated",
        [](const Arr& dout, const Arr& q, const Arr& k, const Arr& v, const Arr& out,
           const Arr& lse, py::object mask, int64_t N, int64_t Tq, int64_t Tk, int64_t heads,
           int64_t kv_heads, int64_t D, int64_t Dv, int64_t mask_batch, int64_t mask_heads,
           bool causal, float scale, float rate, int64_t seed) {
          return backward(dout, q, k, v, out, lse, mask,
                          sizes(N, Tq, Tk, heads, kv_heads, D, Dv, mask_batch, mask_heads),
                          causal, scale, rate, seed);
        },
        py::arg("dout"), py::arg("q"), py::arg("k"), py::arg("v"), py::arg("out"),
        py::arg("lse"), py::arg("mask"), py::arg("N"), py::arg("Tq"), py::arg("Tk"),
        py::arg("heads"), py::arg("kv_heads"), py::arg("D"), py::arg("Dv"), py::arg("mask_batch"),
        py::arg("mask_heads"), py::arg("causal"), py::arg("scale"), py::arg("dropout_rate"),
        py::arg("seed"), "The GPU attention_backward's algorithm on the CPU: (dq, dk, dv).");
}
