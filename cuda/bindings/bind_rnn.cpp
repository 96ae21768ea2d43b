// bind_rnn.cpp: fkeras._C_cuda's recurrent kernels (lstm_*, gru_*, simple_rnn_*, sequence and
// cell, forward and backward), called exactly like fkeras._C's (same names, argument order,
// optional arguments None). Every array is checked (float32, shape's element count, outputs
// distinct from each other and from the inputs) and the activation codes are checked before
// any launch. Compiled only with the shared GEMM (FK_CUDA_RNN_ENABLED, rnn_gemm.cuh).
#include "../kernels/rnn_gemm.cuh"

#ifdef FK_CUDA_RNN_ENABLED

#include <pybind11/pybind11.h>

#include <string>
#include <vector>

#include "../kernels/rnn_seq.cuh"
#include "fk_cuda/binders.h"
#include "fk_cuda/device_array.h"
#include "fk_cuda/runtime.h"

namespace py = pybind11;
using fk_cuda::DeviceArray;
using fk_cuda::DType;
using py::arg;

namespace {

using DA = DeviceArray*;

// The arguments of one call: checked as they are added, then checked for aliasing.
class Args {
 public:
  explicit Args(const char* fn) : fn_(fn) {}

  float* out(const char* name, DA a, std::vector<int64_t> shape, bool optional = false) {
    float* p = check(name, a, shape, optional);
    if (a) outs_.push_back({name, a});
    return p;
  }
  const float* in(const char* name, DA a, std::vector<int64_t> shape, bool optional = false) {
    const float* p = check(name, a, shape, optional);
    if (a) ins_.push_back({name, a});
    return p;
  }
  void sizes(std::vector<std::pair<const char*, int64_t>> s) {
    for (auto& kv : s)
      if (kv.second < 0 || kv.second > (int64_t{1} << 40))
        throw py::value_error(std::string(fn_) + ": argument '" + kv.first +
                              "' must be in [0, 2**40], received " + std::to_string(kv.second));
  }
  void acts(int64_t a, int64_t ra) {
    act(a, "activation");
    act(ra, "recurrent_activation");
  }
  void act(int64_t code, const char* name) {
    if (code != 0 && code != 1 && code != 2 && code != 3 && code != 11)
      throw py::value_error(std::string(fn_) + ": argument '" + name + "' must be an activation "
                            "code among linear (0), relu (1), sigmoid (2), tanh (3), "
                            "hard_sigmoid (11), received " + std::to_string(code));
  }
  void no_alias() const {
    for (size_t i = 0; i < outs_.size(); ++i) {
      if (outs_[i].second->size() == 0) continue;
      for (size_t j = i + 1; j < outs_.size(); ++j)
        if (outs_[j].second == outs_[i].second)
          throw py::value_error(std::string(fn_) + ": outputs '" + outs_[i].first + "' and '" +
                                outs_[j].first + "' must be different arrays");
      for (const auto& in : ins_)
        if (in.second == outs_[i].second)
          throw py::value_error(std::string(fn_) + ": output '" + outs_[i].first +
                                "' must not be the input '" + in.first + "'");
    }
  }

 private:
  float* check(const char* name, DA a, const std::vector<int64_t>& shape, bool optional) {
    if (!a) {
      if (optional) return nullptr;
      throw py::value_error(std::string(fn_) + ": argument '" + name +
                            "' must be a DeviceArray, received None");
    }
    fk_cuda::check_dtype(*a, DType::Float32, fn_, name);
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    if (a->size() != n)
      throw py::value_error(std::string(fn_) + ": argument '" + name + "' must have shape " +
                            fk_cuda::shape_str(shape) + " (" + std::to_string(n) +
                            " elements), received shape " + fk_cuda::shape_str(a->shape()));
    return a->data_as<float>();
  }
  const char* fn_;
  std::vector<std::pair<const char*, DA>> outs_, ins_;
};

std::vector<int64_t> gru_bias_shape(bool reset_after, int64_t U) {
  return reset_after ? std::vector<int64_t>{2, 3 * U} : std::vector<int64_t>{3 * U};
}

void bind_lstm(py::module_& m) {
  m.def("lstm_sequence_forward", [](DA hs, DA h_final, DA c_final, DA gates, DA cs, DA x, DA h0,
                                    DA c0, DA kernel, DA recurrent_kernel, DA bias, int64_t N,
                                    int64_t T, int64_t F, int64_t U, bool go_backwards,
                                    int64_t a, int64_t ra) {
    Args c("lstm_sequence_forward");
    c.sizes({{"N", N}, {"T", T}, {"F", F}, {"U", U}});
    c.acts(a, ra);
    float* p_hs = c.out("hs", hs, {N, T, U});
    float* p_hf = c.out("h_final", h_final, {N, U});
    float* p_cf = c.out("c_final", c_final, {N, U});
    float* p_g = c.out("gates", gates, {N, T, 4 * U});
    float* p_cs = c.out("cs", cs, {N, T, U});
    const float* p_x = c.in("x", x, {N, T, F});
    const float* p_h0 = c.in("h0", h0, {N, U});
    const float* p_c0 = c.in("c0", c0, {N, U});
    const float* p_w = c.in("kernel", kernel, {F, 4 * U});
    const float* p_rw = c.in("recurrent_kernel", recurrent_kernel, {U, 4 * U});
    const float* p_b = c.in("bias", bias, {4 * U}, true);
    c.no_alias();
    fk_cuda::lstm_sequence_forward(p_hs, p_hf, p_cf, p_g, p_cs, p_x, p_h0, p_c0, p_w, p_rw, p_b,
                                   N, T, F, U, go_backwards, a, ra, fk_cuda::stream());
  }, arg("hs"), arg("h_final"), arg("c_final"), arg("gates"), arg("cs"), arg("x"), arg("h0"),
     arg("c0"), arg("kernel"), arg("recurrent_kernel"), arg("bias").none(true), arg("N"),
     arg("T"), arg("F"), arg("U"), arg("go_backwards"), arg("activation"),
     arg("recurrent_activation"));

  m.def("lstm_sequence_backward", [](DA dx, DA dh0, DA dc0, DA dkernel, DA drecurrent_kernel,
                                     DA dbias, DA dhs, DA dh_final, DA dc_final, DA gates, DA cs,
                                     DA hs, DA x, DA h0, DA c0, DA kernel, DA recurrent_kernel,
                                     int64_t N, int64_t T, int64_t F, int64_t U,
                                     bool go_backwards, int64_t a, int64_t ra) {
    Args c("lstm_sequence_backward");
    c.sizes({{"N", N}, {"T", T}, {"F", F}, {"U", U}});
    c.acts(a, ra);
    float* p_dx = c.out("dx", dx, {N, T, F}, true);
    float* p_dh0 = c.out("dh0", dh0, {N, U}, true);
    float* p_dc0 = c.out("dc0", dc0, {N, U}, true);
    float* p_dw = c.out("dkernel", dkernel, {F, 4 * U});
    float* p_drw = c.out("drecurrent_kernel", drecurrent_kernel, {U, 4 * U});
    float* p_db = c.out("dbias", dbias, {4 * U}, true);
    const float* p_dhs = c.in("dhs", dhs, {N, T, U}, true);
    const float* p_dhf = c.in("dh_final", dh_final, {N, U}, true);
    const float* p_dcf = c.in("dc_final", dc_final, {N, U}, true);
    const float* p_g = c.in("gates", gates, {N, T, 4 * U});
    const float* p_cs = c.in("cs", cs, {N, T, U});
    const float* p_hs = c.in("hs", hs, {N, T, U});
    const float* p_x = c.in("x", x, {N, T, F});
    const float* p_h0 = c.in("h0", h0, {N, U});
    const float* p_c0 = c.in("c0", c0, {N, U});
    const float* p_w = c.in("kernel", kernel, {F, 4 * U});
    const float* p_rw = c.in("recurrent_kernel", recurrent_kernel, {U, 4 * U});
    c.no_alias();
    fk_cuda::lstm_sequence_backward(p_dx, p_dh0, p_dc0, p_dw, p_drw, p_db, p_dhs, p_dhf, p_dcf,
                                    p_g, p_cs, p_hs, p_x, p_h0, p_c0, p_w, p_rw, N, T, F, U,
                                    go_backwards, a, ra, fk_cuda::stream());
  }, arg("dx").none(true), arg("dh0").none(true), arg("dc0").none(true), arg("dkernel"),
     arg("drecurrent_kernel"), arg("dbias").none(true), arg("dhs").none(true),
     arg("dh_final").none(true), arg("dc_final").none(true), arg("gates"), arg("cs"), arg("hs"),
     arg("x"), arg("h0"), arg("c0"), arg("kernel"), arg("recurrent_kernel"), arg("N"), arg("T"),
     arg("F"), arg("U"), arg("go_backwards"), arg("activation"), arg("recurrent_activation"));

  m.def("lstm_cell_forward", [](DA h, DA cc, DA gates, DA x, DA h_prev, DA c_prev, DA kernel,
                                DA recurrent_kernel, DA bias, int64_t N, int64_t F, int64_t U,
                                int64_t a, int64_t ra) {
    Args c("lstm_cell_forward");
    c.sizes({{"N", N}, {"F", F}, {"U", U}});
    c.acts(a, ra);
    float* p_h = c.out("h", h, {N, U});
    float* p_c = c.out("c", cc, {N, U});
    float* p_g = c.out("gates", gates, {N, 4 * U});
    const float* p_x = c.in("x", x, {N, F});
    const float* p_hp = c.in("h_prev", h_prev, {N, U});
    const float* p_cp = c.in("c_prev", c_prev, {N, U});
    const float* p_w = c.in("kernel", kernel, {F, 4 * U});
    const float* p_rw = c.in("recurrent_kernel", recurrent_kernel, {U, 4 * U});
    const float* p_b = c.in("bias", bias, {4 * U}, true);
    c.no_alias();
    fk_cuda::lstm_cell_forward(p_h, p_c, p_g, p_x, p_hp, p_cp, p_w, p_rw, p_b, N, F, U, a, ra,
                               fk_cuda::stream());
  }, arg("h"), arg("c"), arg("gates"), arg("x"), arg("h_prev"), arg("c_prev"), arg("kernel"),
     arg("recurrent_kernel"), arg("bias").none(true), arg("N"), arg("F"), arg("U"),
     arg("activation"), arg("recurrent_activation"));

  m.def("lstm_cell_backward", [](DA dx, DA dh_prev, DA dc_prev, DA dkernel, DA drecurrent_kernel,
                                 DA dbias, DA dh, DA dc, DA gates, DA cc, DA x, DA h_prev,
                                 DA c_prev, DA kernel, DA recurrent_kernel, int64_t N, int64_t F,
                                 int64_t U, int64_t a, int64_t ra) {
    Args c("lstm_cell_backward");
    c.sizes({{"N", N}, {"F", F}, {"U", U}});
    c.acts(a, ra);
    float* p_dx = c.out("dx", dx, {N, F}, true);
    float* p_dhp = c.out("dh_prev", dh_prev, {N, U}, true);
    float* p_dcp = c.out("dc_prev", dc_prev, {N, U}, true);
    float* p_dw = c.out("dkernel", dkernel, {F, 4 * U});
    float* p_drw = c.out("drecurrent_kernel", drecurrent_kernel, {U, 4 * U});
    float* p_db = c.out("dbias", dbias, {4 * U}, true);
    const float* p_dh = c.in("dh", dh, {N, U});
    const float* p_dc = c.in("dc", dc, {N, U}, true);
    const float* p_g = c.in("gates", gates, {N, 4 * U});
    const float* p_c = c.in("c", cc, {N, U});
    const float* p_x = c.in("x", x, {N, F});
    const float* p_hp = c.in("h_prev", h_prev, {N, U});
    const float* p_cp = c.in("c_prev", c_prev, {N, U});
    const float* p_w = c.in("kernel", kernel, {F, 4 * U});
    const float* p_rw = c.in("recurrent_kernel", recurrent_kernel, {U, 4 * U});
    c.no_alias();
    fk_cuda::lstm_cell_backward(p_dx, p_dhp, p_dcp, p_dw, p_drw, p_db, p_dh, p_dc, p_g, p_c, p_x,
                                p_hp, p_cp, p_w, p_rw, N, F, U, a, ra, fk_cuda::stream());
  }, arg("dx").none(true), arg("dh_prev").none(true), arg("dc_prev").none(true), arg("dkernel"),
     arg("drecurrent_kernel"), arg("dbias").none(true), arg("dh"), arg("dc").none(true),
     arg("gates"), arg("c"), arg("x"), arg("h_prev"), arg("c_prev"), arg("kernel"),
     arg("recurrent_kernel"), arg("N"), arg("F"), arg("U"), arg("activation"),
     arg("recurrent_activation"));
}

void bind_gru(py::module_& m) {
  m.def("gru_sequence_forward", [](DA hs, DA h_final, DA gates, DA hproj, DA x, DA h0, DA kernel,
                                   DA recurrent_kernel, DA bias, int64_t N, int64_t T, int64_t F,
                                   int64_t U, bool go_backwards, bool reset_after, int64_t a,
                                   int64_t ra) {
    Args c("gru_sequence_forward");
    c.sizes({{"N", N}, {"T", T}, {"F", F}, {"U", U}});
    c.acts(a, ra);
    float* p_hs = c.out("hs", hs, {N, T, U});
    float* p_hf = c.out("h_final", h_final, {N, U});
    float* p_g = c.out("gates", gates, {N, T, 3 * U});
    float* p_hp = c.out("hproj", hproj, {N, T, U});
    const float* p_x = c.in("x", x, {N, T, F});
    const float* p_h0 = c.in("h0", h0, {N, U});
    const float* p_w = c.in("kernel", kernel, {F, 3 * U});
    const float* p_rw = c.in("recurrent_kernel", recurrent_kernel, {U, 3 * U});
    const float* p_b = c.in("bias", bias, gru_bias_shape(reset_after, U), true);
    c.no_alias();
    fk_cuda::gru_sequence_forward(p_hs, p_hf, p_g, p_hp, p_x, p_h0, p_w, p_rw, p_b, N, T, F, U,
                                  go_backwards, reset_after, a, ra, fk_cuda::stream());
  }, arg("hs"), arg("h_final"), arg("gates"), arg("hproj"), arg("x"), arg("h0"), arg("kernel"),
     arg("recurrent_kernel"), arg("bias").none(true), arg("N"), arg("T"), arg("F"), arg("U"),
     arg("go_backwards"), arg("reset_after"), arg("activation"), arg("recurrent_activation"));

  m.def("gru_sequence_backward", [](DA dx, DA dh0, DA dkernel, DA drecurrent_kernel, DA dbias,
                                    DA dhs, DA dh_final, DA gates, DA hproj, DA hs, DA x, DA h0,
                                    DA kernel, DA recurrent_kernel, int64_t N, int64_t T,
                                    int64_t F, int64_t U, bool go_backwards, bool reset_after,
                                    int64_t a, int64_t ra) {
    Args c("gru_sequence_backward");
    c.sizes({{"N", N}, {"T", T}, {"F", F}, {"U", U}});
    c.acts(a, ra);
    float* p_dx = c.out("dx", dx, {N, T, F}, true);
    float* p_dh0 = c.out("dh0", dh0, {N, U}, true);
    float* p_dw = c.out("dkernel", dkernel, {F, 3 * U});
    float* p_drw = c.out("drecurrent_kernel", drecurrent_kernel, {U, 3 * U});
    float* p_db = c.out("dbias", dbias, gru_bias_shape(reset_after, U), true);
    const float* p_dhs = c.in("dhs", dhs, {N, T, U}, true);
    const float* p_dhf = c.in("dh_final", dh_final, {N, U}, true);
    const float* p_g = c.in("gates", gates, {N, T, 3 * U});
    const float* p_hp = c.in("hproj", hproj, {N, T, U});
    const float* p_hs = c.in("hs", hs, {N, T, U});
    const float* p_x = c.in("x", x, {N, T, F});
    const float* p_h0 = c.in("h0", h0, {N, U});
    const float* p_w = c.in("kernel", kernel, {F, 3 * U});
    const float* p_rw = c.in("recurrent_kernel", recurrent_kernel, {U, 3 * U});
    c.no_alias();
    fk_cuda::gru_sequence_backward(p_dx, p_dh0, p_dw, p_drw, p_db, p_dhs, p_dhf, p_g, p_hp, p_hs,
                                   p_x, p_h0, p_w, p_rw, N, T, F, U, go_backwards, reset_after, a,
                                   ra, fk_cuda::stream());
  }, arg("dx").none(true), arg("dh0").none(true), arg("dkernel"), arg("drecurrent_kernel"),
     arg("dbias").none(true), arg("dhs").none(true), arg("dh_final").none(true), arg("gates"),
     arg("hproj"), arg("hs"), arg("x"), arg("h0"), arg("kernel"), arg("recurrent_kernel"),
     arg("N"), arg("T"), arg("F"), arg("U"), arg("go_backwards"), arg("reset_after"),
     arg("activation"), arg("recurrent_activation"));

  m.def("gru_cell_forward", [](DA h, DA gates, DA hproj, DA x, DA h_prev, DA kernel,
                               DA recurrent_kernel, DA bias, int64_t N, int64_t F, int64_t U,
                               bool reset_after, int64_t a, int64_t ra) {
    Args c("gru_cell_forward");
    c.sizes({{"N", N}, {"F", F}, {"U", U}});
    c.acts(a, ra);
    float* p_h = c.out("h", h, {N, U});
    float* p_g = c.out("gates", gates, {N, 3 * U});
    float* p_hp = c.out("hproj", hproj, {N, U});
    const float* p_x = c.in("x", x, {N, F});
    const float* p_hprev = c.in("h_prev", h_prev, {N, U});
    const float* p_w = c.in("kernel", kernel, {F, 3 * U});
    const float* p_rw = c.in("recurrent_kernel", recurrent_kernel, {U, 3 * U});
    const float* p_b = c.in("bias", bias, gru_bias_shape(reset_after, U), true);
    c.no_alias();
    fk_cuda::gru_cell_forward(p_h, p_g, p_hp, p_x, p_hprev, p_w, p_rw, p_b, N, F, U, reset_after,
                              a, ra, fk_cuda::stream());
  }, arg("h"), arg("gates"), arg("hproj"), arg("x"), arg("h_prev"), arg("kernel"),
     arg("recurrent_kernel"), arg("bias").none(true), arg("N"), arg("F"), arg("U"),
     arg("reset_after"), arg("activation"), arg("recurrent_activation"));

  m.def("gru_cell_backward", [](DA dx, DA dh_prev, DA dkernel, DA drecurrent_kernel, DA dbias,
                                DA dh, DA gates, DA hproj, DA x, DA h_prev, DA kernel,
                                DA recurrent_kernel, int64_t N, int64_t F, int64_t U,
                                bool reset_after, int64_t a, int64_t ra) {
    Args c("gru_cell_backward");
    c.sizes({{"N", N}, {"F", F}, {"U", U}});
    c.acts(a, ra);
    float* p_dx = c.out("dx", dx, {N, F}, true);
    float* p_dhp = c.out("dh_prev", dh_prev, {N, U}, true);
    float* p_dw = c.out("dkernel", dkernel, {F, 3 * U});
    float* p_drw = c.out("drecurrent_kernel", drecurrent_kernel, {U, 3 * U});
    float* p_db = c.out("dbias", dbias, gru_bias_shape(reset_after, U), true);
    const float* p_dh = c.in("dh", dh, {N, U});
    const float* p_g = c.in("gates", gates, {N, 3 * U});
    const float* p_hp = c.in("hproj", hproj, {N, U});
    const float* p_x = c.in("x", x, {N, F});
    const float* p_hprev = c.in("h_prev", h_prev, {N, U});
    const float* p_w = c.in("kernel", kernel, {F, 3 * U});
    const float* p_rw = c.in("recurrent_kernel", recurrent_kernel, {U, 3 * U});
    c.no_alias();
    fk_cuda::gru_cell_backward(p_dx, p_dhp, p_dw, p_drw, p_db, p_dh, p_g, p_hp, p_x, p_hprev, p_w,
                               p_rw, N, F, U, reset_after, a, ra, fk_cuda::stream());
  }, arg("dx").none(true), arg("dh_prev").none(true), arg("dkernel"), arg("drecurrent_kernel"),
     arg("dbias").none(true), arg("dh"), arg("gates"), arg("hproj"), arg("x"), arg("h_prev"),
     arg("kernel"), arg("recurrent_kernel"), arg("N"), arg("F"), arg("U"), arg("reset_after"),
     arg("activation"), arg("recurrent_activation"));
}

void bind_simple(py::module_& m) {
  m.def("simple_rnn_sequence_forward", [](DA hs, DA h_final, DA x, DA h0, DA kernel,
                                          DA recurrent_kernel, DA bias, int64_t N, int64_t T,
                                          int64_t F, int64_t U, bool go_backwards, int64_t a) {
    Args c("simple_rnn_sequence_forward");
    c.sizes({{"N", N}, {"T", T}, {"F", F}, {"U", U}});
    c.act(a, "activation");
    float* p_hs = c.out("hs", hs, {N, T, U});
    float* p_hf = c.out("h_final", h_final, {N, U});
    const float* p_x = c.in("x", x, {N, T, F});
    const float* p_h0 = c.in("h0", h0, {N, U});
    const float* p_w = c.in("kernel", kernel, {F, U});
    const float* p_rw = c.in("recurrent_kernel", recurrent_kernel, {U, U});
    const float* p_b = c.in("bias", bias, {U}, true);
    c.no_alias();
    fk_cuda::simple_rnn_sequence_forward(p_hs, p_hf, p_x, p_h0, p_w, p_rw, p_b, N, T, F, U,
                                         go_backwards, a, fk_cuda::stream());
  }, arg("hs"), arg("h_final"), arg("x"), arg("h0"), arg("kernel"), arg("recurrent_kernel"),
     arg("bias").none(true), arg("N"), arg("T"), arg("F"), arg("U"), arg("go_backwards"),
     arg("activation"));

  m.def("simple_rnn_sequence_backward", [](DA dx, DA dh0, DA dkernel, DA drecurrent_kernel,
                                           DA dbias, DA dhs, DA dh_final, DA hs, DA x, DA h0,
                                           DA kernel, DA recurrent_kernel, int64_t N, int64_t T,
                                           int64_t F, int64_t U, bool go_backwards, int64_t a) {
    Args c("simple_rnn_sequence_backward");
    c.sizes({{"N", N}, {"T", T}, {"F", F}, {"U", U}});
    c.act(a, "activation");
    float* p_dx = c.out("dx", dx, {N, T, F}, true);
    float* p_dh0 = c.out("dh0", dh0, {N, U}, true);
    float* p_dw = c.out("dkernel", dkernel, {F, U});
    float* p_drw = c.out("drecurrent_kernel", drecurrent_kernel, {U, U});
    float* p_db = c.out("dbias", dbias, {U}, true);
    const float* p_dhs = c.in("dhs", dhs, {N, T, U}, true);
    const float* p_dhf = c.in("dh_final", dh_final, {N, U}, true);
    const float* p_hs = c.in("hs", hs, {N, T, U});
    const float* p_x = c.in("x", x, {N, T, F});
    const float* p_h0 = c.in("h0", h0, {N, U});
    const float* p_w = c.in("kernel", kernel, {F, U});
    const float* p_rw = c.in("recurrent_kernel", recurrent_kernel, {U, U});
    c.no_alias();
    fk_cuda::simple_rnn_sequence_backward(p_dx, p_dh0, p_dw, p_drw, p_db, p_dhs, p_dhf, p_hs, p_x,
                                          p_h0, p_w, p_rw, N, T, F, U, go_backwards, a,
                                          fk_cuda::stream());
  }, arg("dx").none(true), arg("dh0").none(true), arg("dkernel"), arg("drecurrent_kernel"),
     arg("dbias").none(true), arg("dhs").none(true), arg("dh_final").none(true), arg("hs"),
     arg("x"), arg("h0"), arg("kernel"), arg("recurrent_kernel"), arg("N"), arg("T"), arg("F"),
     arg("U"), arg("go_backwards"), arg("activation"));

  m.def("simple_rnn_cell_forward", [](DA h, DA x, DA h_prev, DA kernel, DA recurrent_kernel,
                                      DA bias, int64_t N, int64_t F, int64_t U, int64_t a) {
    Args c("simple_rnn_cell_forward");
    c.sizes({{"N", N}, {"F", F}, {"U", U}});
    c.act(a, "activation");
    float* p_h = c.out("h", h, {N, U});
    const float* p_x = c.in("x", x, {N, F});
    const float* p_hp = c.in("h_prev", h_prev, {N, U});
    const float* p_w = c.in("kernel", kernel, {F, U});
    const float* p_rw = c.in("recurrent_kernel", recurrent_kernel, {U, U});
    const float* p_b = c.in("bias", bias, {U}, true);
    c.no_alias();
    fk_cuda::simple_rnn_cell_forward(p_h, p_x, p_hp, p_w, p_rw, p_b, N, F, U, a,
                                     fk_cuda::stream());
  }, arg("h"), arg("x"), arg("h_prev"), arg("kernel"), arg("recurrent_kernel"),
     arg("bias").none(true), arg("N"), arg("F"), arg("U"), arg("activation"));

  m.def("simple_rnn_cell_backward", [](DA dx, DA dh_prev, DA dkernel, DA drecurrent_kernel,
                                       DA dbias, DA dh, DA h, DA x, DA h_prev, DA kernel,
                                       DA recurrent_kernel, int64_t N, int64_t F, int64_t U,
                                       int64_t a) {
    Args c("simple_rnn_cell_backward");
    c.sizes({{"N", N}, {"F", F}, {"U", U}});
    c.act(a, "activation");
    float* p_dx = c.out("dx", dx, {N, F}, true);
    float* p_dhp = c.out("dh_prev", dh_prev, {N, U}, true);
    float* p_dw = c.out("dkernel", dkernel, {F, U});
    float* p_drw = c.out("drecurrent_kernel", drecurrent_kernel, {U, U});
    float* p_db = c.out("dbias", dbias, {U}, true);
    const float* p_dh = c.in("dh", dh, {N, U});
    const float* p_h = c.in("h", h, {N, U});
    const float* p_x = c.in("x", x, {N, F});
    const float* p_hp = c.in("h_prev", h_prev, {N, U});
    const float* p_w = c.in("kernel", kernel, {F, U});
    const float* p_rw = c.in("recurrent_kernel", recurrent_kernel, {U, U});
    c.no_alias();
    fk_cuda::simple_rnn_cell_backward(p_dx, p_dhp, p_dw, p_drw, p_db, p_dh, p_h, p_x, p_hp, p_w,
                                      p_rw, N, F, U, a, fk_cuda::stream());
  }, arg("dx").none(true), arg("dh_prev").none(true), arg("dkernel"), arg("drecurrent_kernel"),
     arg("dbias").none(true), arg("dh"), arg("h"), arg("x"), arg("h_prev"), arg("kernel"),
     arg("recurrent_kernel"), arg("N"), arg("F"), arg("U"), arg("activation"));
}

}  // namespace

FK_BIND_FAMILY(rnn) {
  bind_lstm(m);
  bind_gru(m);
  bind_simple(m);
}

#endif  // FK_CUDA_RNN_ENABLED
