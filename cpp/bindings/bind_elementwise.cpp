// bind_elementwise.cpp: Python bindings of the elementwise kernels and fused losses
// (kernels.h, cpp/elementwise/). Every argument is validated with the fkb:: helpers (dtype,
// contiguity, element count, writable outputs); index buffers are range-checked here, before the
// call, and a bad index raises ValueError naming it. The GIL is released around each kernel.
#include <string>

#include "check.h"
#include "fkeras/kernels.h"

namespace {

void check_rate(float rate, const char* kernel) {
  if (!(rate >= 0.0f && rate <= 1.0f))
    throw py::value_error(std::string(kernel) + ": argument 'rate' must be in [0, 1], received " +
                          std::to_string(rate));
}

void bind_activations(py::module_& m) {
  m.def("activation_forward", [](py::object y, py::object x, int64_t n, int64_t activation,
                                 float alpha) {
    const char* k = "activation_forward";
    fkb::check_sizes(k, {{"n", n}});
    fkb::check_activation(activation, k, "activation", fkb::ActUse::kAny);
    float* py_ = fkb::out_f32(y, k, "y", {n});
    const float* px = fkb::in_f32(x, k, "x", {n});
    if (!fkb::check_outputs(k, {{"y", y}}, {{"x", x}}, {{"y", "x"}})) return;
    py::gil_scoped_release nogil;
    fk::activation_forward(py_, px, n, activation, alpha);
  }, py::arg("y"), py::arg("x"), py::arg("n"), py::arg("activation"), py::arg("alpha"),
     "y (n) = act(x (n)); alpha is ELU's alpha or LeakyReLU's slope.");

  m.def("activation_backward", [](py::object dx, py::object dy, py::object x, py::object y,
                                  int64_t n, int64_t activation, float alpha) {
    const char* k = "activation_backward";
    fkb::check_sizes(k, {{"n", n}});
    fkb::check_activation(activation, k, "activation", fkb::ActUse::kAny);
    float* pdx = fkb::out_f32(dx, k, "dx", {n});
    const float* pdy = fkb::in_f32(dy, k, "dy", {n});
    const float* px = fkb::in_f32(x, k, "x", {n});
    const float* py_ = fkb::in_f32(y, k, "y", {n});
    if (!fkb::check_outputs(k, {{"dx", dx}}, {{"dy", dy}, {"x", x}, {"y", y}}, {{"dx", "dy"},
                                 {"dx", "x"}, {"dx", "y"}})) return;
    py::gil_scoped_release nogil;
    fk::activation_backward(pdx, pdy, px, py_, n, activation, alpha);
  }, py::arg("dx"), py::arg("dy"), py::arg("x"), py::arg("y"), py::arg("n"),
     py::arg("activation"), py::arg("alpha"), "dx (n) = dy (n) * act'(x).");
}

// softmax_forward / log_softmax_forward: (y, x, rows, cols).
template <void (*Kernel)(float*, const float*, int64_t, int64_t)>
void def_row_forward(py::module_& m, const char* name) {
  m.def(name, [name](py::object y, py::object x, int64_t rows, int64_t cols) {
    fkb::check_sizes(name, {{"rows", rows}, {"cols", cols}});
    float* py_ = fkb::out_f32(y, name, "y", {rows, cols});
    const float* px = fkb::in_f32(x, name, "x", {rows, cols});
    if (!fkb::check_outputs(name, {{"y", y}}, {{"x", x}}, {{"y", "x"}})) return;
    py::gil_scoped_release nogil;
    Kernel(py_, px, rows, cols);
  }, py::arg("y"), py::arg("x"), py::arg("rows"), py::arg("cols"));
}

// softmax_backward / log_softmax_backward: (dx, dy, y, rows, cols).
template <void (*Kernel)(float*, const float*, const float*, int64_t, int64_t)>
void def_row_backward(py::module_& m, const char* name) {
  m.def(name, [name](py::object dx, py::object dy, py::object y, int64_t rows, int64_t cols) {
    fkb::check_sizes(name, {{"rows", rows}, {"cols", cols}});
    float* pdx = fkb::out_f32(dx, name, "dx", {rows, cols});
    const float* pdy = fkb::in_f32(dy, name, "dy", {rows, cols});
    const float* py_ = fkb::in_f32(y, name, "y", {rows, cols});
    if (!fkb::check_outputs(name, {{"dx", dx}}, {{"dy", dy}, {"y", y}}, {{"dx", "dy"},
                                 {"dx", "y"}})) return;
    py::gil_scoped_release nogil;
    Kernel(pdx, pdy, py_, rows, cols);
  }, py::arg("dx"), py::arg("dy"), py::arg("y"), py::arg("rows"), py::arg("cols"));
}

void bind_bias_dropout_embedding(py::module_& m) {
  m.def("bias_add_forward", [](py::object y, py::object x, py::object b, int64_t rows,
                               int64_t cols) {
    const char* k = "bias_add_forward";
    fkb::check_sizes(k, {{"rows", rows}, {"cols", cols}});
    float* py_ = fkb::out_f32(y, k, "y", {rows, cols});
    const float* px = fkb::in_f32(x, k, "x", {rows, cols});
    const float* pb = fkb::in_f32(b, k, "b", {cols});
    if (!fkb::check_outputs(k, {{"y", y}}, {{"x", x}, {"b", b}})) return;
    py::gil_scoped_release nogil;
    fk::bias_add_forward(py_, px, pb, rows, cols);
  }, py::arg("y"), py::arg("x"), py::arg("b"), py::arg("rows"), py::arg("cols"));

  m.def("bias_add_backward", [](py::object db, py::object dy, int64_t rows, int64_t cols) {
    const char* k = "bias_add_backward";
    fkb::check_sizes(k, {{"rows", rows}, {"cols", cols}});
    float* pdb = fkb::out_f32(db, k, "db", {cols});
    const float* pdy = fkb::in_f32(dy, k, "dy", {rows, cols});
    if (!fkb::check_outputs(k, {{"db", db}}, {{"dy", dy}})) return;
    py::gil_scoped_release nogil;
    fk::bias_add_backward(pdb, pdy, rows, cols);
  }, py::arg("db"), py::arg("dy"), py::arg("rows"), py::arg("cols"));

  m.def("dropout_forward", [](py::object y, py::object mask, py::object x, int64_t n, float rate,
                              int64_t seed) {
    const char* k = "dropout_forward";
    fkb::check_sizes(k, {{"n", n}});
    check_rate(rate, k);
    float* py_ = fkb::out_f32(y, k, "y", {n});
    float* pmask = fkb::out_f32(mask, k, "mask", {n});
    const float* px = fkb::in_f32(x, k, "x", {n});
    if (!fkb::check_outputs(k, {{"y", y}, {"mask", mask}}, {{"x", x}})) return;
    py::gil_scoped_release nogil;
    fk::dropout_forward(py_, pmask, px, n, rate, seed);
  }, py::arg("y"), py::arg("mask"), py::arg("x"), py::arg("n"), py::arg("rate"), py::arg("seed"),
     "y = x * mask with the counter-based splitmix64 mask of kernels.h (saved in mask).");

  m.def("dropout_backward", [](py::object dx, py::object dy, py::object mask, int64_t n) {
    const char* k = "dropout_backward";
    fkb::check_sizes(k, {{"n", n}});
    float* pdx = fkb::out_f32(dx, k, "dx", {n});
    const float* pdy = fkb::in_f32(dy, k, "dy", {n});
    const float* pmask = fkb::in_f32(mask, k, "mask", {n});
    if (!fkb::check_outputs(k, {{"dx", dx}}, {{"dy", dy}, {"mask", mask}})) return;
    py::gil_scoped_release nogil;
    fk::dropout_backward(pdx, pdy, pmask, n);
  }, py::arg("dx"), py::arg("dy"), py::arg("mask"), py::arg("n"));

  m.def("embedding_forward", [](py::object y, py::object indices, py::object table, int64_t n,
                                int64_t V, int64_t D) {
    const char* k = "embedding_forward";
    fkb::check_sizes(k, {{"n", n}, {"V", V}, {"D", D}});
    float* py_ = fkb::out_f32(y, k, "y", {n, D});
    const int64_t* pidx = fkb::in_i64(indices, k, "indices", {n});
    const float* ptable = fkb::in_f32(table, k, "table", {V, D});
    fkb::check_index_range(pidx, n, V, k, "indices");
    if (!fkb::check_outputs(k, {{"y", y}}, {{"indices", indices}, {"table", table}})) return;
    py::gil_scoped_release nogil;
    fk::embedding_forward(py_, pidx, ptable, n, V, D);
  }, py::arg("y"), py::arg("indices"), py::arg("table"), py::arg("n"), py::arg("V"),
     py::arg("D"));

  m.def("embedding_backward", [](py::object dtable, py::object dy, py::object indices, int64_t n,
                                 int64_t V, int64_t D) {
    const char* k = "embedding_backward";
    fkb::check_sizes(k, {{"n", n}, {"V", V}, {"D", D}});
    float* pdt = fkb::out_f32(dtable, k, "dtable", {V, D});
    const float* pdy = fkb::in_f32(dy, k, "dy", {n, D});
    const int64_t* pidx = fkb::in_i64(indices, k, "indices", {n});
    fkb::check_index_range(pidx, n, V, k, "indices");
    if (!fkb::check_outputs(k, {{"dtable", dtable}}, {{"dy", dy}, {"indices", indices}})) return;
    py::gil_scoped_release nogil;
    fk::embedding_backward(pdt, pdy, pidx, n, V, D);
  }, py::arg("dtable"), py::arg("dy"), py::arg("indices"), py::arg("n"), py::arg("V"),
     py::arg("D"));
}

void bind_losses(py::module_& m) {
  m.def("softmax_crossentropy_forward", [](py::object loss, py::object probs, py::object logits,
                                           py::object labels, int64_t rows, int64_t cols) {
    const char* k = "softmax_crossentropy_forward";
    fkb::check_sizes(k, {{"rows", rows}, {"cols", cols}});
    float* ploss = fkb::out_f32(loss, k, "loss", {rows});
    float* pprobs = fkb::out_f32(probs, k, "probs", {rows, cols});
    const float* plogits = fkb::in_f32(logits, k, "logits", {rows, cols});
    const float* plabels = fkb::in_f32(labels, k, "labels", {rows, cols});
    if (!fkb::check_outputs(k, {{"loss", loss}, {"probs", probs}}, {{"logits", logits},
                                 {"labels", labels}})) return;
    py::gil_scoped_release nogil;
    fk::softmax_crossentropy_forward(ploss, pprobs, plogits, plabels, rows, cols);
  }, py::arg("loss"), py::arg("probs"), py::arg("logits"), py::arg("labels"), py::arg("rows"),
     py::arg("cols"));

  m.def("softmax_crossentropy_backward", [](py::object dlogits, py::object dloss,
                                            py::object probs, py::object labels, int64_t rows,
                                            int64_t cols) {
    const char* k = "softmax_crossentropy_backward";
    fkb::check_sizes(k, {{"rows", rows}, {"cols", cols}});
    float* pd = fkb::out_f32(dlogits, k, "dlogits", {rows, cols});
    const float* pdloss = fkb::in_f32(dloss, k, "dloss", {rows});
    const float* pprobs = fkb::in_f32(probs, k, "probs", {rows, cols});
    const float* plabels = fkb::in_f32(labels, k, "labels", {rows, cols});
    if (!fkb::check_outputs(k, {{"dlogits", dlogits}}, {{"dloss", dloss}, {"probs", probs},
                                 {"labels", labels}})) return;
    py::gil_scoped_release nogil;
    fk::softmax_crossentropy_backward(pd, pdloss, pprobs, plabels, rows, cols);
  }, py::arg("dlogits"), py::arg("dloss"), py::arg("probs"), py::arg("labels"), py::arg("rows"),
     py::arg("cols"));

  m.def("sparse_softmax_crossentropy_forward", [](py::object loss, py::object probs,
                                                  py::object logits, py::object labels,
                                                  int64_t rows, int64_t cols) {
    const char* k = "sparse_softmax_crossentropy_forward";
    fkb::check_sizes(k, {{"rows", rows}, {"cols", cols}});
    float* ploss = fkb::out_f32(loss, k, "loss", {rows});
    float* pprobs = fkb::out_f32(probs, k, "probs", {rows, cols});
    const float* plogits = fkb::in_f32(logits, k, "logits", {rows, cols});
    const int64_t* plabels = fkb::in_i64(labels, k, "labels", {rows});
    fkb::check_index_range(plabels, rows, cols, k, "labels");
    if (!fkb::check_outputs(k, {{"loss", loss}, {"probs", probs}}, {{"logits", logits},
                                 {"labels", labels}})) return;
    py::gil_scoped_release nogil;
    fk::sparse_softmax_crossentropy_forward(ploss, pprobs, plogits, plabels, rows, cols);
  }, py::arg("loss"), py::arg("probs"), py::arg("logits"), py::arg("labels"), py::arg("rows"),
     py::arg("cols"));

  m.def("sparse_softmax_crossentropy_backward", [](py::object dlogits, py::object dloss,
                                                   py::object probs, py::object labels,
                                                   int64_t rows, int64_t cols) {
    const char* k = "sparse_softmax_crossentropy_backward";
    fkb::check_sizes(k, {{"rows", rows}, {"cols", cols}});
    float* pd = fkb::out_f32(dlogits, k, "dlogits", {rows, cols});
    const float* pdloss = fkb::in_f32(dloss, k, "dloss", {rows});
    const float* pprobs = fkb::in_f32(probs, k, "probs", {rows, cols});
    const int64_t* plabels = fkb::in_i64(labels, k, "labels", {rows});
    fkb::check_index_range(plabels, rows, cols, k, "labels");
    if (!fkb::check_outputs(k, {{"dlogits", dlogits}}, {{"dloss", dloss}, {"probs", probs},
                                 {"labels", labels}})) return;
    py::gil_scoped_release nogil;
    fk::sparse_softmax_crossentropy_backward(pd, pdloss, pprobs, plabels, rows, cols);
  }, py::arg("dlogits"), py::arg("dloss"), py::arg("probs"), py::arg("labels"), py::arg("rows"),
     py::arg("cols"));

  m.def("sigmoid_crossentropy_forward", [](py::object loss, py::object logits, py::object labels,
                                           int64_t n) {
    const char* k = "sigmoid_crossentropy_forward";
    fkb::check_sizes(k, {{"n", n}});
    float* ploss = fkb::out_f32(loss, k, "loss", {n});
    const float* plogits = fkb::in_f32(logits, k, "logits", {n});
    const float* plabels = fkb::in_f32(labels, k, "labels", {n});
    if (!fkb::check_outputs(k, {{"loss", loss}}, {{"logits", logits}, {"labels", labels}})) return;
    py::gil_scoped_release nogil;
    fk::sigmoid_crossentropy_forward(ploss, plogits, plabels, n);
  }, py::arg("loss"), py::arg("logits"), py::arg("labels"), py::arg("n"));

  m.def("sigmoid_crossentropy_backward", [](py::object dlogits, py::object dloss,
                                            py::object logits, py::object labels, int64_t n) {
    const char* k = "sigmoid_crossentropy_backward";
    fkb::check_sizes(k, {{"n", n}});
    float* pd = fkb::out_f32(dlogits, k, "dlogits", {n});
    const float* pdloss = fkb::in_f32(dloss, k, "dloss", {n});
    const float* plogits = fkb::in_f32(logits, k, "logits", {n});
    const float* plabels = fkb::in_f32(labels, k, "labels", {n});
    if (!fkb::check_outputs(k, {{"dlogits", dlogits}}, {{"dloss", dloss}, {"logits", logits},
                                 {"labels", labels}})) return;
    py::gil_scoped_release nogil;
    fk::sigmoid_crossentropy_backward(pd, pdloss, plogits, plabels, n);
  }, py::arg("dlogits"), py::arg("dloss"), py::arg("logits"), py::arg("labels"), py::arg("n"));
}

}  // namespace

void bind_elementwise(py::module_& m) {
  bind_activations(m);
  def_row_forward<fk::softmax_forward>(m, "softmax_forward");
  def_row_backward<fk::softmax_backward>(m, "softmax_backward");
  def_row_forward<fk::log_softmax_forward>(m, "log_softmax_forward");
  def_row_backward<fk::log_softmax_backward>(m, "log_softmax_backward");
  bind_bias_dropout_embedding(m);
  bind_losses(m);
}
