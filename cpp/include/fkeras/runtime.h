// runtime.h: CPU feature detection, the per-ISA kernel choice and the thread pool.
//
// ISA: chosen once, at first use, from CPUID (the best of avx512 > avx2 > scalar that the CPU
// and OS support), overridable by FKERAS_CPU_ISA=avx512|avx2|scalar and by set_cpu_isa() (tests
// use it to run every path on one machine). Asking for an ISA the CPU lacks is an error.
//
// Threads: our own std::thread pool (no OpenMP). Size from FKERAS_NUM_THREADS, then
// OMP_NUM_THREADS, then the CPU affinity mask. Work is handed out in dynamic chunks so that a
// descheduled worker cannot stall the others; an idle worker spins for a bounded time (about
// 50 us: the next kernel of a training step usually follows sooner, and a sleeping worker takes
// 20 us or more to wake), then sleeps on a condition variable.
// After fork() the child gets a fresh pool on first use.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace fk {

enum class Isa : int { kScalar = 0, kAvx2 = 1, kAvx512 = 2 };

struct CpuFeatures {
  bool sse42 = false, avx = false, avx2 = false, fma = false, f16c = false;
  bool avx512f = false, avx512bw = false, avx512dq = false, avx512vl = false;
  bool avx512_bf16 = false;  // VDPBF16PS / VCVTNE2PS2BF16
};

CpuFeatures cpu_features();
bool isa_supported(Isa isa);
Isa cpu_isa();
void set_cpu_isa(Isa isa);  // throws fk::Error if the CPU lacks it
const char* isa_name(Isa isa);
Isa isa_from_name(const std::string& name);  // throws fk::Error on an unknown name

// bf16 products (the mixed_bfloat16 policy): a THREAD-LOCAL flag, default off. While it is
// set, every product that goes through the GEMM driver (gemm.h: gemm_strided, gemm_prepacked,
// hence Dense, the conv im2col paths, the RNN steps) rounds both operands to bf16 (round to
// nearest even, NaN kept) and accumulates in fp32; alpha / beta / bias / activation stay fp32.
// Only where gemm_bf16_native() holds; elsewhere the flag changes nothing (exact fp32,
// bit-identical to the flag off). parallel_for hands the caller's flag to its workers for the
// region, so a kernel's inner GEMMs see the flag of the thread that called the kernel.
bool set_gemm_bf16(bool enabled);  // returns the previous value
bool gemm_bf16();
// True when the flag, set, would use VDPBF16PS: the CPU has avx512_bf16 and cpu_isa() is
// avx512 (FKERAS_CPU_ISA=avx2 / scalar, or set_cpu_isa, turn the bf16 path off).
bool gemm_bf16_native();
// gemm_bf16() && gemm_bf16_native(): what the kernels test.
bool gemm_bf16_active();

int num_threads();
// n >= 1; starts the pool now and returns the thread count in use: fewer than n when the OS
// refuses to start some threads (the pool keeps those that started; num_threads() then says
// how many run). Takes effect for the next parallel region.
int set_num_threads(int n);

// Calls fn(begin, end) on disjoint chunks covering [0, n), each at most `grain` long (the last
// may be shorter), spread over the pool; returns when all are done. The calling thread works
// too. An exception thrown by fn is rethrown here (the first one wins). Nested calls run
// serially on the calling thread.
void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

// True on a thread that is running a chunk of a parallel_for region (a pool worker, or the
// caller while its region runs). A parallel_for there runs serially, so code that splits work
// by num_threads() (the GEMM's block plan) should plan for one thread instead.
bool in_parallel_region();

// The threads a parallel_for started here would use: 1 inside a region, else num_threads().
int available_threads();

// Sets glibc's malloc to keep large freed blocks for reuse (allocator.cpp: why, the values, the
// FKERAS_MALLOC_TUNING=0 opt-out). Called once at load time; a no-op elsewhere than glibc.
void apply_malloc_policy();

}  // namespace fk
