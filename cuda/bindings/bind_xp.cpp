// bind_xp.cpp: fkeras._C_cuda's array namespace kernels (xp_binary, xp_unary, xp_where,
// xp_reduce, xp_copy2d), called by fkeras/backend/cuda_xp.py. Checked before any launch:
// float32 operands (a Python number stands for a scalar operand), operand shapes that
// broadcast to the output's (NumPy's rule), rank <= 8, known operation codes, reduction axes in
// range and the output's element count, copy extents inside both arrays.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "../kernels/xp.cuh"
#include "fk_cuda/binders.h"
#include "fk_cuda/device_array.h"
#include "fk_cuda/runtime.h"

namespace py = pybind11;
using fk_cuda::DeviceArray;
using fk_cuda::DType;
namespace xp = fk_cuda::xp;

namespace {

// A DeviceArray (float32) or a Python number (a scalar operand, shape ()).
fk_cuda::XpOperand operand(const py::object& v, const char* fn, const char* arg,
                           std::vector<int64_t>* shape) {
  if (py::isinstance<DeviceArray>(v)) {
    const DeviceArray& a = v.cast<const DeviceArray&>();
    fk_cuda::check_dtype(a, DType::Float32, fn, arg);
    *shape = a.shape();
    return {a.data_as<float>(), 0.0f};
  }
  if (py::isinstance<py::float_>(v) || py::isinstance<py::int_>(v) ||
      py::isinstance<py::bool_>(v)) {
    shape->clear();
    return {nullptr, static_cast<float>(v.cast<double>())};
  }
  throw py::type_error(std::string(fn) + ": argument '" + arg +
                       "' must be a DeviceArray or a number, received " +
                       std::string(py::str(py::type::of(v))));
}

xp::StridedMap broadcast_map(const DeviceArray& out, const std::vector<std::vector<int64_t>>& ins,
                             const char* fn) {
  if (out.ndim() > xp::kMaxDims)
    throw py::value_error(std::string(fn) + ": rank " + std::to_string(out.ndim()) +
                          " exceeds the namespace's limit of " + std::to_string(xp::kMaxDims));
  xp::StridedMap m;
  if (!xp::make_broadcast_map(out.shape(), ins, &m)) {
    std::string shapes;
    for (const auto& s : ins) shapes += (shapes.empty() ? "" : ", ") + fk_cuda::shape_str(s);
    throw py::value_error(std::string(fn) + ": operands of shapes " + shapes +
                          " do not broadcast to the output shape " +
                          fk_cuda::shape_str(out.shape()));
  }
  return m;
}

void check_code(int op, int count, const char* fn) {
  if (op < 0 || op >= count)
    throw py::value_error(std::string(fn) + ": argument 'op' must be a code in [0, " +
                          std::to_string(count) + "), received " + std::to_string(op));
}

void check_out(const DeviceArray& out, const char* fn) {
  fk_cuda::check_dtype(out, DType::Float32, fn, "out");
}

}  // namespace

FK_BIND_FAMILY(xp) {
  m.def("xp_binary", [](DeviceArray& out, const py::object& a, const py::object& b, int op) {
    check_out(out, "xp_binary");
    check_code(op, xp::kBinaryCount, "xp_binary");
    std::vector<int64_t> sa, sb;
    fk_cuda::XpOperand oa = operand(a, "xp_binary", "a", &sa);
    fk_cuda::XpOperand ob = operand(b, "xp_binary", "b", &sb);
    xp::StridedMap map = broadcast_map(out, {sa, sb}, "xp_binary");
    fk_cuda::xp_binary(out.data_as<float>(), oa, ob, op, map, fk_cuda::stream());
  }, py::arg("out"), py::arg("a"), py::arg("b"), py::arg("op"),
     "out = op(a, b) with NumPy broadcasting (float32; a or b may be a number).");
  m.def("xp_unary", [](DeviceArray& out, const DeviceArray& x, int op) {
    check_out(out, "xp_unary");
    fk_cuda::check_dtype(x, DType::Float32, "xp_unary", "x");
    fk_cuda::check_same_shape(out, x, "xp_unary", "out", "x");
    check_code(op, xp::kUnaryCount, "xp_unary");
    fk_cuda::xp_unary(out.data_as<float>(), x.data_as<float>(), op, x.size(), fk_cuda::stream());
  }, py::arg("out"), py::arg("x"), py::arg("op"), "out = op(x) elementwise (float32).");
  m.def("xp_where", [](DeviceArray& out, const DeviceArray& cond, const py::object& x,
                       const py::object& y) {
    check_out(out, "xp_where");
    int cond_bytes = 0;
    if (cond.dtype() == DType::Float32) cond_bytes = 4;
    else if (cond.dtype() == DType::Bool || cond.dtype() == DType::UInt8) cond_bytes = 1;
    else
      throw py::value_error(std::string("xp_where: argument 'cond' must be float32, bool or "
                                        "uint8, received ") + fk_cuda::dtype_name(cond.dtype()));
    std::vector<int64_t> sx, sy;
    fk_cuda::XpOperand ox = operand(x, "xp_where", "x", &sx);
    fk_cuda::XpOperand oy = operand(y, "xp_where", "y", &sy);
    xp::StridedMap map = broadcast_map(out, {cond.shape(), sx, sy}, "xp_where");
    fk_cuda::xp_where(out.data_as<float>(), cond.data(), cond_bytes, ox, oy, map,
                      fk_cuda::stream());
  }, py::arg("out"), py::arg("cond"), py::arg("x"), py::arg("y"),
     "out = where(cond, x, y) with NumPy broadcasting (float32 x, y; cond nonzero is true).");
  m.def("xp_reduce", [](DeviceArray& out, const DeviceArray& x, int op,
                        const std::vector<int64_t>& axes) {
    check_out(out, "xp_reduce");
    fk_cuda::check_dtype(x, DType::Float32, "xp_reduce", "x");
    check_code(op, xp::kReduceCount, "xp_reduce");
    if (x.ndim() > xp::kMaxDims)
      throw py::value_error("xp_reduce: rank " + std::to_string(x.ndim()) +
                            " exceeds the namespace's limit of " + std::to_string(xp::kMaxDims));
    std::vector<bool> reduced(x.ndim(), false);
    for (int64_t a : axes) {
      if (a < 0 || a >= x.ndim())
        throw py::value_error("xp_reduce: axis " + std::to_string(a) +
                              " is out of bounds for an array of rank " +
                              std::to_string(x.ndim()));
      reduced[a] = true;
    }
    xp::ReduceMap map = xp::make_reduce_map(x.shape(), reduced);
    if (out.size() != map.n_out)
      throw py::value_error("xp_reduce: argument 'out' must have " + std::to_string(map.n_out) +
                            " elements, received shape " + fk_cuda::shape_str(out.shape()));
    if (map.n_red == 0 && map.n_out > 0 && (op == xp::kMax || op == xp::kMin))
      throw py::value_error("xp_reduce: zero-size reduction of max/min has no identity");
    const int64_t ws_len = fk_cuda::xp_reduce_workspace(map);
    DeviceArray ws({ws_len}, DType::Float64);
    fk_cuda::xp_reduce(out.data_as<float>(), x.data_as<float>(), op, map,
                       ws_len ? ws.data_as<double>() : nullptr, fk_cuda::stream());
  }, py::arg("out"), py::arg("x"), py::arg("op"), py::arg("axes"),
     "out = reduce(x) over `axes` (sum/mean/max/min; float64 accumulation, deterministic).");
  m.def("xp_copy2d", [](DeviceArray& dst, int64_t dst_offset, int64_t dst_ld,
                        const DeviceArray& src, int64_t src_offset, int64_t src_ld, int64_t rows,
                        int64_t cols) {
    if (dst.dtype() != src.dtype())
      throw py::value_error(std::string("xp_copy2d: 'dst' is ") + fk_cuda::dtype_name(dst.dtype()) +
                            " but 'src' is " + fk_cuda::dtype_name(src.dtype()));
    if (rows < 0 || cols < 0 || dst_offset < 0 || src_offset < 0 || dst_ld < cols || src_ld < cols)
      throw py::value_error("xp_copy2d: invalid extents (rows=" + std::to_string(rows) +
                            ", cols=" + std::to_string(cols) + ", lds " + std::to_string(dst_ld) +
                            ", " + std::to_string(src_ld) + ")");
    if (rows && cols) {
      if (dst_offset + (rows - 1) * dst_ld + cols > dst.size())
        throw py::value_error("xp_copy2d: the copy does not fit in 'dst' of shape " +
                              fk_cuda::shape_str(dst.shape()));
      if (src_offset + (rows - 1) * src_ld + cols > src.size())
        throw py::value_error("xp_copy2d: the copy reads past 'src' of shape " +
                              fk_cuda::shape_str(src.shape()));
    }
    const size_t e = fk_cuda::dtype_size(dst.dtype());
    fk_cuda::xp_copy2d(static_cast<char*>(dst.data()) + dst_offset * e, dst_ld,
                       static_cast<const char*>(src.data()) + src_offset * e, src_ld, rows, cols,
                       static_cast<int>(e), fk_cuda::stream());
  }, py::arg("dst"), py::arg("dst_offset"), py::arg("dst_ld"), py::arg("src"),
     py::arg("src_offset"), py::arg("src_ld"), py::arg("rows"), py::arg("cols"),
     "dst[dst_offset + r*dst_ld + c] = src[src_offset + r*src_ld + c] (any dtype).");
}
