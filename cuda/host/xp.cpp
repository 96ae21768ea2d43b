// xp.cpp: fkeras._C_cuda_host bindings of the array namespace math (fk_cuda/xp_math.h): the
// broadcast and reduction index maps and the per-element functions, applied over NumPy arrays
// exactly as the kernels of cuda/kernels/xp.cu apply them (tests/cuda/test_xp_math_host.py
// compares them with NumPy).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "fk_cuda/binders.h"
#include "fk_cuda/xp_math.h"

namespace py = pybind11;
namespace xp = fk_cuda::xp;

namespace {

using F32 = py::array_t<float, py::array::c_style | py::array::forcecast>;
using Shape = std::vector<int64_t>;

Shape shape_of(const F32& a) { return Shape(a.shape(), a.shape() + a.ndim()); }

xp::StridedMap map_or_throw(const Shape& out, const std::vector<Shape>& ins) {
  xp::StridedMap m;
  if (!xp::make_broadcast_map(out, ins, &m))
    throw py::value_error("xp: operands do not broadcast to the output shape");
  return m;
}

int64_t size_of(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

}  // namespace

FK_BIND_FAMILY(xp) {
  m.def("xp_broadcast_offsets", [](const Shape& out, const std::vector<Shape>& ins) {
    xp::StridedMap m = map_or_throw(out, ins);
    const int64_t n = size_of(out);
    py::array_t<int64_t> res({static_cast<py::ssize_t>(n), static_cast<py::ssize_t>(ins.size())});
    int64_t* r = res.mutable_data();
    for (int64_t i = 0; i < n; ++i) {
      int64_t off[xp::kMaxOperands];
      xp::map_offsets<xp::kMaxOperands>(m, i, off);
      for (size_t k = 0; k < ins.size(); ++k) r[i * ins.size() + k] = off[k];
    }
    return res;
  }, py::arg("out_shape"), py::arg("in_shapes"),
     "Offsets (n, operands) of each output element in each operand, by the kernels' map.");
  m.def("xp_collapsed_shape", [](const Shape& out, const std::vector<Shape>& ins) {
    xp::StridedMap m = map_or_throw(out, ins);
    return Shape(m.shape, m.shape + m.ndim);
  }, py::arg("out_shape"), py::arg("in_shapes"), "The map's axes after collapsing.");
  m.def("xp_binary_host", [](const F32& a, const F32& b, int op, const Shape& out_shape) {
    if (op < 0 || op >= xp::kBinaryCount) throw py::value_error("xp_binary_host: bad op code");
    xp::StridedMap m = map_or_throw(out_shape, {shape_of(a), shape_of(b)});
    F32 out(std::vector<py::ssize_t>(out_shape.begin(), out_shape.end()));
    float* o = out.mutable_data();
    for (int64_t i = 0; i < size_of(out_shape); ++i) {
      int64_t off[2];
      xp::map_offsets<2>(m, i, off);
      o[i] = xp::binary(op, a.data()[off[0]], b.data()[off[1]]);
    }
    return out;
  }, py::arg("a"), py::arg("b"), py::arg("op"), py::arg("out_shape"));
  m.def("xp_unary_host", [](const F32& x, int op) {
    if (op < 0 || op >= xp::kUnaryCount) throw py::value_error("xp_unary_host: bad op code");
    F32 out(std::vector<py::ssize_t>(x.shape(), x.shape() + x.ndim()));
    for (py::ssize_t i = 0; i < x.size(); ++i) out.mutable_data()[i] = xp::unary(op, x.data()[i]);
    return out;
  }, py::arg("x"), py::arg("op"));
  m.def("xp_where_host", [](const F32& cond, const F32& x, const F32& y, const Shape& out_shape) {
    xp::StridedMap m = map_or_throw(out_shape, {shape_of(cond), shape_of(x), shape_of(y)});
    F32 out(std::vector<py::ssize_t>(out_shape.begin(), out_shape.end()));
    for (int64_t i = 0; i < size_of(out_shape); ++i) {
      int64_t off[3];
      xp::map_offsets<3>(m, i, off);
      out.mutable_data()[i] = cond.data()[off[0]] != 0.0f ? x.data()[off[1]] : y.data()[off[2]];
    }
    return out;
  }, py::arg("cond"), py::arg("x"), py::arg("y"), py::arg("out_shape"));
  m.def("xp_reduce_plan", [](const Shape& shape, const std::vector<int64_t>& axes) {
    std::vector<bool> reduced(shape.size(), false);
    for (int64_t a : axes) reduced.at(static_cast<size_t>(a)) = true;
    xp::ReducePlan p = xp::plan_reduce(xp::make_reduce_map(shape, reduced));
    return py::make_tuple(p.kind == xp::kColumns ? "columns" : "rows", p.chunks, p.chunk_len);
  }, py::arg("shape"), py::arg("axes"), "xp_reduce's plan: (kind, chunks, chunk length).");
  m.def("xp_reduce_host", [](const F32& x, int op, const std::vector<int64_t>& axes) {
    if (op < 0 || op >= xp::kReduceCount) throw py::value_error("xp_reduce_host: bad op code");
    std::vector<bool> reduced(x.ndim(), false);
    for (int64_t a : axes) {
      if (a < 0 || a >= x.ndim()) throw py::value_error("xp_reduce_host: axis out of range");
      reduced[a] = true;
    }
    xp::ReduceMap m = xp::make_reduce_map(shape_of(x), reduced);
    const xp::ReducePlan p = xp::plan_reduce(m);
    F32 out(std::vector<py::ssize_t>{static_cast<py::ssize_t>(m.n_out)});
    constexpr int kThreads = 256;  // the rows kernel's block
    for (int64_t o = 0; o < m.n_out; ++o) {
      const float* base = x.data() + xp::map_offset(m.kept, o);
      auto at = [&](int64_t r) { return static_cast<double>(base[xp::map_offset(m.red, r)]); };
      double total = xp::reduce_identity(op);
      for (int64_t c = 0; c < p.chunks; ++c) {  // the kernels' order, chunk by chunk
        const int64_t r0 = c * p.chunk_len;
        const int64_t r1 = r0 + p.chunk_len < m.n_red ? r0 + p.chunk_len : m.n_red;
        double part;
        if (p.kind == xp::kColumns) {  // one thread, in order
          part = xp::reduce_identity(op);
          for (int64_t r = r0; r < r1; ++r) part = xp::reduce_combine(op, part, at(r));
        } else {  // 256 strided threads, then the halving tree
          double lane[kThreads];
          for (int t = 0; t < kThreads; ++t) {
            lane[t] = xp::reduce_identity(op);
            for (int64_t r = r0 + t; r < r1; r += kThreads)
              lane[t] = xp::reduce_combine(op, lane[t], at(r));
          }
          for (int w = kThreads / 2; w > 0; w /= 2)
            for (int t = 0; t < w; ++t) lane[t] = xp::reduce_combine(op, lane[t], lane[t + w]);
          part = lane[0];
        }
        total = p.chunks == 1 ? part : xp::reduce_combine(op, total, part);
      }
      out.mutable_data()[o] = xp::reduce_finish(op, total, m.n_red);
    }
    return out;
  }, py::arg("x"), py::arg("op"), py::arg("axes"),
     "The reduction over `axes` as the kernels compute it (plan, chunks, per-thread order, "
     "tree); flat output of the kept elements.");
}
