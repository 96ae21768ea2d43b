// allocator.cpp: fk::apply_malloc_policy, the process's malloc policy for large blocks, applied
// once when fkeras._C loads (threadpool.cpp's load-time registration calls it: this file has no
// static object of its own, which the static library's linking would drop). glibc only;
// elsewhere nothing happens.
//
// Why: every op allocates its outputs (NumPy arrays, through malloc), and a training step frees
// and re-allocates tens of megabytes of activations and gradients. With glibc's defaults, blocks
// above the (adaptive) mmap threshold are fresh mappings, and a heap whose free top exceeds the
// trim threshold is handed back to the OS, so the next step page-faults and the kernel zeroes
// every page again: measured on the CNN of bench_fit.py (2 threads), 5-6% of the step in
// clear_page and the elementwise kernels 2-3x slower than on a reused buffer; with the policy
// below the CNN step went from 51 to 40 ms, the CNN with BatchNormalization from 69 to 49 ms,
// and its inference from 26 to 15 ms per batch.
// Policy: blocks up to 32 MB (glibc's largest allowed mmap threshold) come from the heap, and
// up to 256 MB of free heap top is kept for reuse instead of being trimmed. The cost: memory
// freed by the process stays mapped up to that amount (a caching allocator's trade-off).
// Opt out with FKERAS_MALLOC_TUNING=0; a user's own MALLOC_MMAP_THRESHOLD_,
// MALLOC_TRIM_THRESHOLD_ or GLIBC_TUNABLES setting is left alone.
#include <cstdlib>
#include <cstring>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "fkeras/runtime.h"

namespace fk {
namespace {

bool env_set(const char* name) {
  const char* v = std::getenv(name);
  return v && *v;
}

}  // namespace

void apply_malloc_policy() {
#if defined(__GLIBC__)
  const char* opt = std::getenv("FKERAS_MALLOC_TUNING");
  if (opt && std::strcmp(opt, "0") == 0) return;
  if (env_set("MALLOC_MMAP_THRESHOLD_") || env_set("MALLOC_TRIM_THRESHOLD_") ||
      env_set("GLIBC_TUNABLES"))
    return;
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
#endif
}

}  // namespace fk
