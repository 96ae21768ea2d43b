// threadpool.cpp: the std::thread pool behind fk::parallel_for.
//
// Why dynamic chunks: machines are shared. With one fixed slice per thread, a worker that the OS
// deschedules holds up the whole region (measured here: a busy neighbour made a 2-thread OpenMP
// GEMM slower than 1 thread). Here every participant, the caller included, takes the next chunk
// from an atomic counter until none are left, so a stalled thread only delays its current chunk.
// Idle workers spin for a bounded time (kSpin) for the next region, then sleep on a condition
// variable: training steps run kernels back to back, and a sleeping worker starts 20 us or more
// after its wake-up, so a worker that just finished is kept awake briefly; never longer, so an
// idle process does not burn a core (the machine is shared).
//
// Placement (opt-in: FKERAS_PIN_THREADS=1, or =always): a worker that joins a region on the
// caller's CPU pins itself to one CPU, for worker i the (i + 1)-th after the caller's current
// CPU in the process's CPU set (read when the pool starts), and is re-pinned when a region finds
// the caller on another CPU (a sched_getcpu per region; a sched_setaffinity only when something
// moved). Why: on this project's 2-vCPU VMs a woken worker was often placed on the caller's CPU
// and kept there, even while both spun: a 2-thread LSTM forward then ran at 1-thread speed (2.6
// ms instead of 1.3 ms per call) for tens to hundreds of calls, until the caller happened to
// migrate; pinned, every call took 1.4 ms (measured at load 2-3, other processes running). But
// a pinned worker cannot leave a CPU that other processes share: preempted inside a tile, it
// holds up every thread waiting for that tile. So a pinned worker preempted kMaxPreemptions
// times within kWindow unpins itself, and may pin again after a back-off that doubles while the
// contention lasts (=always: no such guard). Not the default: on the same VMs oversubscribed
// (load 6-27 on 2 CPUs) the LSTM fit step was slower pinned, guard or not (median 22-29 ms
// against 17-22 ms), and the packing was never caught on an idle machine.
//
// Fork: a forked child inherits no threads. pthread_atfork marks the pool dead in the child; the
// next parallel_for there builds a new pool.
//
// Thread limits: when the OS refuses a thread (std::system_error from std::thread, under an
// address-space limit or a process limit), the pool keeps the workers that started and the
// thread count drops to what runs; nothing unwinds while a started worker waits on the pool's
// condition variables.
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <system_error>
#include <thread>
#include <vector>

#include "fkeras/common.h"
#include "fkeras/runtime.h"

namespace fk {
namespace {

int env_threads(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return 0;
  char* end = nullptr;
  long n = std::strtol(v, &end, 10);
  return (end && *end == '\0' && n > 0 && n < 4096) ? static_cast<int>(n) : 0;
}

int default_threads() {
  if (int n = env_threads("FKERAS_NUM_THREADS")) return n;
  if (int n = env_threads("OMP_NUM_THREADS")) return n;
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  unsigned hc = std::thread::hardware_concurrency();
  return hc ? static_cast<int>(hc) : 1;
}

thread_local bool t_in_region = false;  // nested parallel_for calls run serially

// How long an idle worker, and a caller waiting for the workers, spin before sleeping.
constexpr std::chrono::microseconds kSpin(50);

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Spins until done() holds or kSpin has passed; returns done().
template <class Done>
bool spin_until(Done done) {
  const auto start = std::chrono::steady_clock::now();
  for (int i = 1;; ++i) {
    if (done()) return true;
    cpu_relax();
    if ((i & 63) == 0 && std::chrono::steady_clock::now() - start > kSpin) return done();
  }
}

// One parallel region: the chunks still to hand out and the participants still busy.
struct Job {
  const std::function<void(int64_t, int64_t)>* fn = nullptr;
  int64_t n = 0, grain = 1, chunks = 0;
  std::atomic<int64_t> next{0};
  std::atomic<int> active{0};
  std::exception_ptr error;
  std::mutex error_mu;
  bool gemm_bf16 = false;  // the caller's thread-local flag (runtime.h), set on each participant
  int caller_cpu = -1;     // the CPU the caller ran on when the region started (-1: unknown)

  void run_chunks() {
    const bool saved = set_gemm_bf16(gemm_bf16);
    for (;;) {
      int64_t c = next.fetch_add(1, std::memory_order_relaxed);
      if (c >= chunks) break;
      int64_t b = c * grain, e = b + grain < n ? b + grain : n;
      try {
        (*fn)(b, e);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mu);
        if (!error) error = std::current_exception();
        next.store(chunks, std::memory_order_relaxed);  // stop handing out work
      }
    }
    set_gemm_bf16(saved);
  }
};

// The CPUs workers are pinned to (empty: no pinning), read once per pool.
std::vector<int> pinning_cpus() {
  std::vector<int> cpus;
  const char* opt = std::getenv("FKERAS_PIN_THREADS");
  if (!opt || (std::strcmp(opt, "1") != 0 && std::strcmp(opt, "always") != 0)) return cpus;
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  if (cpus.size() < 2) cpus.clear();
  return cpus;
}

bool pin_always() {
  const char* opt = std::getenv("FKERAS_PIN_THREADS");
  return opt && std::strcmp(opt, "always") == 0;
}

long involuntary_switches() {
  struct rusage u;
  return getrusage(RUSAGE_THREAD, &u) == 0 ? u.ru_nivcsw : 0;
}

// One worker's pin (see the top of the file), updated when the worker joins a region.
class Placement {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::milliseconds kWindow{20};
  static constexpr long kMaxPreemptions = 3;
  static constexpr std::chrono::milliseconds kFirstBackOff{200}, kMaxBackOff{3200};

  void follow(const std::vector<int>& cpus, bool always, int index, int caller) {
    if (cpus.empty() || caller < 0) return;
    const Clock::time_point now = Clock::now();
    if (pinned_ >= 0 && !always && now - window_start_ >= kWindow) {
      const long n = involuntary_switches();
      const bool contended = n - window_switches_ >= kMaxPreemptions;
      window_start_ = now;
      window_switches_ = n;
      if (contended) {
        set_affinity(cpus);
        pinned_ = caller_ = -1;
        retry_at_ = now + back_off_;
        back_off_ = std::min(2 * back_off_, std::chrono::milliseconds(kMaxBackOff));
        return;
      }
      back_off_ = kFirstBackOff;  // a whole window without contention
    }
    // A free worker pins itself only when it finds itself on the caller's CPU (packed), and
    // not during a back-off.
    if (pinned_ < 0 && (now < retry_at_ || (!always && sched_getcpu() != caller))) return;
    if (pinned_ >= 0 && caller == caller_) return;  // the pin is still right
    caller_ = caller;
    size_t at = 0;
    while (at < cpus.size() && cpus[at] != caller) ++at;
    if (at == cpus.size()) at = 0;  // the caller runs outside the set: any CPU of it
    const int target = cpus[(at + 1 + static_cast<size_t>(index)) % cpus.size()];
    if (target == pinned_) return;
    const bool was_free = pinned_ < 0;
    if (!set_affinity(std::vector<int>{target})) return;
    pinned_ = target;
    if (was_free) {
      window_start_ = now;
      window_switches_ = involuntary_switches();
    }
  }

 private:
  static bool set_affinity(const std::vector<int>& cpus) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int c : cpus) CPU_SET(c, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
  }

  int caller_ = -1, pinned_ = -1;
  Clock::time_point window_start_{}, retry_at_{};
  long window_switches_ = 0;
  std::chrono::milliseconds back_off_ = kFirstBackOff;
};

class Pool {
 public:
  // Starts up to `workers` threads; stops at the first one the OS refuses (workers() says how
  // many run). Never throws: a started worker must not outlive the members it waits on.
  explicit Pool(int workers) : cpus_(pinning_cpus()), pin_always_(pin_always()) {
    try {
      threads_.reserve(static_cast<size_t>(workers));
      for (int i = 0; i < workers; ++i) threads_.emplace_back([this, i] { loop(i); });
    } catch (const std::system_error&) {
    } catch (const std::bad_alloc&) {
    }
  }
  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_.store(true);
    }
    wake_.notify_all();
    for (auto& t : threads_) t.join();
  }
  int workers() const { return static_cast<int>(threads_.size()); }

  void run(Job& job) {
    if (!cpus_.empty()) job.caller_cpu = sched_getcpu();
    {
      std::lock_guard<std::mutex> lock(mu_);
      job_ = &job;
      generation_.fetch_add(1, std::memory_order_release);
    }
    wake_.notify_all();
    job.run_chunks();
    // Workers that joined finish their last chunk within microseconds: wait for them spinning
    // first (the condition-variable wait below rechecks under the lock).
    spin_until([&] { return job.active.load(std::memory_order_acquire) == 0; });
    std::unique_lock<std::mutex> lock(mu_);
    done_.wait(lock, [&] { return job.active.load() == 0; });
    job_ = nullptr;
  }

 private:
  void loop(int index) {
    pthread_setname_np(pthread_self(), "fkeras-worker");  // named for tests and profilers
    t_in_region = true;
    uint64_t seen = 0;
    Placement placement;
    for (;;) {
      spin_until([&] {
        return generation_.load(std::memory_order_acquire) != seen ||
               stop_.load(std::memory_order_relaxed);
      });
      Job* job;
      {
        std::unique_lock<std::mutex> lock(mu_);
        wake_.wait(lock, [&] { return stop_ || (job_ && generation_.load() != seen); });
        if (stop_) return;
        seen = generation_.load();
        job = job_;
        job->active.fetch_add(1);
      }
      placement.follow(cpus_, pin_always_, index, job->caller_cpu);
      job->run_chunks();
      {
        std::lock_guard<std::mutex> lock(mu_);
        job->active.fetch_sub(1);
      }
      done_.notify_all();
    }
  }

  const std::vector<int> cpus_;  // pinning_cpus() (before threads_: the workers read it)
  const bool pin_always_;        // FKERAS_PIN_THREADS=always
  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable wake_, done_;
  Job* job_ = nullptr;                 // guarded by mu_
  std::atomic<uint64_t> generation_{0};  // written under mu_, read by spinning workers too
  std::atomic<bool> stop_{false};
};

std::mutex g_pool_mu;           // one parallel region at a time; guards the pool's lifetime
std::unique_ptr<Pool> g_pool;
std::atomic<int> g_threads{0};  // 0 = not yet read from the environment

void after_fork_child() {
  // The child has none of the parent's threads: forget the pool without joining them.
  (void)g_pool.release();  // intentionally leaked: its threads do not exist in the child
  new (&g_pool_mu) std::mutex();
}

// Load-time setup of the runtime: the fork handler, and the malloc policy (allocator.cpp).
struct AtForkRegistration {
  AtForkRegistration() {
    pthread_atfork(nullptr, nullptr, after_fork_child);
    apply_malloc_policy();
  }
} g_atfork;

}  // namespace

int num_threads() {
  int n = g_threads.load();
  if (n == 0) {
    n = default_threads();
    g_threads.store(n);
  }
  return n;
}

// Builds the pool for `threads` (caller holds g_pool_mu) unless it is already that size; when the
// OS refuses some workers, lowers the thread count to the threads that run.
static void ensure_pool(int threads) {
  if (g_pool && g_pool->workers() == threads - 1) return;
  g_pool.reset();
  g_pool = std::make_unique<Pool>(threads - 1);
  if (g_pool->workers() != threads - 1) g_threads.store(g_pool->workers() + 1);
}

int set_num_threads(int n) {
  FK_CHECK(n >= 1, "set_num_threads: expected a positive thread count, got ", n);
  std::lock_guard<std::mutex> region(g_pool_mu);
  g_threads.store(n);
  if (n > 1) ensure_pool(n);
  return g_threads.load();
}

bool in_parallel_region() { return t_in_region; }

int available_threads() { return t_in_region ? 1 : num_threads(); }

void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  if (grain < 1) grain = 1;
  const int64_t chunks = (n + grain - 1) / grain;
  const int threads = num_threads();
  if (chunks == 1 || threads == 1 || t_in_region) {
    for (int64_t b = 0; b < n; b += grain) fn(b, b + grain < n ? b + grain : n);
    return;
  }
  std::lock_guard<std::mutex> region(g_pool_mu);
  ensure_pool(threads);
  Job job;
  job.fn = &fn;
  job.n = n;
  job.grain = grain;
  job.chunks = chunks;
  job.gemm_bf16 = gemm_bf16();
  t_in_region = true;
  g_pool->run(job);
  t_in_region = false;
  if (job.error) std::rethrow_exception(job.error);
}

}  // namespace fk
