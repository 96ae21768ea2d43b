// rnn_common.cpp: helpers shared by the recurrent drivers (see rnn_internal.h): the per-ISA
// gate-pass table, step tiling, scratch buffers and the small data-movement passes.
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "fkeras/common.h"
#include "fkeras/gemm.h"
#include "fkeras/runtime.h"
#include "rnn_internal.h"

namespace fk {
namespace rnn {

const GateKernels& gate_kernels() {
  switch (cpu_isa()) {
    case Isa::kAvx512: return gate_kernels_avx512();
    case Isa::kAvx2: return gate_kernels_avx2();
    default: return gate_kernels_scalar();
  }
}

void Buffer::Free::operator()(float* p) const { std::free(p); }

Buffer::Buffer(int64_t n) {
  // aligned_alloc wants a size that is a multiple of the alignment.
  const size_t bytes = ((static_cast<size_t>(n > 0 ? n : 1) * sizeof(float) + 63) / 64) * 64;
  float* p = static_cast<float*>(std::aligned_alloc(64, bytes));
  FK_CHECK(p != nullptr, "recurrent kernels: could not allocate ", bytes, " bytes of scratch");
  p_.reset(p);
}

namespace {
int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
}  // namespace

std::vector<GemmPackedB> pack_unit_tiles(const float* w, int64_t ld, int64_t K, int64_t G,
                                         const Tiling& t) {
  std::vector<GemmPackedB> out(static_cast<size_t>(t.unit_blocks));
  for (int64_t u = 0; u < t.unit_blocks; ++u) {
    const int64_t j0 = u * t.units, j1 = std::min(t.U, j0 + t.units);
    gemm_pack_b(out[u], w + G * j0, ld, K, G * (j1 - j0), false);
  }
  return out;
}

Tiling plan_tiles(int64_t N, int64_t U, int64_t G, bool rows_first) {
  Tiling t;
  t.N = N;
  t.U = U;
  t.rows = std::max<int64_t>(N, 1);
  t.units = std::max<int64_t>(U, 1);
  const int64_t threads = num_threads();
  // The recurrent GEMM of one step costs 2 N U (G U) flops. Aim at one tile per thread (each
  // tile repacks the GEMM's shared operand, and run_phases balances by stealing whole tiles)
  // but keep tiles at >= ~128 kflop, so that splitting a step stays worth its synchronisation.
  const double flops = 2.0 * static_cast<double>(N) * static_cast<double>(U) *
                       static_cast<double>(G * U);
  const int64_t want = std::min<int64_t>(threads, static_cast<int64_t>(flops / 131072.0));
  if (threads <= 1 || want <= 1 || N == 0 || U == 0) return t;
  // Forward passes split rows first, into blocks of at least 16 rows: each tile then writes
  // whole rows of the caller's outputs, so two threads never write into one cache line of them,
  // whatever their alignment (the cost: every row block packs all of the step's weights).
  // Backward passes write only our own aligned buffers and split units first, at least 16 wide
  // (a whole AVX-512 vector per gate): each tile then packs only its own weight columns.
  if (rows_first) {
    t.row_blocks = std::max<int64_t>(1, std::min(want, N / 16));
    t.rows = ceil_div(N, t.row_blocks);
    t.row_blocks = ceil_div(N, t.rows);
  }
  t.unit_blocks = std::max<int64_t>(1, std::min(ceil_div(want, t.row_blocks), U / 16));
  t.units = std::min(U, ceil_div(ceil_div(U, t.unit_blocks), 16) * 16);
  t.unit_blocks = ceil_div(U, t.units);
  if (!rows_first) {
    t.row_blocks = std::max<int64_t>(1, std::min(ceil_div(want, t.unit_blocks), N / 8));
    t.rows = ceil_div(N, t.row_blocks);
    t.row_blocks = ceil_div(N, t.rows);
  }
  return t;
}

namespace {

// Waits until ready() holds: a short spin (the other participants are usually a few
// microseconds away), then yielding the core so that a descheduled participant can run.
template <class Ready>
void wait_for(Ready&& ready) {
  for (int spins = 0; !ready(); ++spins) {
    if (spins < 4096) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    } else {
      std::this_thread::yield();
    }
  }
}

}  // namespace

void run_phases(int64_t phases, const Tiling& t, const PhaseFn& fn) {
  const int64_t tiles = t.tiles();
  auto run = [&](int64_t phase, int64_t c) {
    const int64_t rb = c / t.unit_blocks, ub = c % t.unit_blocks;
    const int64_t r0 = rb * t.rows, j0 = ub * t.units;
    fn(phase, r0, std::min(r0 + t.rows, t.N), j0, std::min(j0 + t.units, t.U));
  };
  const int64_t participants = std::min<int64_t>(num_threads(), tiles);
  if (participants <= 1) {
    for (int64_t p = 0; p < phases; ++p)
      for (int64_t c = 0; c < tiles; ++c) run(p, c);
    return;
  }
  // Each participant has home tiles (the same every phase, so each thread's slices of the
  // state stay in its own cache) and claims them first, then any tile of the phase still
  // unclaimed. A tile is claimed for phase p by moving claimed[c] from p - 1 to p, and only
  // once phase p is open (all tiles of phase p - 1 done): a participant never holds a tile it
  // cannot start at once. One that the OS deschedules, or that never arrives, only leaves its
  // tiles to the others; the sequence waits for a thread only while it is inside a tile (which
  // every step-synchronous scheme must).
  std::unique_ptr<std::atomic<int64_t>[]> claimed(new std::atomic<int64_t>[tiles]);
  for (int64_t c = 0; c < tiles; ++c) claimed[c].store(-1, std::memory_order_relaxed);
  std::atomic<int64_t> done{0};
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex error_mu;
  parallel_for(participants, 1, [&](int64_t me, int64_t) {
    const int64_t home = me * tiles / participants;
    for (int64_t p = 0; p < phases; ++p) {
      wait_for([&] {
        return done.load(std::memory_order_acquire) >= p * tiles ||
               failed.load(std::memory_order_relaxed);
      });
      for (int64_t i = 0; i < tiles; ++i) {
        const int64_t c = (home + i) % tiles;
        int64_t expected = p - 1;
        if (claimed[c].load(std::memory_order_relaxed) != expected ||
            !claimed[c].compare_exchange_strong(expected, p, std::memory_order_acq_rel))
          continue;
        if (!failed.load(std::memory_order_relaxed)) {
          try {
            run(p, c);
          } catch (...) {
            std::lock_guard<std::mutex> lock(error_mu);
            if (!error) error = std::current_exception();
            failed.store(true);
          }
        }
        done.fetch_add(1, std::memory_order_release);
      }
    }
  });
  if (error) std::rethrow_exception(error);
}

void reverse_time(float* a, int64_t N, int64_t T, int64_t D) {
  if (T < 2 || D == 0) return;
  parallel_for(N, std::max<int64_t>(1, 65536 / (T * D)), [&](int64_t n0, int64_t n1) {
    std::vector<float> tmp(static_cast<size_t>(D));
    for (int64_t n = n0; n < n1; ++n) {
      for (int64_t s = 0; s < T / 2; ++s) {
        float* p = a + (n * T + s) * D;
        float* q = a + (n * T + T - 1 - s) * D;
        std::memcpy(tmp.data(), p, sizeof(float) * D);
        std::memcpy(p, q, sizeof(float) * D);
        std::memcpy(q, tmp.data(), sizeof(float) * D);
      }
    }
  });
}

void interleave_gates(float* dst, const float* src, int64_t ld_src, int64_t K, int64_t G,
                      const Tiling& t) {
  const int64_t U = t.U, ld = G * U;
  for (int64_t k = 0; k < K; ++k) {
    for (int64_t j0 = 0; j0 < U; j0 += t.units) {
      const int64_t w = std::min(t.units, U - j0);
      for (int64_t g = 0; g < G; ++g)
        std::memcpy(dst + k * ld + G * j0 + g * w, src + k * ld_src + g * U + j0,
                    sizeof(float) * w);
    }
  }
}

void weight_grads(float* drk, float* dk, float* db, int64_t ld, const float* dz, const float* h0,
                  const float* hs, const float* x, int64_t N, int64_t T, int64_t F, int64_t U,
                  int64_t G, bool go_backwards) {
  const int64_t cu = drk ? U : 0, cf = dk ? F : 0, M = cu + cf + (db ? 1 : 0), rows = N * T;
  if (M == 0 || G == 0) return;
  Buffer a(rows * M);  // (N * T, M) = [h_prev | x_t | 1]
  parallel_for(N, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, T * M)),
               [&](int64_t n0, int64_t n1) {
                 for (int64_t n = n0; n < n1; ++n)
                   for (int64_t s = 0; s < T; ++s) {
                     const int64_t row = n * T + s;
                     float* r = a.data() + row * M;
                     if (cu) std::memcpy(r, s ? hs + (row - 1) * U : h0 + n * U, sizeof(float) * U);
                     if (cf)
                       std::memcpy(r + cu, x + (n * T + (go_backwards ? T - 1 - s : s)) * F,
                                   sizeof(float) * F);
                     if (db) r[cu + cf] = 1.f;
                   }
               });
  Buffer c(M * G);  // (M, G) = A^T @ dz
  gemm_strided(c.data(), G, a.data(), M, dz, ld, M, G, rows, true, false, 1.f, 0.f);
  if (drk) copy_rows(drk, ld, c.data(), G, U, G);
  if (dk) copy_rows(dk, ld, c.data() + cu * G, G, F, G);
  if (db) std::memcpy(db, c.data() + (cu + cf) * G, sizeof(float) * G);
}

void stack_inputs(float* xh, const float* x, const float* h0, int64_t N, int64_t T, int64_t F,
                  int64_t U, bool go_backwards) {
  const int64_t K = F + U;
  parallel_for(N, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, T * K)),
               [&](int64_t n0, int64_t n1) {
                 for (int64_t n = n0; n < n1; ++n) {
                   for (int64_t s = 0; s < T; ++s)
                     std::memcpy(xh + (n * T + s) * K,
                                 x + (n * T + (go_backwards ? T - 1 - s : s)) * F,
                                 sizeof(float) * F);
                   std::memcpy(xh + n * T * K + F, h0 + n * U, sizeof(float) * U);
                 }
               });
}

void transpose(float* dst, const float* src, int64_t rows, int64_t cols) {
  const int64_t tile = 32;
  for (int64_t i0 = 0; i0 < rows; i0 += tile)
    for (int64_t j0 = 0; j0 < cols; j0 += tile)
      for (int64_t j = j0; j < std::min(cols, j0 + tile); ++j)
        for (int64_t i = i0; i < std::min(rows, i0 + tile); ++i) dst[j * rows + i] = src[i * cols + j];
}

void copy_rows(float* dst, int64_t ld_dst, const float* src, int64_t ld_src, int64_t rows,
               int64_t cols) {
  for (int64_t i = 0; i < rows; ++i) {
    if (src)
      std::memcpy(dst + i * ld_dst, src + i * ld_src, sizeof(float) * cols);
    else
      std::memset(dst + i * ld_dst, 0, sizeof(float) * cols);
  }
}

}  // namespace rnn
}  // namespace fk
