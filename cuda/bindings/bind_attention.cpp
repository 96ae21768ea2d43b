// bind_attention.cpp: fkeras._C_cuda's attention_forward / attention_backward, called exactly
// like fkeras._C's (same argument names and order; DeviceArrays for the tensors). The mask may
// be None, an int32 DeviceArray (nonzero = visible; DeviceArrays hold no booleans) or a NumPy
// array of booleans, which is converted to int32 and uploaded for the call.
// Checked before any launch, as the CPU binding (plus head sizes below 2**24, the CUDA kernels'
// limit): sizes >= 0, heads a multiple of kv_heads, the
// (N, heads, Tq, Tk) probability count below 2**62, mask_batch / mask_heads 1 or the full size,
// dropout_rate in [0, 1], every buffer's dtype and element count, outputs distinct from each
// other and from the inputs.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <string>
#include <utility>
#include <vector>

#include "../kernels/attention.cuh"
#include "fk_cuda/bind_checks.h"
#include "fk_cuda/binders.h"
#include "fk_cuda/device_array.h"
#include "fk_cuda/dropout_math.h"
#include "fk_cuda/runtime.h"

namespace py = pybind11;
using fk_cuda::DeviceArray;
using fk_cuda::DType;

namespace {

using fk_cuda::bind::fail;

struct Sizes {
  int64_t N, Tq, Tk, heads, kv_heads, D, Dv, mask_batch, mask_heads;
};

int64_t count(const char* fn, std::initializer_list<int64_t> dims) {
  int64_t c = 1;
  for (int64_t d : dims)
    if (__builtin_mul_overflow(c, d, &c) || c > (int64_t{1} << 60))
      fail(fn, "a buffer of more than 2**60 elements was requested");
  return c;
}

void check_problem(const char* fn, const Sizes& s, bool has_mask, float rate) {
  const std::pair<const char*, int64_t> named[] = {
      {"N", s.N}, {"Tq", s.Tq}, {"Tk", s.Tk}, {"heads", s.heads}, {"kv_heads", s.kv_heads},
      {"D", s.D}, {"Dv", s.Dv}, {"mask_batch", s.mask_batch}, {"mask_heads", s.mask_heads}};
  for (const auto& a : named)
    if (a.second < 0)
      fail(fn, std::string("size '") + a.first + "' must be >= 0, received " +
                   std::to_string(a.second));
  if (s.D >= fk_cuda::attn::kMaxHead || s.Dv >= fk_cuda::attn::kMaxHead)
    fail(fn, "head sizes D (" + std::to_string(s.D) + ") and Dv (" + std::to_string(s.Dv) +
                 ") must be below 2**24 on the GPU");
  if (s.kv_heads == 0 ? s.heads != 0 : s.heads % s.kv_heads != 0)
    fail(fn, "argument 'heads' (" + std::to_string(s.heads) + ") must be a multiple of "
             "'kv_heads' (" + std::to_string(s.kv_heads) + ")");
  int64_t probs = 1;
  for (int64_t d : {s.N, s.heads, s.Tq, s.Tk})
    if (d > 0 && (__builtin_mul_overflow(probs, d, &probs) || probs >= (int64_t{1} << 62)))
      fail(fn, "the attention probabilities (N, heads, Tq, Tk) = (" + std::to_string(s.N) + ", " +
                   std::to_string(s.heads) + ", " + std::to_string(s.Tq) + ", " +
                   std::to_string(s.Tk) + ") are too large: their count must stay below 2**62");
  if (has_mask && !((s.mask_batch == 1 || s.mask_batch == s.N) &&
                    (s.mask_heads == 1 || s.mask_heads == s.heads)))
    fail(fn, "arguments 'mask_batch' and 'mask_heads' must be 1 or N (" + std::to_string(s.N) +
                 ") and 1 or heads (" + std::to_string(s.heads) + "), received " +
                 std::to_string(s.mask_batch) + " and " + std::to_string(s.mask_heads));
  if (!(rate >= 0.0f && rate <= 1.0f))
    fail(fn, "argument 'dropout_rate' must be in [0, 1], received " + std::to_string(rate));
}

DeviceArray* device_array(py::object o, const char* fn, const char* name) {
  if (o.is_none()) fail(fn, std::string("argument '") + name + "' is required, received None");
  try {
    return &o.cast<DeviceArray&>();
  } catch (const py::cast_error&) {
    fail(fn, std::string("argument '") + name + "' must be a fkeras._C_cuda.DeviceArray, "
             "received " + std::string(py::str(py::type::of(o).attr("__name__"))));
  }
}

// Checks each buffer; an output may not be any other buffer (inputs may repeat: q is k).
struct Buffers {
  struct Seen {
    const char* name;
    const DeviceArray* a;
    bool output;
  };
  std::vector<Seen> seen;
  const char* fn;

  float* f32(py::object o, const char* name, int64_t n, bool output = false) {
    DeviceArray* a = device_array(o, fn, name);
    fk_cuda::check_dtype(*a, DType::Float32, fn, name);
    if (a->size() != n)
      fail(fn, std::string("argument '") + name + "' must have " + std::to_string(n) +
                   " elements, received " + std::to_string(a->size()) + " (shape " +
                   fk_cuda::shape_str(a->shape()) + ")");
    for (const Seen& s : seen)
      if (s.a == a && n > 0 && (output || s.output))
        fail(fn, std::string("arguments '") + s.name + "' and '" + name +
                     "' must be different arrays (an output overlaps)");
    seen.push_back(Seen{name, a, output});
    return a->data_as<float>();
  }
};

// The mask as int32 on the device: an int32 DeviceArray as is, NumPy booleans uploaded into
// `holder`. Null without a mask.
const int32_t* mask_ptr(py::object mask, const char* fn, int64_t n, DeviceArray* holder) {
  if (mask.is_none()) return nullptr;
  if (py::isinstance<DeviceArray>(mask)) {
    DeviceArray& a = mask.cast<DeviceArray&>();
    fk_cuda::check_dtype(a, DType::Int32, fn, "mask");
    if (a.size() != n)
      fail(fn, "argument 'mask' must have " + std::to_string(n) + " elements, received " +
                   std::to_string(a.size()));
    return a.data_as<int32_t>();
  }
  if (!py::isinstance<py::array>(mask) || !py::array(mask).dtype().is(py::dtype::of<bool>()))
    fail(fn, "argument 'mask' must be None, an int32 DeviceArray or a NumPy bool array, "
             "received " + std::string(py::str(py::type::of(mask).attr("__name__"))));
  auto host = py::array_t<int32_t, py::array::c_style | py::array::forcecast>(mask);
  if (host.size() != n)
    fail(fn, "argument 'mask' must have " + std::to_string(n) + " elements, received " +
                 std::to_string(host.size()));
  *holder = DeviceArray({n}, DType::Int32);
  if (n > 0) holder->copy_from_host(host.data());
  return holder->data_as<int32_t>();
}

fk_cuda::attn::Problem make_problem(const Sizes& s, const int32_t* mask, bool causal,
                                    float scale, float rate, int64_t seed) {
  fk_cuda::attn::Problem p{};
  p.N = s.N, p.Tq = s.Tq, p.Tk = s.Tk, p.heads = s.heads, p.kv_heads = s.kv_heads;
  p.D = s.D, p.Dv = s.Dv;
  p.mask = mask, p.mask_batch = s.mask_batch, p.mask_heads = s.mask_heads;
  p.causal = causal, p.scale = scale;
  p.dropout = rate > 0.0f;
  p.drop = fk_cuda::dropout_params(rate, seed);
  return p;
}

DeviceArray workspace(const fk_cuda::attn::Problem& p, bool backward) {
  const size_t bytes = fk_cuda::attention_workspace_bytes(p, backward);
  return DeviceArray({static_cast<int64_t>((bytes + 3) / 4)}, DType::Float32);
}

}  // namespace

FK_BIND_FAMILY(attention) {
  m.def("attention_forward",
        [](py::object out, py::object lse, py::object q, py::object k, py::object v,
           py::object mask, int64_t N, int64_t Tq, int64_t Tk, int64_t heads, int64_t kv_heads,
           int64_t D, int64_t Dv, int64_t mask_batch, int64_t mask_heads, bool causal,
           float scale, float dropout_rate, int64_t seed) {
          const char* fn = "attention_forward";
          const Sizes s{N, Tq, Tk, heads, kv_heads, D, Dv, mask_batch, mask_heads};
          check_problem(fn, s, !mask.is_none(), dropout_rate);
          Buffers b{{}, fn};
          float* po = b.f32(out, "out", count(fn, {N, Tq, heads, Dv}), true);
          float* pl = b.f32(lse, "lse", count(fn, {N, heads, Tq}), true);
          const float* pq = b.f32(q, "q", count(fn, {N, Tq, heads, D}));
          const float* pk = b.f32(k, "k", count(fn, {N, Tk, kv_heads, D}));
          const float* pv = b.f32(v, "v", count(fn, {N, Tk, kv_heads, Dv}));
          DeviceArray holder({0}, DType::Int32);
          const int32_t* pm = mask_ptr(mask, fn, count(fn, {mask_batch, mask_heads, Tq, Tk}),
                                       &holder);
          const auto p = make_problem(s, pm, causal, scale, dropout_rate, seed);
          DeviceArray ws = workspace(p, false);
          fk_cuda::attention_forward(po, pl, pq, pk, pv, p, ws.data(), fk_cuda::stream());
        },
        py::arg("out"), py::arg("lse"), py::arg("q"), py::arg("k"), py::arg("v"),
        py::arg("mask"), py::arg("N"), py::arg("Tq"), py::arg("Tk"), py::arg("heads"),
        py::arg("kv_heads"), py::arg("D"), py::arg("Dv"), py::arg("mask_batch"),
        py::arg("mask_heads"), py::arg("causal"), py::arg("scale"), py::arg("dropout_rate"),
        py::arg("seed"),
        "Fused scaled-dot-product attention (online softmax); saves lse for the backward.");

  m.def("attention_backward",
        [](py::object dq, py::object dk, py::object dv, py::object dout, py::object q,
           py::object k, py::object v, py::object out, py::object lse, py::object mask, int64_t N,
           int64_t Tq, int64_t Tk, int64_t heads, int64_t kv_heads, int64_t D, int64_t Dv,
           int64_t mask_batch, int64_t mask_heads, bool causal, float scale, float dropout_rate,
           int64_t seed) {
          const char* fn = "attention_backward";
          const Sizes s{N, Tq, Tk, heads, kv_heads, D, Dv, mask_batch, mask_heads};
          check_problem(fn, s, !mask.is_none(), dropout_rate);
          Buffers b{{}, fn};
          const int64_t nq = count(fn, {N, Tq, heads, D}), nk = count(fn, {N, Tk, kv_heads, D});
          const int64_t nv = count(fn, {N, Tk, kv_heads, Dv}), no = count(fn, {N, Tq, heads, Dv});
          float* pdq = b.f32(dq, "dq", nq, true);
          float* pdk = b.f32(dk, "dk", nk, true);
          float* pdv = b.f32(dv, "dv", nv, true);
          const float* pdo = b.f32(dout, "dout", no);
          const float* pq = b.f32(q, "q", nq);
          const float* pk = b.f32(k, "k", nk);
          const float* pv = b.f32(v, "v", nv);
          const float* po = b.f32(out, "out", no);
          const float* pl = b.f32(lse, "lse", count(fn, {N, heads, Tq}));
          DeviceArray holder({0}, DType::Int32);
          const int32_t* pm = mask_ptr(mask, fn, count(fn, {mask_batch, mask_heads, Tq, Tk}),
                                       &holder);
          const auto p = make_problem(s, pm, causal, scale, dropout_rate, seed);
          DeviceArray ws = workspace(p, true);
          fk_cuda::attention_backward(pdq, pdk, pdv, pdo, pq, pk, pv, po, pl, p, ws.data(),
                                      fk_cuda::stream());
        },
        py::arg("dq"), py::arg("dk"), py::arg("dv"), py::arg("dout"), py::arg("q"), py::arg("k"),
        py::arg("v"), py::arg("out"), py::arg("lse"), py::arg("mask"), py::arg("N"),
        py::arg("Tq"), py::arg("Tk"), py::arg("heads"), py::arg("kv_heads"), py::arg("D"),
        py::arg("Dv"), py::arg("mask_batch"), py::arg("mask_heads"), py::arg("causal"),
        py::arg("scale"), py::arg("dropout_rate"), py::arg("seed"),
        "dq, dk, dv of attention_forward, the probabilities recomputed from lse.");
}
