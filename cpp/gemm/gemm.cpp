// gemm.cpp: the GEMM driver: fk::gemm, fk::gemm_strided, activation_inplace and
// activation_grad_from_output_inplace (portable code; the arithmetic is in the per-ISA files).
//
// C (M, N; ldc) = epilogue(alpha * op(A) @ op(B) + beta * C), see gemm.h. beta == 0 never reads
// C; K == 0 or alpha == 0 never reads A or B and gives epilogue(beta * C).
//
// Plan (run()):
// - Small products (kDirectWork) read A and B in place, on the calling thread below
//   kSerialWork (waking the pool costs more than it saves).
// - Otherwise C is split into a grid of blocks handed out dynamically by fk::parallel_for, so a
//   thread that the OS deschedules only delays the block it holds. A block packs its operands
//   into panels itself (gemm_block.h). Blocks go out column by column, and a thread keeps the
//   B it packed for one block (all of K, when that fits in L2) for its next block of the same
//   column: B is packed at most once per thread and column, with no barrier and no second
//   pass. (Packing once for all threads in a first pass was measured slower here: one more
//   pool wake-up, and every block then pulls half its panels from the other core.)
//   The grid comes from a cost model (plan_blocks).
// - A product with a few C tiles but a long K splits K (run_split_k); bf16 products up to
//   kSplitMaxTilesBf16 tiles (their blocks round B in every block).
#include <algorithm>
#include <atomic>

#include "fkeras/gemm.h"
#include "fkeras/kernels.h"
#include "fkeras/runtime.h"
#include "gemm_internal.h"
#include "gemm_scratch.h"

namespace fk {
namespace gemm_detail {
namespace {

// Up to this many multiply-adds, and a B of at most kDirectB elements (64 KB, L1/L2 resident),
// the operands are read in place: packing would cost more than the strided reads it saves
// (measured: 1.1-1.2x faster at 64^3..128^3 than packed).
constexpr double kDirectWork = 128.0 * 128.0 * 128.0;
constexpr int64_t kDirectB = 128 * 128;
// Below this many, it is not worth waking the pool: measured here, a sleeping worker starts
// ~6 us after the wake-up when it ran recently, 20 us or more after a millisecond of idleness.
constexpr double kSerialWork = 96.0 * 96.0 * 96.0;

// Few C tiles but a long K (a Dense dkernel of a small layer over a large batch): blocks of C
// alone would leave cores idle, so K is cut into chunks whose products are summed at the end.
constexpr int64_t kSplitMaxTiles = 4;
constexpr int64_t kSplitMinK = 2048;
// bf16 products split K up to this many C tiles: their blocks pack (round) B in every block,
// so a grid of row blocks packs all of a long-K B once per thread, where the split packs each
// part once; and the arithmetic, twice as fast, no longer hides that. Measured on the
// benchmark CNN's Dense 9216 -> 128 forward (M = 64: 24 tiles), two threads: 0.32 -> 0.24 ms
// (one thread: 0.39 -> 0.41). By shape only, so the result is the same for every thread count.
constexpr int64_t kSplitMaxTilesBf16 = 32;

// A thread keeps its packed B for the next block of the same column up to this many floats
// (1 MB: half the L2).
constexpr int64_t kKeepB = int64_t(1) << 18;
// Each block reads its rows of A and columns of B from L3 once, packed or not (per element, in
// multiply-add units, partly hidden behind the arithmetic): what makes thin blocks slow.
constexpr double kTraffic = 3.0;

thread_local Scratch<float> t_work_b;   // each thread's packed B panels (KC x NC)
thread_local Scratch<float> t_partial;  // the calling thread's K-split partial products

// Each thread's B kept from its last block: valid for one call (id) and block column.
struct KeptB {
  uint64_t call = 0;
  int64_t column = -1;
  Scratch<float> panels;  // (K, cols) in PackedB layout
};
thread_local KeptB t_kept_b;
std::atomic<uint64_t> g_call_id{0};

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

struct Plan {
  int64_t rows, cols;  // block size (multiples of the tile); the last ones may be smaller
  bool keep_b;         // threads keep their packed B across blocks of a column
};

int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }

// A block packs its A panels only when they meet at least three B panels: below that the
// in-place reads cost less than the (transposing) copy.
bool block_packs_a(const IsaOps& ops, bool packs_a, int64_t cols) {
  return ops.always_packs_a || (packs_a && cols > 2 * ops.nr);
}

bool keeps_b(const Problem& p, const IsaOps& ops, bool packs_b, int64_t gm, int64_t cols) {
  return packs_b && gm > 1 && cols <= ops.nc && p.K * round_up(cols, ops.nr) <= kKeepB;
}

// The cost model, in multiply-add units (the microkernel does ~32 per cycle per core): compute,
// plus the operand reads (kTraffic) and packing of each block (A once per NC column block;
// B once per block, or once per thread and column when kept). Estimated finish time: total /
// threads plus half a block (the expected wait for the last one; smaller blocks also let a
// descheduled thread hold up less).
Plan plan_blocks(const Problem& p, const IsaOps& ops, int threads, bool packs_a, bool packs_b) {
  if (threads <= 1) return {p.M, p.N, false};
  const double K = static_cast<double>(p.K);
  const double a_pack = p.ta ? 3.0 : 8.0;  // per element: a copy, or a transpose
  const double b_elem = kTraffic + (packs_b ? (p.tb ? 8.0 : 3.0) : 0.0);
  auto core = [&](int64_t r, int64_t c) {  // a block without its B
    const double jc = static_cast<double>(ceil_div(c, ops.nc));
    const double a_elem = kTraffic + (block_packs_a(ops, packs_a, c) ? a_pack : 0.0);
    return static_cast<double>(r) * (static_cast<double>(c) + jc * a_elem) * K + 2000.0;
  };
  auto b_cost = [&](int64_t c) { return static_cast<double>(c) * b_elem * K; };
  const int64_t tm = ceil_div(p.M, ops.mr), tn = ceil_div(p.N, ops.nr);
  const int64_t max_blocks = 8 * static_cast<int64_t>(threads);
  Plan best{p.M, p.N, false};
  double best_cost = -1.0;
  for (int64_t gm = 1; gm <= tm && gm <= max_blocks; ++gm) {
    const int64_t rows = ceil_div(tm, gm) * ops.mr;
    if (gm > 1 && ceil_div(p.M, rows) != gm) continue;  // same as a smaller gm
    for (int64_t gn = 1; gn <= tn && gm * gn <= max_blocks; ++gn) {
      const int64_t cols = ceil_div(tn, gn) * ops.nr;
      if (gn > 1 && ceil_div(p.N, cols) != gn) continue;
      // Full blocks, then the last row and column of blocks with what is left.
      const int64_t r_last = p.M - (gm - 1) * rows, c_last = p.N - (gn - 1) * cols;
      if (gn > 1 && c_last <= 16) continue;  // would cut the right-edge panel split
      const int64_t r_full = gm > 1 ? rows : r_last, c_full = gn > 1 ? cols : c_last;
      const bool keep = keeps_b(p, ops, packs_b, gm, c_full);
      const double b_times = static_cast<double>(keep && threads < gm ? threads : gm);
      const double total =
          static_cast<double>(gn - 1) * ((gm - 1) * core(r_full, c_full) +
                                         core(r_last, c_full) + b_times * b_cost(c_full)) +
          (gm - 1) * core(r_full, c_last) + core(r_last, c_last) + b_times * b_cost(c_last);
      const double full = core(r_full, c_full) + b_cost(c_full);
      const double t = total / threads + 0.5 * full;
      const double cost = t > full ? t : full;
      if (best_cost < 0.0 || cost < best_cost) {
        best_cost = cost;
        best = {r_full, c_full, keep};
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
      ops.block(q, Block{0, p.M, 0, p.N}, pack_a, pack_b, wb, PackedB{});
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

// A one-row product (a batch-1 Dense): memory-bound on B, so it is the row kernel, by column
// groups, on the calling thread below kRowSerialWork. Measured on 2 idle cores: 784 x 512
// 16.0 -> 9.5 us on two threads, 256 x 512 4.1 -> 2.5 us (on a loaded machine the second
// thread can cost more than it brings, as for every threaded kernel).
constexpr double kRowSerialWork = 128.0 * 1024.0;

void run_row(const Problem& p, const IsaOps& ops) {
  const int64_t groups = ceil_div(p.N, ops.row_group);
  const double work = static_cast<double>(p.N) * static_cast<double>(p.K);
  const int threads = work < kRowSerialWork ? 1 : available_threads();
  if (threads <= 1) return ops.row(p, 0, p.N);
  // At least two chunks per thread when the groups allow it (a descheduled thread then holds
  // up less); chunk edges on vector multiples so no group is split below a vector.
  const int64_t vec = ops.row_group / 8;
  const int64_t chunks = std::min<int64_t>(std::max<int64_t>(groups, 2 * threads),
                                           ceil_div(p.N, vec));
  const int64_t width = round_up(ceil_div(p.N, chunks), vec);
  parallel_for(ceil_div(p.N, width), 1, [&](int64_t c0, int64_t c1) {
    ops.row(p, c0 * width, std::min(p.N, c1 * width));
  });
}

void run(const Problem& p) {
  const IsaOps& ops = current_ops();
  if (p.K == 0 || p.alpha == 0.f) return scale_only(p, ops);
  if (p.M == 1 && !p.tb && ops.row != nullptr) return run_row(p, ops);
  const double work = static_cast<double>(p.M) * static_cast<double>(p.N) *
                      static_cast<double>(p.K);
  // Packing an operand pays off through reuse: each A panel is read once per B panel and each
  // B panel once per A panel. Small products, and an operand that the other's size reuses at
  // most twice, are read in place (a transposed B is always packed: the microkernel needs its
  // rows contiguous in N).
  const bool small = work <= kDirectWork && p.K * p.N <= kDirectB;
  const bool pack_a = !small && p.N > 2 * ops.nr;
  const bool pack_b = p.tb || (!small && p.M > 2 * ops.mr);
  const int64_t split_tiles = gemm_bf16_active() ? kSplitMaxTilesBf16 : kSplitMaxTiles;
  if (!small && p.K >= kSplitMinK &&
      ceil_div(p.M, ops.mr) * ceil_div(p.N, ops.nr) <= split_tiles)
    return run_split_k(p, ops, pack_a, pack_b);
  // Inside a parallel region (a conv block, an RNN step tile) the blocks would run serially:
  // plan one block, not a grid that packs the same panels several times for nothing.
  const Plan plan = plan_blocks(p, ops, work <= kSerialWork ? 1 : available_threads(), pack_a,
                                pack_b);
  const int64_t gm = ceil_div(p.M, plan.rows), gn = ceil_div(p.N, plan.cols);
  const int64_t cols = plan.cols < ops.nc ? plan.cols : ops.nc;
  const size_t work_b = static_cast<size_t>(ops.kc * round_up(cols, ops.nr));
  const uint64_t call = ++g_call_id;
  auto blocks = [&](int64_t b0, int64_t b1) {
    float* wb = pack_b && !plan.keep_b ? t_work_b.get(work_b) : nullptr;
    for (int64_t b = b0; b < b1; ++b) {
      // Column by column: consecutive blocks share their B.
      const int64_t bi = b % gm, bj = b / gm;
      const int64_t i0 = bi * plan.rows, j0 = bj * plan.cols;
      const Block blk{i0, i0 + plan.rows < p.M ? i0 + plan.rows : p.M, j0,
                      j0 + plan.cols < p.N ? j0 + plan.cols : p.N};
      const bool blk_pack_a = block_packs_a(ops, pack_a, blk.j1 - blk.j0);
      if (!plan.keep_b) {
        ops.block(p, blk, blk_pack_a, pack_b, wb, PackedB{});
        continue;
      }
      PackedB kept{nullptr, round_up(blk.j1 - blk.j0, ops.nr), blk.j0};
      float* panels = t_kept_b.panels.get(static_cast<size_t>(kept.cols * p.K));
      if (t_kept_b.call != call || t_kept_b.column != bj) {
        for (int64_t k0 = 0; k0 < p.K; k0 += ops.kc) {
          const int64_t kc = p.K - k0 < ops.kc ? p.K - k0 : ops.kc;
          ops.pack_b(panels + k0 * kept.cols, p, k0, kc, blk.j0, blk.j1 - blk.j0);
        }
        t_kept_b.call = call, t_kept_b.column = bj;
      }
      kept.b = panels;
      ops.block(p, blk, blk_pack_a, true, nullptr, kept);
    }
  };
  if (gm * gn == 1) return blocks(0, 1);
  parallel_for(gm * gn, 1, blocks);
}

}  // namespace

const IsaOps& current_ops() {
  const Isa isa = cpu_isa();
  if (isa == Isa::kAvx512) return gemm_bf16_active() ? ops_avx512_bf16() : ops_avx512();
  return isa == Isa::kAvx2 ? ops_avx2() : ops_scalar();
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
  gemm_detail::Problem p{C, ldc, A, lda, B, ldb, M, N, K, trans_a, trans_b, alpha, beta,
                         ep.bias, ep.activation, ep.alpha};
  gemm_detail::run(p);
}

int64_t gemm_prepack_max_n() { return gemm_detail::current_ops().nc; }

void gemm_pack_b(GemmPackedB& out, const float* B, int64_t ldb, int64_t K, int64_t N,
                 bool trans_b) {
  using namespace gemm_detail;
  FK_CHECK(K >= 0 && N >= 0 && ldb >= (trans_b ? K : N), "gemm_pack_b: bad sizes K=", K, " N=",
           N, " ldb=", ldb);
  const IsaOps& ops = current_ops();
  out.B = B, out.ldb = ldb, out.K = K, out.N = N, out.trans_b = trans_b;
  out.isa = static_cast<int>(cpu_isa());
  out.bf16 = gemm_bf16_active();
  out.cols = round_up(N, ops.nr);
  if (N > ops.nc || K == 0 || N == 0) {  // kept by pointer: gemm_prepacked packs per call
    out.panels.reset();
    return;
  }
  out.panels.reset(new float[static_cast<size_t>(K * out.cols)]);
  const Problem p{nullptr, N, nullptr, K, B, ldb, 0, N, K, false, trans_b, 1.f, 0.f,
                  nullptr, kLinear, 0.f};
  // The same layout as a kept B in run(): reduction block k0 at panels + k0 * cols.
  for (int64_t k0 = 0; k0 < K; k0 += ops.kc)
    ops.pack_b(out.panels.get() + k0 * out.cols, p, k0, K - k0 < ops.kc ? K - k0 : ops.kc, 0, N);
}

void gemm_prepacked(float* C, int64_t ldc, const float* A, int64_t lda, const GemmPackedB& B,
                    int64_t M, bool trans_a, float alpha, float beta, const Epilogue& ep) {
  using namespace gemm_detail;
  if (!B.panels) {
    gemm_strided(C, ldc, A, lda, B.B, B.ldb, M, B.N, B.K, trans_a, B.trans_b, alpha, beta, ep);
    return;
  }
  FK_CHECK(B.isa == static_cast<int>(cpu_isa()), "gemm_prepacked: B was packed for another ISA");
  FK_CHECK(B.bf16 == gemm_bf16_active(), "gemm_prepacked: B was packed ",
           B.bf16 ? "with" : "without", " the bf16 flag, and the flag has changed since");
  FK_CHECK(M >= 0 && ldc >= B.N && lda >= (trans_a ? M : B.K), "gemm_prepacked: bad sizes M=", M,
           " ldc=", ldc, " lda=", lda);
  check_fused(ep.activation);
  if (M == 0 || B.N == 0) return;
  const Problem p{C, ldc, A, lda, B.B, B.ldb, M, B.N, B.K, trans_a, B.trans_b, alpha, beta,
                  ep.bias, ep.activation, ep.alpha};
  const IsaOps& ops = current_ops();
  if (B.K == 0 || alpha == 0.f) return scale_only(p, ops);
  const PackedB kept{B.panels.get(), B.cols, 0};
  const bool pack_a = B.N > 2 * ops.nr;
  // Row blocks of at least 64 rows, a few per thread (dynamic hand-out); one inside a region.
  const int64_t threads = available_threads();
  const int64_t rows = threads == 1 ? M
                       : round_up(std::max<int64_t>(64, ceil_div(M, 4 * threads)), ops.mr);
  const int64_t blocks = ceil_div(M, rows);
  auto run_rows = [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t i0 = b * rows, i1 = i0 + rows < M ? i0 + rows : M;
      ops.block(p, Block{i0, i1, 0, B.N}, pack_a, true, nullptr, kept);
    }
  };
  if (blocks == 1) return run_rows(0, 1);
  parallel_for(blocks, 1, run_rows);
}

double gemm_peak_loop(bool bf16, int64_t iters) {
  FK_CHECK(isa_supported(Isa::kAvx512) && (!bf16 || cpu_features().avx512_bf16),
           "gemm_peak_loop: this CPU lacks ", bf16 ? "avx512_bf16" : "avx512");
  FK_CHECK(iters >= 0, "gemm_peak_loop: negative iteration count ", iters);
  float sink = 0.f;  // written by the loop (another translation unit): it cannot be dropped
  return gemm_detail::peak_loop_avx512(bf16, iters, &sink);
}

void gemm(float* C, const float* A, const float* B, int64_t M, int64_t N, int64_t K,
          bool trans_a, bool trans_b, float alpha, float beta) {
  gemm_strided(C, N, A, trans_a ? M : K, B, trans_b ? K : N, M, N, K, trans_a, trans_b, alpha,
               beta);
}

}  // namespace fk
