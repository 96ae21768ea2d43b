// cpu_features.cpp: CPUID-based feature detection and the once-chosen kernel ISA.
#include <cstdlib>
#include <mutex>

#include "fkeras/common.h"
#include "fkeras/runtime.h"

namespace fk {
namespace {

CpuFeatures detect() {
  CpuFeatures f;
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  f.sse42 = __builtin_cpu_supports("sse4.2");
  f.avx = __builtin_cpu_supports("avx");
  f.avx2 = __builtin_cpu_supports("avx2");
  f.fma = __builtin_cpu_supports("fma");
  f.f16c = __builtin_cpu_supports("f16c");
  f.avx512f = __builtin_cpu_supports("avx512f");
  f.avx512bw = __builtin_cpu_supports("avx512bw");
  f.avx512dq = __builtin_cpu_supports("avx512dq");
  f.avx512vl = __builtin_cpu_supports("avx512vl");
  f.avx512_bf16 = __builtin_cpu_supports("avx512bf16");
#endif
  return f;
}

Isa best_isa() {
  if (isa_supported(Isa::kAvx512)) return Isa::kAvx512;
  if (isa_supported(Isa::kAvx2)) return Isa::kAvx2;
  return Isa::kScalar;
}

std::once_flag g_once;
Isa g_isa = Isa::kScalar;

void choose() {
  std::call_once(g_once, [] {
    g_isa = best_isa();
    if (const char* env = std::getenv("FKERAS_CPU_ISA"); env && *env) {
      Isa wanted = isa_from_name(env);
      FK_CHECK(isa_supported(wanted), "FKERAS_CPU_ISA=", env, " but this CPU does not support it");
      g_isa = wanted;
    }
  });
}

}  // namespace

CpuFeatures cpu_features() {
  static const CpuFeatures f = detect();
  return f;
}

bool isa_supported(Isa isa) {
  const CpuFeatures f = cpu_features();
  switch (isa) {
    case Isa::kScalar: return true;
    case Isa::kAvx2: return f.avx2 && f.fma && f.f16c;
    case Isa::kAvx512: return f.avx512f && f.avx512bw && f.avx512dq && f.avx512vl && f.avx2 && f.fma;
  }
  return false;
}

Isa cpu_isa() {
  choose();
  return g_isa;
}

void set_cpu_isa(Isa isa) {
  choose();
  FK_CHECK(isa_supported(isa), "this CPU does not support the ", isa_name(isa), " kernels");
  g_isa = isa;
}

namespace {
thread_local bool t_gemm_bf16 = false;  // see runtime.h: per thread, handed to pool workers
}  // namespace

bool set_gemm_bf16(bool enabled) {
  const bool previous = t_gemm_bf16;
  t_gemm_bf16 = enabled;
  return previous;
}

bool gemm_bf16() { return t_gemm_bf16; }

bool gemm_bf16_native() {
  // The bf16 kernel file is compiled with the AVX-512 flags too: it needs both.
  return cpu_features().avx512_bf16 && cpu_isa() == Isa::kAvx512;
}

bool gemm_bf16_active() { return t_gemm_bf16 && gemm_bf16_native(); }

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::kScalar: return "scalar";
    case Isa::kAvx2: return "avx2";
    case Isa::kAvx512: return "avx512";
  }
  return "unknown";
}

Isa isa_from_name(const std::string& name) {
  if (name == "scalar") return Isa::kScalar;
  if (name == "avx2") return Isa::kAvx2;
  if (name == "avx512") return Isa::kAvx512;
  fail("unknown CPU ISA '", name, "'; expected one of avx512, avx2, scalar");
}

}  // namespace fk
