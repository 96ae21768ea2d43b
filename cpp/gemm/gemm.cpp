// gemm.cpp: the GEMM driver: fk::gemm, fk::gemm_strided, activation_inplace and
// activation_grad_from_output_inplace (portable code; the arithmetic is in the per-ISA files).
//
// C (M, N; ldc) = epilogue(alpha * op(A) @ op(B) + beta * C), see gemm.h. beta == 0 never reads
// C; K == 0 or alpha == 0 never reads A or B and gives epilogue(beta * C).
//
// Plan: tiny products (at most kDirectWork multiply-adds) run on the calling thread with no
// packing of A (and of B unless it is transposed). Larger ones split C into a grid of blocks
// handed out dynamically by fk::parallel_for; each block packs its own panels into a
// thread-local buffer (gemm_block.h). The grid is chosen by a small cost model: compute plus the
// packing that each extra block repeats, over the threads, plus a margin for the last block
// (the one a descheduled thread may hold up). Small-M shapes split over N, small-N shapes over
// M, large ones over both.
#include <cstdlib>
#include "fkeras/gemm.h"
#include "fkeras/kernels.h"
#include "fkeras/runtime.h"
#include "gemm_internal.h"
#include "gemm_scratch.h"

namespace fk {
namespace gemm_detail {
namespace {

// Up to this many multiply-adds, and a B of at most kDirectB elements (64 KB), the operands
// are read in place: packing would cost more than the strided reads it saves.
constexpr double kDirectWork = 128.0 * 128.0 * 128.0;
constexpr int64_t kDirectB = 128 * 128;
// Below this many, it is not worth waking the pool (a wake-up costs ~5-20 us).
constexpr double kSerialWork = 96.0 * 96.0 * 96.0;

// Few C tiles but a long K (a Dense dkernel of a small layer over a large batch): blocks of C
// alone would leave cores idle, so K is cut into chunks whose products are summed at the end.
constexpr int64_t kSplitMaxTiles = 4;
constexpr int64_t kSplitMinK = 2048;

thread_local Scratch<float> t_work_b;   // each thread's packed B panels
thread_local Scratch<float> t_partial;  // the calling thread's K-split partial products

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// C = epilogue(beta * C): the K == 0 / alpha == 0 case.
void scale_only(const Problem& p, const IsaOps& ops) {
  for (int64_t i = 0; i < p.M; ++i) {
    float* c = p.C + i * p.ldc;
    for (int64_t j = 0; j < p.N; ++j) {
      float v = p.beta == 0.f ? 0.f : p.beta * c[j];
      c[j] = p.bias ? v + p.bias[j] : v;
    }
    ops.activation(c, p.N, p.act, p.act_alpha);
  }
}

struct Grid {
  int64_t rows, cols;  // block size (multiples of the tile), the last ones may be smaller
};

// The cost model, in multiply-add units (the microkernel does ~32 per cycle per core): compute
// plus the packing each block repeats (A once per NC column block, B once), with an estimated
// finish time of total / threads plus half a block (the expected wait for the last one; more,
// smaller blocks also let a thread that the OS deschedules hold up less).
Grid plan_grid(const Problem& p, const IsaOps& ops, int threads, bool packs_a, bool packs_b) {
  if (threads <= 1) return {p.M, p.N};
  const double pack_a = p.ta ? 3.0 : 8.0;  // per element: a copy, or a transpose
  const double pack_b = p.tb ? 8.0 : 3.0;
  const double K = static_cast<double>(p.K);
  auto block_cost = [&](int64_t r, int64_t c) {
    const double jc = static_cast<double>(ceil_div(c, ops.nc));
    const double a = packs_a ? pack_a : 0.0, b = packs_b ? pack_b : 0.0;
    return static_cast<double>(r) * static_cast<double>(c) * K +
           K * (static_cast<double>(r) * jc * a + static_cast<double>(c) * b) + 2000.0;
  };
  const int64_t tm = ceil_div(p.M, ops.mr), tn = ceil_div(p.N, ops.nr);
  const int64_t max_blocks = 8 * static_cast<int64_t>(threads);
  Grid best{p.M, p.N};
  double best_cost = -1.0;
  for (int64_t gm = 1; gm <= tm && gm <= max_blocks; ++gm) {
    const int64_t rows = ceil_div(tm, gm) * ops.mr;
    if (gm > 1 && ceil_div(p.M, rows) != gm) continue;  // same as a smaller gm
    for (int64_t gn = 1; gn <= tn && gm * gn <= max_blocks; ++gn) {
      const int64_t cols = ceil_div(tn, gn) * ops.nr;
      if (gn > 1 && ceil_div(p.N, cols) != gn) continue;
      // Full blocks, then the last row and column of blocks with what is left.
      const int64_t r_last = p.M - (gm - 1) * rows, c_last = p.N - (gn - 1) * cols;
      const int64_t r_full = gm > 1 ? rows : r_last, c_full = gn > 1 ? cols : c_last;
      const double full = block_cost(r_full, c_full);
      const double total = static_cast<double>((gm - 1) * (gn - 1)) * full +
                           static_cast<double>(gm - 1) * block_cost(r_full, c_last) +
                           static_cast<double>(gn - 1) * block_cost(r_last, c_full) +
                           block_cost(r_last, c_last);
      const double t = total / threads + 0.5 * full;
      const double cost = t > full ? t : full;
      if (best_cost < 0.0 || cost < best_cost) {
        best_cost = cost;
        best = {r_full, c_full};
      }
    }
  }
  return best;
}

// C = epilogue(alpha * sum of the partial products (M, N) + beta * C), summed in chunk order.
// The chunks depend on the shape only, so the result is the same for every thread count.
void run_split_k(const Problem& p, const IsaOps& ops, bool pack_a, bool pack_b) {
  const int64_t chunks_wanted = p.K / (kSplitMinK / 2) < 8 ? p.K / (kSplitMinK / 2) : 8;
  const int64_t kchunk = ceil_div(ceil_div(p.K, chunks_wanted), ops.kc) * ops.kc;
  const int64_t chunks = ceil_div(p.K, kchunk);
  const int64_t mn = p.M * p.N;
  float* part = t_partial.get(static_cast<size_t>(chunks * mn));
  const int64_t cols = p.N < ops.nc ? p.N : ops.nc;
  const size_t work_b = static_cast<size_t>(ops.kc * ceil_div(cols, ops.nr) * ops.nr);
  parallel_for(chunks, 1, [&](int64_t c0, int64_t c1) {
    float* wb = pack_b ? t_work_b.get(work_b) : nullptr;
    for (int64_t c = c0; c < c1; ++c) {
      const int64_t k0 = c * kchunk;
      Problem q = p;
      q.C = part + c * mn, q.ldc = p.N;
      q.A = p.ta ? p.A + k0 * p.lda : p.A + k0;
      q.B = p.tb ? p.B + k0 : p.B + k0 * p.ldb;
      q.K = p.K - k0 < kchunk ? p.K - k0 : kchunk;
      q.alpha = 1.f, q.beta = 0.f, q.bias = nullptr, q.act = kLinear;
      ops.block(q, Block{0, p.M, 0, p.N}, pack_a, pack_b, wb);
    }
  });
  for (int64_t i = 0; i < p.M; ++i) {
    float* c = p.C + i * p.ldc;
    for (int64_t j = 0; j < p.N; ++j) {
      float sum = 0.f;
      for (int64_t k = 0; k < chunks; ++k) sum += part[k * mn + i * p.N + j];
      float v = p.alpha * sum + (p.beta == 0.f ? 0.f : p.beta * c[j]);
      c[j] = p.bias ? v + p.bias[j] : v;
    }
    ops.activation(c, p.N, p.act, p.act_alpha);
  }
}

void run(const Problem& p) {
  const IsaOps& ops = current_ops();
  if (p.K == 0 || p.alpha == 0.f) return scale_only(p, ops);
  const double work = static_cast<double>(p.M) * static_cast<double>(p.N) *
                      static_cast<double>(p.K);
  static const double direct_work = std::getenv("FKG_DIRECT") ? std::atof(std::getenv("FKG_DIRECT")) : kDirectWork;  // TUNING
  static const double serial_work = std::getenv("FKG_SERIAL") ? std::atof(std::getenv("FKG_SERIAL")) : kSerialWork;  // TUNING
  // Packing an operand pays off through reuse: each A panel is read once per B panel and each
  // B panel once per A panel. Small products, and an operand that the other's size reuses at
  // most twice, are read in place (a transposed B is always packed: the microkernel needs its
  // rows contiguous in N). Decided for the whole product: in-place reads cost little only when
  // they are few, which is what the small sizes guarantee.
  const bool small = work <= direct_work && p.K * p.N <= kDirectB;
  const bool pack_a = !small && p.N > 2 * ops.nr;
  const bool pack_b = p.tb || (!small && p.M > 2 * ops.mr);
  if (!small && p.K >= kSplitMinK &&
      ceil_div(p.M, ops.mr) * ceil_div(p.N, ops.nr) <= kSplitMaxTiles)
    return run_split_k(p, ops, pack_a, pack_b);
  const Grid g = plan_grid(p, ops, work <= serial_work ? 1 : num_threads(), pack_a, pack_b);
  const int64_t gm = ceil_div(p.M, g.rows), gn = ceil_div(p.N, g.cols);
  const int64_t cols = g.cols < ops.nc ? g.cols : ops.nc;
  const size_t work_b = static_cast<size_t>(ops.kc * ceil_div(cols, ops.nr) * ops.nr);
  auto blocks = [&](int64_t b0, int64_t b1) {
    float* wb = pack_b ? t_work_b.get(work_b) : nullptr;
    for (int64_t b = b0; b < b1; ++b) {
      // Column-major block order: consecutive blocks share a B panel column (L3 reuse).
      const int64_t bi = b % gm, bj = b / gm;
      const int64_t i0 = bi * g.rows, j0 = bj * g.cols;
      const Block blk{i0, i0 + g.rows < p.M ? i0 + g.rows : p.M, j0,
                      j0 + g.cols < p.N ? j0 + g.cols : p.N};
      ops.block(p, blk, pack_a, pack_b, wb);
    }
  };
  if (gm * gn == 1) return blocks(0, 1);
  parallel_for(gm * gn, 1, blocks);
}

}  // namespace

const IsaOps& current_ops() {
  const Isa isa = cpu_isa();
  return isa == Isa::kAvx512 ? ops_avx512() : isa == Isa::kAvx2 ? ops_avx2() : ops_scalar();
}

void check_fused(int64_t act) {
  FK_CHECK(act >= kLinear && act <= kLeakyRelu && act != kGelu && act != kGeluTanh &&
               act != kSwish,
           "activation code ", act, " is not a fused-epilogue activation");
}

}  // namespace gemm_detail

void activation_inplace(float* y, int64_t n, int64_t act, float alpha) {
  gemm_detail::check_fused(act);
  if (act == kLinear || n <= 0) return;
  const auto& ops = gemm_detail::current_ops();
  // exp-based codes cost ~10 ns per element: thread them from a smaller size.
  const bool cheap = act == kRelu || act == kLeakyRelu || act == kHardSigmoid || act == kSoftsign;
  parallel_for(n, cheap ? (int64_t(1) << 16) : (int64_t(1) << 12), [&](int64_t b, int64_t e) {
    ops.activation(y + b, e - b, act, alpha);
  });
}

void activation_grad_from_output_inplace(float* dy, const float* y, int64_t n, int64_t act,
                                         float alpha) {
  gemm_detail::check_fused(act);
  if (act == kLinear || n <= 0) return;
  const auto& ops = gemm_detail::current_ops();
  const bool cheap = act != kSoftplus;
  parallel_for(n, cheap ? (int64_t(1) << 16) : (int64_t(1) << 12), [&](int64_t b, int64_t e) {
    ops.activation_grad(dy + b, y + b, e - b, act, alpha);
  });
}

void gemm_strided(float* C, int64_t ldc, const float* A, int64_t lda, const float* B,
                  int64_t ldb, int64_t M, int64_t N, int64_t K, bool trans_a, bool trans_b,
                  float alpha, float beta, const Epilogue& ep) {
  FK_CHECK(M >= 0 && N >= 0 && K >= 0, "gemm: negative size M=", M, " N=", N, " K=", K);
  FK_CHECK(ldc >= N && lda >= (trans_a ? M : K) && ldb >= (trans_b ? K : N),
           "gemm: a row stride is smaller than its row (ldc=", ldc, ", lda=", lda,
           ", ldb=", ldb, ")");
  gemm_detail::check_fused(ep.activation);
  if (M == 0 || N == 0) return;
  gemm_detail::Problem p{C,     ldc,  A,          lda,           B,       ldb,
                         M,     N,    K,          trans_a,       trans_b, alpha,
                         beta,  ep.bias, ep.activation, ep.alpha};
  gemm_detail::run(p);
}

void gemm(float* C, const float* A, const float* B, int64_t M, int64_t N, int64_t K,
          bool trans_a, bool trans_b, float alpha, float beta) {
  gemm_strided(C, N, A, trans_a ? M : K, B, trans_b ? K : N, M, N, K, trans_a, trans_b, alpha,
               beta);
}

}  // namespace fk
