// bind_pointwise.cpp: fkeras._C_cuda bindings of the pointwise family (cuda/kernels/
// pointwise.cu, rows.cu). Names, argument names and order equal fkeras._C's CPU kernels, with
// DeviceArrays in place of NumPy arrays; every argument is checked (dtype float32 / int64,
// element count from the size arguments, activation code, rate, step, index range) and a
// ValueError naming the kernel, the argument, the expected and the received value is raised
// before any kernel runs. Launches go on fk_cuda::stream().
#include <pybind11/pybind11.h>

#include <cmath>
#include <string>

#include "fk_cuda/bind_checks.h"
#include "fk_cuda/binders.h"
#include "fk_cuda/device_array.h"
#include "fk_cuda/optimizer_math.h"
#include "fk_cuda/runtime.h"
#include "kernels/pointwise.cuh"

namespace py = pybind11;
using fk_cuda::DeviceArray;
using fk_cuda::DType;

namespace {

using fk_cuda::bind::fail;

void check_sizes(const char* fn, std::initializer_list<std::pair<const char*, int64_t>> sizes) {
  for (const auto& s : sizes)
    if (s.second < 0)
      fail(fn, std::string("size '") + s.first + "' must be >= 0, received " +
                   std::to_string(s.second));
}

DeviceArray& arr(py::object o, const char* fn, const char* name) {
  if (o.is_none()) fail(fn, std::string("argument '") + name + "' is required, received None");
  try {
    return o.cast<DeviceArray&>();
  } catch (const py::cast_error&) {
    fail(fn, std::string("argument '") + name + "' must be a fkeras._C_cuda.DeviceArray, received " +
                 std::string(py::str(py::type::of(o).attr("__name__"))));
  }
}

template <class T>
T* typed(py::object o, const char* fn, const char* name, DType dt, int64_t count,
         bool optional = false) {
  if (optional && o.is_none()) return nullptr;
  DeviceArray& a = arr(o, fn, name);
  fk_cuda::check_dtype(a, dt, fn, name);
  if (a.size() != count)
    fail(fn, std::string("argument '") + name + "' must have " + std::to_string(count) +
                 " elements, received " + std::to_string(a.size()) + " (shape " +
                 fk_cuda::shape_str(a.shape()) + ")");
  return static_cast<T*>(a.data());
}

float* f32(py::object o, const char* fn, const char* name, int64_t count, bool optional = false) {
  return typed<float>(o, fn, name, DType::Float32, count, optional);
}
const int64_t* i64(py::object o, const char* fn, const char* name, int64_t count) {
  return typed<int64_t>(o, fn, name, DType::Int64, count);
}

void check_act(const char* fn, int64_t act) {
  if (act < 0 || act > 13)
    fail(fn, "argument 'activation' must be an activation code in [0, 13], received " +
                 std::to_string(act));
}

void check_rate(const char* fn, float rate) {
  if (!(rate >= 0.0f && rate <= 1.0f))
    fail(fn, "argument 'rate' must be in [0, 1], received " + std::to_string(rate));
}

void check_step(const char* fn, int64_t step) {
  if (step < 1) fail(fn, "argument 'step' must be >= 1 (1-based), received " + std::to_string(step));
}

void check_indices(const char* fn, const char* name, const int64_t* idx, int64_t n, int64_t V) {
  if (n <= 0) return;
  DeviceArray scratch({1}, DType::Int64);
  int64_t value = 0;
  const int64_t pos = fk_cuda::find_bad_index(idx, n, V, scratch.data(), &value, fk_cuda::stream());
  if (pos >= 0)
    fail(fn, std::string("argument '") + name + "' must hold values in [0, " + std::to_string(V) +
                 "), received " + std::to_string(value) + " at position " + std::to_string(pos));
}

// A float32 scratch DeviceArray of at least `bytes` bytes (from the caching allocator).
DeviceArray workspace(size_t bytes) {
  return DeviceArray({static_cast<int64_t>((bytes + 3) / 4)}, DType::Float32);
}

void def_rows(py::module_& m, const char* name,
              void (*k)(float*, const float*, int64_t, int64_t, cudaStream_t), const char* out,
              const char* in) {
  m.def(name, [name, k, out, in](py::object y, py::object x, int64_t rows, int64_t cols) {
    check_sizes(name, {{"rows", rows}, {"cols", cols}});
    float* py_ = f32(y, name, out, rows * cols);
    const float* px = f32(x, name, in, rows * cols);
    k(py_, px, rows, cols, fk_cuda::stream());
  }, py::arg(out), py::arg(in), py::arg("rows"), py::arg("cols"));
}

void def_rows_bwd(py::module_& m, const char* name,
                  void (*k)(float*, const float*, const float*, int64_t, int64_t, cudaStream_t)) {
  m.def(name, [name, k](py::object dx, py::object dy, py::object y, int64_t rows, int64_t cols) {
    check_sizes(name, {{"rows", rows}, {"cols", cols}});
    float* pdx = f32(dx, name, "dx", rows * cols);
    const float* pdy = f32(dy, name, "dy", rows * cols);
    const float* pyy = f32(y, name, "y", rows * cols);
    k(pdx, pdy, pyy, rows, cols, fk_cuda::stream());
  }, py::arg("dx"), py::arg("dy"), py::arg("y"), py::arg("rows"), py::arg("cols"));
}

}  // namespace

FK_BIND_FAMILY(pointwise) {
  auto S = [] { return fk_cuda::stream(); };

  m.def("activation_forward", [S](py::object y, py::object x, int64_t n, int64_t act,
                                  float alpha) {
    const char* k = "activation_forward";
    check_sizes(k, {{"n", n}});
    check_act(k, act);
    float* py_ = f32(y, k, "y", n);
    const float* px = f32(x, k, "x", n);
    fk_cuda::activation_forward(py_, px, n, act, alpha, S());
  }, py::arg("y"), py::arg("x"), py::arg("n"), py::arg("activation"), py::arg("alpha"),
     "y (n) = act(x (n)) on the GPU.");

  m.def("activation_backward", [S](py::object dx, py::object dy, py::object x, py::object y,
                                   int64_t n, int64_t act, float alpha) {
    const char* k = "activation_backward";
    check_sizes(k, {{"n", n}});
    check_act(k, act);
    float* pdx = f32(dx, k, "dx", n);
    const float* pdy = f32(dy, k, "dy", n);
    const float* px = f32(x, k, "x", n);
    const float* pyy = f32(y, k, "y", n);
    fk_cuda::activation_backward(pdx, pdy, px, pyy, n, act, alpha, S());
  }, py::arg("dx"), py::arg("dy"), py::arg("x"), py::arg("y"), py::arg("n"),
     py::arg("activation"), py::arg("alpha"), "dx (n) = dy (n) * act'(x) on the GPU.");

  def_rows(m, "softmax_forward", &fk_cuda::softmax_forward, "y", "x");
  def_rows(m, "log_softmax_forward", &fk_cuda::log_softmax_forward, "y", "x");
  def_rows_bwd(m, "softmax_backward", &fk_cuda::softmax_backward);
  def_rows_bwd(m, "log_softmax_backward", &fk_cuda::log_softmax_backward);

  m.def("bias_add_forward", [S](py::object y, py::object x, py::object b, int64_t rows,
                                int64_t cols) {
    const char* k = "bias_add_forward";
    check_sizes(k, {{"rows", rows}, {"cols", cols}});
    float* py_ = f32(y, k, "y", rows * cols);
    const float* px = f32(x, k, "x", rows * cols);
    const float* pb = f32(b, k, "b", cols);
    fk_cuda::bias_add_forward(py_, px, pb, rows, cols, S());
  }, py::arg("y"), py::arg("x"), py::arg("b"), py::arg("rows"), py::arg("cols"));

  m.def("bias_add_backward", [S](py::object db, py::object dy, int64_t rows, int64_t cols) {
    const char* k = "bias_add_backward";
    check_sizes(k, {{"rows", rows}, {"cols", cols}});
    float* pdb = f32(db, k, "db", cols);
    const float* pdy = f32(dy, k, "dy", rows * cols);
    DeviceArray ws = workspace(fk_cuda::bias_add_backward_workspace(rows, cols));
    fk_cuda::bias_add_backward(pdb, pdy, rows, cols, ws.data(), S());
  }, py::arg("db"), py::arg("dy"), py::arg("rows"), py::arg("cols"));

  m.def("dropout_forward", [S](py::object y, py::object mask, py::object x, int64_t n,
                               float rate, int64_t seed) {
    const char* k = "dropout_forward";
    check_sizes(k, {{"n", n}});
    check_rate(k, rate);
    float* py_ = f32(y, k, "y", n);
    float* pm = f32(mask, k, "mask", n);
    const float* px = f32(x, k, "x", n);
    fk_cuda::dropout_forward(py_, pm, px, n, rate, seed, S());
  }, py::arg("y"), py::arg("mask"), py::arg("x"), py::arg("n"), py::arg("rate"), py::arg("seed"),
     "y = x * mask, the counter-based mask of fkeras._C.dropout_forward (bit-equal).");

  m.def("dropout_backward", [S](py::object dx, py::object dy, py::object mask, int64_t n) {
    const char* k = "dropout_backward";
    check_sizes(k, {{"n", n}});
    float* pdx = f32(dx, k, "dx", n);
    const float* pdy = f32(dy, k, "dy", n);
    const float* pm = f32(mask, k, "mask", n);
    fk_cuda::dropout_backward(pdx, pdy, pm, n, S());
  }, py::arg("dx"), py::arg("dy"), py::arg("mask"), py::arg("n"));

  m.def("embedding_forward", [S](py::object y, py::object indices, py::object table, int64_t n,
                                 int64_t V, int64_t D) {
    const char* k = "embedding_forward";
    check_sizes(k, {{"n", n}, {"V", V}, {"D", D}});
    float* py_ = f32(y, k, "y", n * D);
    const int64_t* pidx = i64(indices, k, "indices", n);
    const float* pt = f32(table, k, "table", V * D);
    check_indices(k, "indices", pidx, n, V);
    fk_cuda::embedding_forward(py_, pidx, pt, n, V, D, S());
  }, py::arg("y"), py::arg("indices"), py::arg("table"), py::arg("n"), py::arg("V"),
     py::arg("D"));

  m.def("embedding_backward", [S](py::object dtable, py::object dy, py::object indices,
                                  int64_t n, int64_t V, int64_t D) {
    const char* k = "embedding_backward";
    check_sizes(k, {{"n", n}, {"V", V}, {"D", D}});
    float* pdt = f32(dtable, k, "dtable", V * D);
    const float* pdy = f32(dy, k, "dy", n * D);
    const int64_t* pidx = i64(indices, k, "indices", n);
    check_indices(k, "indices", pidx, n, V);
    const size_t bytes = fk_cuda::embedding_backward_workspace(n, V);
    DeviceArray ws = workspace(bytes);
    fk_cuda::embedding_backward(pdt, pdy, pidx, n, V, D, ws.data(), bytes, S());
  }, py::arg("dtable"), py::arg("dy"), py::arg("indices"), py::arg("n"), py::arg("V"),
     py::arg("D"), "Deterministic scatter-add (stable sort by index, bit-equal to the CPU).");

  m.def("softmax_crossentropy_forward", [S](py::object loss, py::object probs,
                                            py::object logits, py::object labels, int64_t rows,
                                            int64_t cols) {
    const char* k = "softmax_crossentropy_forward";
    check_sizes(k, {{"rows", rows}, {"cols", cols}});
    float* pl = f32(loss, k, "loss", rows);
    float* pp = f32(probs, k, "probs", rows * cols);
    const float* pg = f32(logits, k, "logits", rows * cols);
    const float* pz = f32(labels, k, "labels", rows * cols);
    fk_cuda::softmax_crossentropy_forward(pl, pp, pg, pz, rows, cols, S());
  }, py::arg("loss"), py::arg("probs"), py::arg("logits"), py::arg("labels"), py::arg("rows"),
     py::arg("cols"));

  m.def("softmax_crossentropy_backward", [S](py::object dlogits, py::object dloss,
                                             py::object probs, py::object labels, int64_t rows,
                                             int64_t cols) {
    const char* k = "softmax_crossentropy_backward";
    check_sizes(k, {{"rows", rows}, {"cols", cols}});
    float* pd = f32(dlogits, k, "dlogits", rows * cols);
    const float* pdl = f32(dloss, k, "dloss", rows);
    const float* pp = f32(probs, k, "probs", rows * cols);
    const float* pz = f32(labels, k, "labels", rows * cols);
    fk_cuda::softmax_crossentropy_backward(pd, pdl, pp, pz, rows, cols, S());
  }, py::arg("dlogits"), py::arg("dloss"), py::arg("probs"), py::arg("labels"), py::arg("rows"),
     py::arg("cols"));

  m.def("sparse_softmax_crossentropy_forward", [S](py::object loss, py::object probs,
                                                   py::object logits, py::object labels,
                                                   int64_t rows, int64_t cols) {
    const char* k = "sparse_softmax_crossentropy_forward";
    check_sizes(k, {{"rows", rows}, {"cols", cols}});
    float* pl = f32(loss, k, "loss", rows);
    float* pp = f32(probs, k, "probs", rows * cols);
    const float* pg = f32(logits, k, "logits", rows * cols);
    const int64_t* pz = i64(labels, k, "labels", rows);
    check_indices(k, "labels", pz, rows, cols);
    fk_cuda::sparse_softmax_crossentropy_forward(pl, pp, pg, pz, rows, cols, S());
  }, py::arg("loss"), py::arg("probs"), py::arg("logits"), py::arg("labels"), py::arg("rows"),
     py::arg("cols"));

  m.def("sparse_softmax_crossentropy_backward", [S](py::object dlogits, py::object dloss,
                                                    py::object probs, py::object labels,
                                                    int64_t rows, int64_t cols) {
    const char* k = "sparse_softmax_crossentropy_backward";
    check_sizes(k, {{"rows", rows}, {"cols", cols}});
    float* pd = f32(dlogits, k, "dlogits", rows * cols);
    const float* pdl = f32(dloss, k, "dloss", rows);
    const float* pp = f32(probs, k, "probs", rows * cols);
    const int64_t* pz = i64(labels, k, "labels", rows);
    check_indices(k, "labels", pz, rows, cols);
    fk_cuda::sparse_softmax_crossentropy_backward(pd, pdl, pp, pz, rows, cols, S());
  }, py::arg("dlogits"), py::arg("dloss"), py::arg("probs"), py::arg("labels"), py::arg("rows"),
     py::arg("cols"));

  m.def("sigmoid_crossentropy_forward", [S](py::object loss, py::object logits,
                                            py::object labels, int64_t n) {
    const char* k = "sigmoid_crossentropy_forward";
    check_sizes(k, {{"n", n}});
    float* pl = f32(loss, k, "loss", n);
    const float* pg = f32(logits, k, "logits", n);
    const float* pz = f32(labels, k, "labels", n);
    fk_cuda::sigmoid_crossentropy_forward(pl, pg, pz, n, S());
  }, py::arg("loss"), py::arg("logits"), py::arg("labels"), py::arg("n"));

  m.def("sigmoid_crossentropy_backward", [S](py::object dlogits, py::object dloss,
                                             py::object logits, py::object labels, int64_t n) {
    const char* k = "sigmoid_crossentropy_backward";
    check_sizes(k, {{"n", n}});
    float* pd = f32(dlogits, k, "dlogits", n);
    const float* pdl = f32(dloss, k, "dloss", n);
    const float* pg = f32(logits, k, "logits", n);
    const float* pz = f32(labels, k, "labels", n);
    fk_cuda::sigmoid_crossentropy_backward(pd, pdl, pg, pz, n, S());
  }, py::arg("dlogits"), py::arg("dloss"), py::arg("logits"), py::arg("labels"), py::arg("n"));

  // ---- optimizers ------------------------------------------------------------------------------
  m.def("sgd_update", [S](py::object param, py::object velocity, py::object grad, int64_t n,
                          float lr, float momentum, bool nesterov, float weight_decay) {
    const char* k = "sgd_update";
    check_sizes(k, {{"n", n}});
    float* p = f32(param, k, "param", n);
    float* vel = f32(velocity, k, "velocity", n, true);
    if (momentum != 0.f && !vel) fail(k, "argument 'velocity' is required when momentum != 0");
    const float* g = f32(grad, k, "grad", n);
    fk_cuda::sgd_update(p, vel, g, n, fk_cuda::make_sgd_args(lr, momentum, nesterov, weight_decay),
                        S());
  }, py::arg("param"), py::arg("velocity"), py::arg("grad"), py::arg("n"), py::arg("lr"),
     py::arg("momentum"), py::arg("nesterov"), py::arg("weight_decay"));

  m.def("adam_update", [S](py::object param, py::object mo, py::object v, py::object vhat,
                           py::object grad, int64_t n, float lr, float beta1, float beta2,
                           float epsilon, int64_t step, float weight_decay) {
    const char* k = "adam_update";
    check_sizes(k, {{"n", n}});
    check_step(k, step);
    float* p = f32(param, k, "param", n);
    float* pm = f32(mo, k, "m", n);
    float* pv = f32(v, k, "v", n);
    float* pvh = f32(vhat, k, "vhat", n, true);
    const float* g = f32(grad, k, "grad", n);
    fk_cuda::adam_update(p, pm, pv, pvh, g, n,
                         fk_cuda::make_adam_args(lr, beta1, beta2, epsilon, step, weight_decay,
                                                 pvh != nullptr),
                         S());
  }, py::arg("param"), py::arg("m"), py::arg("v"), py::arg("vhat"), py::arg("grad"),
     py::arg("n"), py::arg("lr"), py::arg("beta1"), py::arg("beta2"), py::arg("epsilon"),
     py::arg("step"), py::arg("weight_decay"));

  m.def("adamax_update", [S](py::object param, py::object mo, py::object u, py::object grad,
                             int64_t n, float lr, float beta1, float beta2, float epsilon,
                             int64_t step, float weight_decay) {
    const char* k = "adamax_update";
    check_sizes(k, {{"n", n}});
    check_step(k, step);
    float* p = f32(param, k, "param", n);
    float* pm = f32(mo, k, "m", n);
    float* pu = f32(u, k, "u", n);
    const float* g = f32(grad, k, "grad", n);
    fk_cuda::adamax_update(p, pm, pu, g, n,
                           fk_cuda::make_adamax_args(lr, beta1, beta2, epsilon, step,
                                                     weight_decay),
                           S());
  }, py::arg("param"), py::arg("m"), py::arg("u"), py::arg("grad"), py::arg("n"), py::arg("lr"),
     py::arg("beta1"), py::arg("beta2"), py::arg("epsilon"), py::arg("step"),
     py::arg("weight_decay"));

  m.def("nadam_update", [S](py::object param, py::object mo, py::object v, py::object grad,
                            int64_t n, float lr, float beta1, float beta2, float epsilon,
                            int64_t step, float u_t, float u_t1, float u_product_t,
                            float weight_decay) {
    const char* k = "nadam_update";
    check_sizes(k, {{"n", n}});
    check_step(k, step);
    float* p = f32(param, k, "param", n);
    float* pm = f32(mo, k, "m", n);
    float* pv = f32(v, k, "v", n);
    const float* g = f32(grad, k, "grad", n);
    fk_cuda::nadam_update(p, pm, pv, g, n,
                          fk_cuda::make_nadam_args(lr, beta1, beta2, epsilon, step, u_t, u_t1,
                                                   u_product_t, weight_decay),
                          S());
  }, py::arg("param"), py::arg("m"), py::arg("v"), py::arg("grad"), py::arg("n"), py::arg("lr"),
     py::arg("beta1"), py::arg("beta2"), py::arg("epsilon"), py::arg("step"), py::arg("u_t"),
     py::arg("u_t1"), py::arg("u_product_t"), py::arg("weight_decay"));

  m.def("rmsprop_update", [S](py::object param, py::object velocity, py::object momentum_buf,
                              py::object average_grad, py::object grad, int64_t n, float lr,
                              float rho, float momentum, float epsilon, bool centered,
                              float weight_decay) {
    const char* k = "rmsprop_update";
    check_sizes(k, {{"n", n}});
    float* p = f32(param, k, "param", n);
    float* vel = f32(velocity, k, "velocity", n);
    float* mom = f32(momentum_buf, k, "momentum_buf", n, true);
    float* avg = f32(average_grad, k, "average_grad", n, true);
    if (momentum > 0.f && !mom) fail(k, "argument 'momentum_buf' is required when momentum > 0");
    if (centered && !avg) fail(k, "argument 'average_grad' is required when centered");
    const float* g = f32(grad, k, "grad", n);
    fk_cuda::rmsprop_update(p, vel, mom, centered ? avg : nullptr, g, n,
                            fk_cuda::make_rmsprop_args(lr, rho, momentum, epsilon, centered,
                                                       weight_decay),
                            S());
  }, py::arg("param"), py::arg("velocity"), py::arg("momentum_buf"), py::arg("average_grad"),
     py::arg("grad"), py::arg("n"), py::arg("lr"), py::arg("rho"), py::arg("momentum"),
     py::arg("epsilon"), py::arg("centered"), py::arg("weight_decay"));

  m.def("adagrad_update", [S](py::object param, py::object accumulator, py::object grad,
                              int64_t n, float lr, float epsilon, float weight_decay) {
    const char* k = "adagrad_update";
    check_sizes(k, {{"n", n}});
    float* p = f32(param, k, "param", n);
    float* acc = f32(accumulator, k, "accumulator", n);
    const float* g = f32(grad, k, "grad", n);
    fk_cuda::adagrad_update(p, acc, g, n, fk_cuda::make_adagrad_args(lr, epsilon, weight_decay),
                            S());
  }, py::arg("param"), py::arg("accumulator"), py::arg("grad"), py::arg("n"), py::arg("lr"),
     py::arg("epsilon"), py::arg("weight_decay"));

  m.def("adadelta_update", [S](py::object param, py::object accumulated_grad,
                               py::object accumulated_delta, py::object grad, int64_t n,
                               float lr, float rho, float epsilon, float weight_decay) {
    const char* k = "adadelta_update";
    check_sizes(k, {{"n", n}});
    float* p = f32(param, k, "param", n);
    float* ag = f32(accumulated_grad, k, "accumulated_grad", n);
    float* ad = f32(accumulated_delta, k, "accumulated_delta", n);
    const float* g = f32(grad, k, "grad", n);
    fk_cuda::adadelta_update(p, ag, ad, g, n,
                             fk_cuda::make_adadelta_args(lr, rho, epsilon, weight_decay), S());
  }, py::arg("param"), py::arg("accumulated_grad"), py::arg("accumulated_delta"),
     py::arg("grad"), py::arg("n"), py::arg("lr"), py::arg("rho"), py::arg("epsilon"),
     py::arg("weight_decay"));
}
