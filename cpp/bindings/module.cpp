// module.cpp: the fkeras._C extension module: version and build facts, runtime controls, and
// every kernel family (each binds itself in its own bind_<family>.cpp).
#include <pybind11/stl.h>

#include "check.h"
#include "fkeras_build_info.h"
#include "fkeras/common.h"
#include "fkeras/runtime.h"

PYBIND11_MODULE(_C, m) {
  m.doc() = "fkeras CPU kernels (float32, row-major; see cpp/include/fkeras/kernels.h)";
  m.attr("__version__") = FKERAS_VERSION;
  py::dict build;
  build["version"] = FKERAS_VERSION;
  build["compiler"] = FKERAS_COMPILER;
  build["build_type"] = FKERAS_BUILD_TYPE;
  build["isa_kernels"] = py::make_tuple("avx512", "avx2", "scalar");
  build["threading"] = "std::thread pool (dynamic chunks)";
  m.attr("build_info") = build;

  py::register_exception<fk::Error>(m, "KernelError", PyExc_ValueError);

  bind_runtime(m);
  bind_gemm(m);
  bind_elementwise(m);
  bind_conv(m);
  bind_batchnorm(m);
  bind_rnn(m);
  bind_optimizers(m);
  bind_quantize(m);
  bind_attention(m);
  bind_layernorm(m);
  bind_inference_plan(m);
}

void bind_runtime(py::module_& m) {
  m.def("cpu_features", [] {
    const fk::CpuFeatures f = fk::cpu_features();
    py::dict d;
    d["sse4.2"] = f.sse42; d["avx"] = f.avx; d["avx2"] = f.avx2; d["fma"] = f.fma;
    d["f16c"] = f.f16c; d["avx512f"] = f.avx512f; d["avx512bw"] = f.avx512bw;
    d["avx512dq"] = f.avx512dq; d["avx512vl"] = f.avx512vl; d["avx512_bf16"] = f.avx512_bf16;
    return d;
  }, "The CPU features detected by CPUID.");
  m.def("cpu_isa", [] { return std::string(fk::isa_name(fk::cpu_isa())); },
        "The instruction set the kernels use now: 'avx512', 'avx2' or 'scalar'.");
  m.def("set_cpu_isa", [](const std::string& name) { fk::set_cpu_isa(fk::isa_from_name(name)); },
        py::arg("name"), "Switch the kernels to 'avx512', 'avx2' or 'scalar' (tests, benchmarks).");
  m.def("isa_supported", [](const std::string& name) {
    return fk::isa_supported(fk::isa_from_name(name));
  }, py::arg("name"));
  m.def("set_gemm_bf16", &fk::set_gemm_bf16, py::arg("enabled"),
        "Sets this thread's bf16-products flag (bf16 operands, fp32 accumulation in every GEMM "
        "the kernels run; exact fp32 where gemm_bf16_native() is False); returns the previous "
        "value. Thread-local, default False.");
  m.def("gemm_bf16", &fk::gemm_bf16, "This thread's bf16-products flag (set_gemm_bf16).");
  m.def("gemm_bf16_native", &fk::gemm_bf16_native,
        "True when the bf16 flag would use VDPBF16PS: the CPU has avx512_bf16 and cpu_isa() is "
        "'avx512'.");
  m.def("num_threads", &fk::num_threads, "Threads used by the kernels.");
  m.def("set_num_threads", [](int n) {
    if (n < 1) throw py::value_error("set_num_threads: expected a positive thread count, received " + std::to_string(n));
    int running;
    {
      py::gil_scoped_release nogil;  // joining the old pool's workers can take a moment
      running = fk::set_num_threads(n);
    }
    if (running < n) {
      const std::string msg = "set_num_threads: the system refused to start more threads; "
                              "requested " + std::to_string(n) + ", using " +
                              std::to_string(running);
      if (PyErr_WarnEx(PyExc_RuntimeWarning, msg.c_str(), 1) != 0) throw py::error_already_set();
    }
    return running;
  }, py::arg("n"),
     "Sets the kernels' thread count and starts the threads; returns the count in use, fewer "
     "than n (with a RuntimeWarning) when the system refuses to start more threads.");
  m.def("_parallel_sum_for_test", [](int64_t n, int64_t grain) {
    // Sums 0..n-1 through the pool: lets the tests exercise the pool (and fork) directly.
    std::vector<int64_t> partial(static_cast<size_t>((n + grain - 1) / (grain > 0 ? grain : 1)) + 1, 0);
    {
      py::gil_scoped_release nogil;
      fk::parallel_for(n, grain, [&](int64_t b, int64_t e) {
        int64_t s = 0;
        for (int64_t i = b; i < e; ++i) s += i;
        partial[static_cast<size_t>(b / grain)] = s;
      });
    }
    int64_t total = 0;
    for (int64_t s : partial) total += s;
    return total;
  }, py::arg("n"), py::arg("grain"));
}
