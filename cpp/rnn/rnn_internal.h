// rnn_internal.h: what the recurrent drivers (lstm.cpp, gru.cpp, simple_rnn.cpp) share.
//
// - GateKernels: the per-ISA elementwise passes of one row of one step (gates_impl.h holds the
//   math once; gates.cpp, gates_avx2.cpp and gates_avx512.cpp compile it per ISA).
// - Tiling and run_phases: how one time step is cut into (row block, unit block) tiles for the
//   thread pool. Each tile runs its own slice of the step's GEMM and then the gate pass on
//   exactly the slice it produced (hot in cache), and every tile packs only its own columns of
//   the weights; the steps of a whole sequence run in one parallel region.
// - Small helpers: aligned uninitialised scratch, time reversal, gate interleaving, stacking of
//   [x_t | h] operands, transposition, and the fused weight-gradient GEMM.
//
// Row pointers given to GateKernels are full rows indexed by the absolute unit j; only the
// tile's projections (`z`, `rec`) are indexed by jj = j - j0 inside the tile, with their G gates
// interleaved: gate g of unit j sits at rec[g * w + jj] (w = tile width).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace fk {

// fkeras/gemm.h: not included here, because the per-ISA gate files include this header and must
// not see gemm.h's inline code (an ODR hazard across -m flags).
struct GemmPackedB;

namespace rnn {

struct GateKernels {
  // LSTM step, units [j0, j0 + w) of one row: z (4w) the pre-activations, interleaved; g (4U)
  // out [opt], the activated gates i, f, c, o; c_prev, c, h (U); h_copy (U) [opt] a second copy of h.
  void (*lstm_forward)(float* g, const float* z, const float* c_prev, float* c, float* h,
                       float* h_copy, int64_t U, int64_t j0, int64_t w, int64_t act,
                       int64_t rec_act);
  // LSTM step backward. dz (4U) out: gradient of the pre-activations. dc (U): in, the cell
  // gradient from the later step; out, the gradient for c_prev. dh (U) in, dhs (U) [opt] added.
  void (*lstm_backward)(float* dz, float* dc, const float* dh, const float* dhs, const float* g,
                        const float* c, const float* c_prev, int64_t U, int64_t j0, int64_t w,
                        int64_t act, int64_t rec_act);
  // GRU reset_after step: g (3U) in x-projection + input bias, out z, r, hh; rec (3w)
  // interleaved h_prev @ Wr + br; hproj (U) out; h (U) out.
  void (*gru_forward_ra)(float* g, float* hproj, const float* rec, const float* h_prev, float* h,
                         int64_t U, int64_t j0, int64_t w, int64_t act, int64_t rec_act);
  // GRU !reset_after, first half: z, r into g from g + rec (2w interleaved); rh = r * h_prev.
  void (*gru_forward_zr)(float* g, float* rh, const float* rec, const float* h_prev, int64_t U,
                         int64_t j0, int64_t w, int64_t rec_act);
  // Second half: hh = act(g_h + hproj) into g, h = z * h_prev + (1 - z) * hh.
  void (*gru_forward_h)(float* g, float* h, const float* hproj, const float* h_prev, int64_t U,
                        int64_t j0, int64_t w, int64_t act);
  // GRU reset_after backward: drp (3U) out, gradient of the recurrent projection (dz, dr,
  // dhh * r); dxh (U) out, dhh; dh (U) in (+ dhs [opt]), out dh * z.
  void (*gru_backward_ra)(float* drp, float* dxh, float* dh, const float* dhs, const float* g,
                          const float* hproj, const float* h_prev, int64_t U, int64_t j0,
                          int64_t w, int64_t act, int64_t rec_act);
  // GRU !reset_after backward, first half: dxp (3U) z and h parts out; dh as above.
  void (*gru_backward_zh)(float* dxp, float* dh, const float* dhs, const float* g,
                          const float* h_prev, int64_t U, int64_t j0, int64_t w, int64_t act,
                          int64_t rec_act);
  // Second half, given drh (U), the gradient of r * h_prev: dxp's r part out, dh += drh * r,
  // rh (U) [opt] out = r * h_prev (for the recurrent kernel's gradient).
  void (*gru_backward_r)(float* dxp, float* dh, float* rh, const float* drh, const float* g,
                         const float* h_prev, int64_t U, int64_t j0, int64_t w, int64_t rec_act);
  // y (n) = act(y) in place; y_copy (n) [opt] a second copy of the result.
  void (*activation)(float* y, float* y_copy, int64_t n, int64_t act);
  // dz (n) = (dh + dhs [opt]) * act'(from h).
  void (*simple_backward)(float* dz, const float* dh, const float* dhs, const float* h, int64_t n,
                          int64_t act);
};

const GateKernels& gate_kernels();  // for fk::cpu_isa() now
const GateKernels& gate_kernels_scalar();
const GateKernels& gate_kernels_avx2();
const GateKernels& gate_kernels_avx512();

// Uninitialised, 64-byte aligned float scratch.
class Buffer {
 public:
  explicit Buffer(int64_t n);
  float* data() const { return p_.get(); }

 private:
  struct Free {
    void operator()(float* p) const;
  };
  std::unique_ptr<float, Free> p_;
};

// One time step cut into tiles: row blocks of `rows` rows (of N) times unit blocks of `units`
// units (of U); tile c is row block c / unit_blocks, unit block c % unit_blocks.
struct Tiling {
  int64_t N = 0, U = 0, rows = 1, units = 1, row_blocks = 1, unit_blocks = 1;
  int64_t tiles() const { return row_blocks * unit_blocks; }
};
// G: gates per unit (4 LSTM, 3 GRU, 1 SimpleRNN), which scales the work per tile. rows_first:
// split rows before units (forward passes, which write the caller's outputs; see the .cpp).
Tiling plan_tiles(int64_t N, int64_t U, int64_t G, bool rows_first);
// Runs fn(phase, r0, r1, j0, j1) for every tile of phases 0 .. phases - 1 (a phase is one step,
// or one half of a step), phase after phase: no tile of phase p starts before every tile of
// phase p - 1 has finished. The whole sequence is ONE parallel region whose participants work
// on the same (home) tiles every phase, take over tiles nobody has started, and wait for each
// other only at phase boundaries (a brief spin, then yield), instead of a region (and a
// sleeping-worker wake-up) per step.
using PhaseFn = std::function<void(int64_t, int64_t, int64_t, int64_t, int64_t)>;
void run_phases(int64_t phases, const Tiling& t, const PhaseFn& fn);

// The GEMM-packed columns of each unit tile of t: entry u holds columns [G * j0, G * j1) of
// w (K, ld) for unit block u = j0 / t.units (G: gates per unit, interleaved per tile).
std::vector<GemmPackedB> pack_unit_tiles(const float* w, int64_t ld, int64_t K, int64_t G,
                                         const Tiling& t);

// Reverses the time axis of a (N, T, D) buffer in place.
void reverse_time(float* a, int64_t N, int64_t T, int64_t D);
// dst (K, G * U) = src (K rows of stride ld_src, G gate blocks of U columns) with the gates
// interleaved per unit block of t: for the block [j0, j1), w = j1 - j0, column G * j0 + g * w +
// (j - j0) holds src column g * U + j.
void interleave_gates(float* dst, const float* src, int64_t ld_src, int64_t K, int64_t G,
                      const Tiling& t);
// The weight gradients from dz (N, T, G; row stride ld), the gradient of a projection by step:
// [drk (U, G); dk (F, G); db (G)] = [h_prev | x_t | 1]^T @ dz as ONE GEMM over the N * T rows
// (so dz is read once), each part only when its output is given (outputs: row stride ld, G
// columns; overwritten). h_prev of step s is h0 (s = 0) or hs[:, s - 1]; x_t is x[:, s], or
// x[:, T - 1 - s] with go_backwards. hs may be null when T == 1.
void weight_grads(float* drk, float* dk, float* db, int64_t ld, const float* dz, const float* h0,
                  const float* hs, const float* x, int64_t N, int64_t T, int64_t F, int64_t U,
                  int64_t G, bool go_backwards);
// xh (N, T, F + U): row (n, s) gets x[n, s] (x[n, T - 1 - s] with go_backwards) in its first F
// columns; row (n, 0) gets h0[n] in its last U (the forward writes the other h parts).
void stack_inputs(float* xh, const float* x, const float* h0, int64_t N, int64_t T, int64_t F,
                  int64_t U, bool go_backwards);
// dst (cols, rows) = src (rows, cols)^T. The backward passes use Wr^T so that the per-step
// GEMMs read a plain (not transposed) B, which packs faster.
void transpose(float* dst, const float* src, int64_t rows, int64_t cols);
// dst (rows, cols; stride ld_dst) = src (rows, cols; stride ld_src), or 0 when src is null.
void copy_rows(float* dst, int64_t ld_dst, const float* src, int64_t ld_src, int64_t rows,
               int64_t cols);

}  // namespace rnn
}  // namespace fk
