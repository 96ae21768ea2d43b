// bind_attention.cpp: attention_forward / attention_backward (kernels.h, cpp/attention/).
//
// Checked before the kernel runs: sizes below 2**60 and the (N, heads, Tq, Tk) probability
// count below 2**62 (the dropout counter and the mask offsets are formed from it), heads a
// multiple of kv_heads, mask_batch / mask_heads 1 or the full size, the dropout rate in [0, 1],
// every buffer's dtype, contiguity and element count, and no output overlapping another output
// or an input.
#include <string>

#include "check.h"
#include "fkeras/kernels.h"

namespace {

struct Sizes {
  int64_t N, Tq, Tk, heads, kv_heads, D, Dv, mask_batch, mask_heads;
};

void check_problem(const char* k, const Sizes& s, bool has_mask, float dropout_rate) {
  fkb::check_sizes(k, {{"N", s.N}, {"Tq", s.Tq}, {"Tk", s.Tk}, {"heads", s.heads},
                       {"kv_heads", s.kv_heads}, {"D", s.D}, {"Dv", s.Dv},
                       {"mask_batch", s.mask_batch}, {"mask_heads", s.mask_heads}});
  if (s.kv_heads == 0 ? s.heads != 0 : s.heads % s.kv_heads != 0)
    throw py::value_error(std::string(k) + ": argument 'heads' (" + std::to_string(s.heads) +
                          ") must be a multiple of 'kv_heads' (" + std::to_string(s.kv_heads) +
                          ")");
  int64_t probs = 1;
  for (int64_t d : {s.N, s.heads, s.Tq, s.Tk})
    if (d > 0 && (__builtin_mul_overflow(probs, d, &probs) || probs >= fkb::kMaxExtent))
      throw py::value_error(std::string(k) +
                            ": the attention probabilities (N, heads, Tq, Tk) = (" +
                            std::to_string(s.N) + ", " + std::to_string(s.heads) + ", " +
                            std::to_string(s.Tq) + ", " + std::to_string(s.Tk) +
                            ") are too large: their count must stay below 2**62");
  if (has_mask && !((s.mask_batch == 1 || s.mask_batch == s.N) &&
                    (s.mask_heads == 1 || s.mask_heads == s.heads)))
    throw py::value_error(std::string(k) + ": arguments 'mask_batch' and 'mask_heads' must be 1 "
                          "or N (" + std::to_string(s.N) + ") and 1 or heads (" +
                          std::to_string(s.heads) + "), received " +
                          std::to_string(s.mask_batch) + " and " + std::to_string(s.mask_heads));
  if (!(dropout_rate >= 0.0f && dropout_rate <= 1.0f))
    throw py::value_error(std::string(k) + ": argument 'dropout_rate' must be in [0, 1], "
                          "received " + std::to_string(dropout_rate));
}

}  // namespace

void bind_attention(py::module_& m) {
  m.def("attention_forward", [](py::object out, py::object lse, py::object q, py::object k,
                                py::object v, py::object mask, int64_t N, int64_t Tq, int64_t Tk,
                                int64_t heads, int64_t kv_heads, int64_t D, int64_t Dv,
                                int64_t mask_batch, int64_t mask_heads, bool causal, float scale,
                                float dropout_rate, int64_t seed) {
    const char* kn = "attention_forward";
    const Sizes s{N, Tq, Tk, heads, kv_heads, D, Dv, mask_batch, mask_heads};
    check_problem(kn, s, !mask.is_none(), dropout_rate);
    float* pout = fkb::out_f32(out, kn, "out", {N, Tq, heads, Dv});
    float* plse = fkb::out_f32(lse, kn, "lse", {N, heads, Tq});
    const float* pq = fkb::in_f32(q, kn, "q", {N, Tq, heads, D});
    const float* pk = fkb::in_f32(k, kn, "k", {N, Tk, kv_heads, D});
    const float* pv = fkb::in_f32(v, kn, "v", {N, Tk, kv_heads, Dv});
    const uint8_t* pm = fkb::in_bool(mask, kn, "mask", {mask_batch, mask_heads, Tq, Tk}, true);
    if (!fkb::check_outputs(kn, {{"out", out}, {"lse", lse}},
                            {{"q", q}, {"k", k}, {"v", v}, {"mask", mask}}))
      return;
    py::gil_scoped_release nogil;
    fk::attention_forward(pout, plse, pq, pk, pv, pm, N, Tq, Tk, heads, kv_heads, D, Dv,
                          mask_batch, mask_heads, causal, scale, dropout_rate, seed);
  }, py::arg("out"), py::arg("lse"), py::arg("q"), py::arg("k"), py::arg("v"), py::arg("mask"),
     py::arg("N"), py::arg("Tq"), py::arg("Tk"), py::arg("heads"), py::arg("kv_heads"),
     py::arg("D"), py::arg("Dv"), py::arg("mask_batch"), py::arg("mask_heads"),
     py::arg("causal"), py::arg("scale"), py::arg("dropout_rate"), py::arg("seed"),
     "Fused scaled-dot-product attention (online softmax); saves lse for the backward.");

  m.def("attention_backward", [](py::object dq, py::object dk, py::object dv, py::object dout,
                                 py::object q, py::object k, py::object v, py::object out,
                                 py::object lse, py::object mask, int64_t N, int64_t Tq,
                                 int64_t Tk, int64_t heads, int64_t kv_heads, int64_t D,
                                 int64_t Dv, int64_t mask_batch, int64_t mask_heads, bool causal,
                                 float scale, float dropout_rate, int64_t seed) {
    const char* kn = "attention_backward";
    const Sizes s{N, Tq, Tk, heads, kv_heads, D, Dv, mask_batch, mask_heads};
    check_problem(kn, s, !mask.is_none(), dropout_rate);
    float* pdq = fkb::out_f32(dq, kn, "dq", {N, Tq, heads, D});
    float* pdk = fkb::out_f32(dk, kn, "dk", {N, Tk, kv_heads, D});
    float* pdv = fkb::out_f32(dv, kn, "dv", {N, Tk, kv_heads, Dv});
    const float* pdout = fkb::in_f32(dout, kn, "dout", {N, Tq, heads, Dv});
    const float* pq = fkb::in_f32(q, kn, "q", {N, Tq, heads, D});
    const float* pk = fkb::in_f32(k, kn, "k", {N, Tk, kv_heads, D});
    const float* pv = fkb::in_f32(v, kn, "v", {N, Tk, kv_heads, Dv});
    const float* pout = fkb::in_f32(out, kn, "out", {N, Tq, heads, Dv});
    const float* plse = fkb::in_f32(lse, kn, "lse", {N, heads, Tq});
    const uint8_t* pm = fkb::in_bool(mask, kn, "mask", {mask_batch, mask_heads, Tq, Tk}, true);
    if (!fkb::check_outputs(kn, {{"dq", dq}, {"dk", dk}, {"dv", dv}},
                            {{"dout", dout}, {"q", q}, {"k", k}, {"v", v}, {"out", out},
                             {"lse", lse}, {"mask", mask}}))
      return;
    py::gil_scoped_release nogil;
    fk::attention_backward(pdq, pdk, pdv, pdout, pq, pk, pv, pout, plse, pm, N, Tq, Tk, heads,
                           kv_heads, D, Dv, mask_batch, mask_heads, causal, scale, dropout_rate,
                           seed);
  }, py::arg("dq"), py::arg("dk"), py::arg("dv"), py::arg("dout"), py::arg("q"), py::arg("k"),
     py::arg("v"), py::arg("out"), py::arg("lse"), py::arg("mask"), py::arg("N"), py::arg("Tq"),
     py::arg("Tk"), py::arg("heads"), py::arg("kv_heads"), py::arg("D"), py::arg("Dv"),
     py::arg("mask_batch"), py::arg("mask_heads"), py::arg("causal"), py::arg("scale"),
     py::arg("dropout_rate"), py::arg("seed"),
     "dq, dk, dv of attention_forward, the probabilities recomputed from lse.");
}
