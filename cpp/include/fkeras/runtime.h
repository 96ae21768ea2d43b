// runtime.h: CPU feature detection, the per-ISA kernel choice and the thread pool.
//
// ISA: chosen once, at first use, from CPUID (the best of avx512 > avx2 > scalar that the CPU
// and OS support), overridable by FKERAS_CPU_ISA=avx512|avx2|scalar and by set_cpu_isa() (tests
// use it to run every path on one machine). Asking for an ISA the CPU lacks is an error.
//
// Threads: our own std::thread pool (no OpenMP). Size from FKERAS_NUM_THREADS, then
// OMP_NUM_THREADS, then the CPU affinity mask. Work is handed out in dynamic chunks so that a
// descheduled worker cannot stall the others; idle workers sleep on a condition variable.
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
};

CpuFeatures cpu_features();
bool isa_supported(Isa isa);
Isa cpu_isa();
void set_cpu_isa(Isa isa);  // throws fk::Error if the CPU lacks it
const char* isa_name(Isa isa);
Isa isa_from_name(const std::string& name);  // throws fk::Error on an unknown name

int num_threads();
void set_num_threads(int n);  // n >= 1; takes effect for the next parallel region

// Calls fn(begin, end) on disjoint chunks covering [0, n), each at most `grain` long (the last
// may be shorter), spread over the pool; returns when all are done. The calling thread works
// too. An exception thrown by fn is rethrown here (the first one wins). Nested calls run
// serially on the calling thread.
void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

}  // namespace fk
