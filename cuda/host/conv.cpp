// conv.cpp (host): fkeras._C_cuda_host bindings of the CUDA conv family's index maps
// (fk_cuda/conv_math.h): conv2d forward as the implicit GEMM the kernel walks (rows (n, p, q),
// cols k, depth (r, s, c) of the group) and the input gradient through the inverse map, on
// NumPy arrays, so tests compare them with NumPy float64 convolutions; and an emulation of the
// tiled kernels' walk (conv.cu): every block of the grid, every k-step, the A and B shared tiles
// filled by the 256 threads' quads exactly as conv_math.h's tile loaders and tile_math.h's slot
// maps say, multiplied in float64, stored through the kernels' output maps (the weight gradient
// through its split chunks and the second-pass sum).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "fk_cuda/binders.h"
#include "fk_cuda/conv_math.h"

namespace py = pybind11;
namespace cm = fk_cuda::conv_math;

namespace tmath = fk_cuda::tile_math;

namespace {
using F64 = py::array_t<double, py::array::c_style | py::array::forcecast>;

cm::TileGeom geom_of(const std::vector<int64_t>& v) {
  if (v.size() != 16)
    throw std::invalid_argument("geometry must be (N, H, W, C, K, R, S, P, Q, stride_h, "
                                "stride_w, dil_h, dil_w, pad_top, pad_left, groups)");
  const cm::Geom g{v[0], v[1], v[2],  v[3],  v[4],  v[5],  v[6],  v[7],
                   v[8], v[9], v[10], v[11], v[12], v[13], v[14], v[15]};
  for (int64_t x : v)
    if (x < 0) throw std::invalid_argument("geometry values must be >= 0");
  if (g.stride_h < 1 || g.stride_w < 1 || g.dil_h < 1 || g.dil_w < 1 || g.groups < 1 ||
      g.C % g.groups || g.K % g.groups)
    throw std::invalid_argument("strides, dilations, groups must be >= 1, groups divide C, K");
  if (!cm::tile_fits_int32(g)) throw std::invalid_argument("geometry too large for int32 tiles");
  return cm::tile_geom(g);
}

const double* checked(const F64& a, int64_t size, const char* name) {
  if (a.size() != size)
    throw std::invalid_argument(std::string(name) + " has " + std::to_string(a.size()) +
                                " elements, expected " + std::to_string(size));
  return a.data();
}

// The two shared tiles (kTileK x 128) of one k-step of one block, as its threads fill them.
struct Tiles {
  double a[tmath::kTileK][tmath::kTileM], b[tmath::kTileK][tmath::kTileN];
};

template <class Tile>
void fill(const std::vector<Tile>& th, const cm::TileGeom& g, const double* A, int64_t na,
          const double* B, int64_t nb, int64_t k0, Tiles& tl) {
  int seen_a[tmath::kTileK][tmath::kTileM] = {}, seen_b[tmath::kTileK][tmath::kTileN] = {};
  for (int t = 0; t < tmath::kTileThreads; ++t) {
    const cm::Gather qa = th[t].a(k0, g), qb = th[t].b(k0, g);
    for (int e = 0; e < 4; ++e) {
      const tmath::Slot sa = tmath::quad_slot(Tile::kAKMajor, t, e);
      const tmath::Slot sb = tmath::quad_slot(Tile::kBKMajor, t, e);
      if (qa.vec && qa.off[e] != qa.off[0] + e) throw std::logic_error("vec quad not contiguous");
      if (qa.off[e] >= na || qb.off[e] >= nb) throw std::logic_error("gather past an input");
      tl.a[sa.k][sa.m] = qa.off[e] >= 0 ? A[qa.off[e]] : 0.0;
      tl.b[sb.k][sb.m] = qb.off[e] >= 0 ? B[qb.off[e]] : 0.0;
      ++seen_a[sa.k][sa.m];
      ++seen_b[sb.k][sb.m];
    }
  }
  for (int k = 0; k < tmath::kTileK; ++k)
    for (int m = 0; m < tmath::kTileM; ++m)
      if (seen_a[k][m] != 1 || seen_b[k][m] != 1)
        throw std::logic_error("a shared tile slot is not written exactly once");
}

template <class Tile>
std::vector<Tile> threads_of(const cm::TileGeom& g, int64_t row0, int64_t col0, int64_t z,
                             int64_t kend) {
  std::vector<Tile> th;
  for (int t = 0; t < tmath::kTileThreads; ++t) th.emplace_back(g, row0, col0, z, kend, t);
  return th;
}

// Walks the kernel's grid as the kernel does: jobs z (grid.z; job(z) gives the GEMM rows,
// cols and depth range), blocks (row tile, col tile) of that job's extents; calls
// put(z, i, j, value) once per in-bounds element of each block's C tile.
template <class Tile, class JobOf, class Put>
void emulate(const cm::TileGeom& g, int64_t jobs, JobOf job, const double* A, int64_t na,
             const double* B, int64_t nb, Put put) {
  std::vector<double> acc(tmath::kTileM * tmath::kTileN);
  Tiles tl;
  for (int64_t z = 0; z < jobs; ++z) {
    const cm::Job jb = job(z);
    for (int64_t row0 = 0; row0 < jb.M; row0 += tmath::kTileM)
      for (int64_t col0 = 0; col0 < jb.N; col0 += tmath::kTileN) {
        const std::vector<Tile> th = threads_of<Tile>(g, row0, col0, z, jb.kend);
        std::fill(acc.begin(), acc.end(), 0.0);
        for (int64_t k0 = jb.kbeg; k0 < jb.kend; k0 += tmath::kTileK) {
          fill(th, g, A, na, B, nb, k0, tl);
          for (int k = 0; k < tmath::kTileK; ++k)
            for (int i = 0; i < tmath::kTileM; ++i)
              for (int j = 0; j < tmath::kTileN; ++j)
                acc[i * tmath::kTileN + j] += tl.a[k][i] * tl.b[k][j];
        }
        for (int i = 0; i < tmath::kTileM; ++i)
          for (int j = 0; j < tmath::kTileN; ++j)
            if (row0 + i < jb.M && col0 + j < jb.N)
              put(z, row0 + i, col0 + j, acc[i * tmath::kTileN + j]);
      }
  }
}

// Stores into out[off], counting writes: every element exactly once.
struct Writer {
  double* out;
  std::vector<int> count;
  Writer(double* o, int64_t n) : out(o), count(n, 0) {}
  void put(int64_t off, double v) {
    if (off < 0 || off >= static_cast<int64_t>(count.size()) || count[off]++)
      throw std::logic_error("output offset " + std::to_string(off) +
                             " out of range or written twice");
    out[off] = v;
  }
  void all_written() const {
    for (int c : count)
      if (c != 1) throw std::logic_error("an output element was never written");
  }
};

}  // namespace

FK_BIND_FAMILY(conv) {
  m.def("conv2d_implicit_gemm_reference", [](F64 x, F64 w, int64_t N, int64_t H, int64_t W,
                                             int64_t C, int64_t K, int64_t R, int64_t S,
                                             int64_t P, int64_t Q, int64_t sh, int64_t sw,
                                             int64_t dh, int64_t dw, int64_t pt, int64_t pl,
                                             int64_t groups) {
    const cm::Geom g{N, H, W, C, K, R, S, P, Q, sh, sw, dh, dw, pt, pl, groups};
    F64 y({N, P, Q, K});
    const double* px = x.data();
    const double* pw = w.data();
    double* py_ = y.mutable_data();
    for (int64_t row = 0; row < N * P * Q; ++row)
      for (int64_t k = 0; k < K; ++k) {
        double acc = 0.0;
        for (int64_t kk = 0; kk < cm::depth_size(g); ++kk) {
          const int64_t off = cm::a_offset(row, kk, cm::group_of(k, g), g);
          if (off < 0) continue;
          const cm::Pos3 t = cm::depth_to_rsc(kk, g);
          acc += px[off] * pw[cm::w_offset(t.a, t.b, t.c, k, g)];
        }
        const cm::Pos3 o = cm::row_to_npq(row, g);
        py_[cm::y_offset(o.a, o.b, o.c, k, g)] = acc;
      }
    return y;
  });

  m.def("conv2d_backward_input_reference", [](F64 dy, F64 w, int64_t N, int64_t H, int64_t W,
                                              int64_t C, int64_t K, int64_t R, int64_t S,
                                              int64_t P, int64_t Q, int64_t sh, int64_t sw,
                                              int64_t dh, int64_t dw, int64_t pt, int64_t pl,
                                              int64_t groups) {
    const cm::Geom g{N, H, W, C, K, R, S, P, Q, sh, sw, dh, dw, pt, pl, groups};
    F64 dx({N, H, W, C});
    const int64_t cg = C / groups, kg = K / groups;
    for (int64_t n = 0; n < N; ++n)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t wi = 0; wi < W; ++wi)
          for (int64_t c = 0; c < C; ++c) {
            double acc = 0.0;
            for (int64_t r = 0; r < R; ++r) {
              int64_t p;
              if (!cm::out_coord(h, r, sh, dh, pt, P, &p)) continue;
              for (int64_t s = 0; s < S; ++s) {
                int64_t q;
                if (!cm::out_coord(wi, s, sw, dw, pl, Q, &q)) continue;
                for (int64_t k = (c / cg) * kg; k < (c / cg + 1) * kg; ++k)
                  acc += dy.data()[cm::y_offset(n, p, q, k, g)] *
                         w.data()[cm::w_offset(r, s, c % cg, k, g)];
              }
            }
            dx.mutable_data()[cm::x_offset(n, h, wi, c, g)] = acc;
          }
    return dx;
  });

  m.def("pool_window", [](int64_t o, int64_t R, int64_t stride, int64_t pad, int64_t H) {
    int64_t t0, t1;
    cm::window(o, R, stride, pad, H, &t0, &t1);
    return py::make_tuple(t0, t1);
  });

  // ---- emulation of the tiled kernels of conv.cu (float64) ----
  m.def("conv2d_forward_tiled", [](F64 x, F64 w, py::object bias, std::vector<int64_t> geo) {
    const cm::TileGeom tg = geom_of(geo);
    const cm::Geom& g = tg.g;
    const double* px = checked(x, g.N * g.H * g.W * g.C, "x");
    const double* pw = checked(w, g.R * g.S * (g.C / g.groups) * g.K, "w");
    F64 b = bias.is_none() ? F64(std::vector<int64_t>{g.K}) : bias.cast<F64>();
    if (bias.is_none()) std::fill(b.mutable_data(), b.mutable_data() + g.K, 0.0);
    const double* pb = checked(b, g.K, "bias");
    F64 y({g.N, g.P, g.Q, g.K});
    Writer wr(y.mutable_data(), g.N * g.P * g.Q * g.K);
    emulate<cm::ConvFwdTile>(tg, g.groups, [&](int64_t z) { return cm::fwd_job(z, tg); },
                             px, x.size(), pw, w.size(),
                             [&](int64_t grp, int64_t i, int64_t j, double v) {
                               const int64_t off = cm::out_offset(cm::fwd_out(grp, tg), i, j);
                               wr.put(off, v + pb[off % g.K]);
                             });
    wr.all_written();
    return y;
  }, py::arg("x"), py::arg("w"), py::arg("bias"), py::arg("geometry"),
     "y of conv2d_forward (linear, float64) through the forward kernel's tile walk.");

  m.def("conv2d_backward_input_tiled", [](F64 dy, F64 w, std::vector<int64_t> geo) {
    const cm::TileGeom tg = geom_of(geo);
    const cm::Geom& g = tg.g;
    const double* pdy = checked(dy, g.N * g.P * g.Q * g.K, "dy");
    const double* pw = checked(w, g.R * g.S * (g.C / g.groups) * g.K, "w");
    F64 dx({g.N, g.H, g.W, g.C});
    Writer wr(dx.mutable_data(), g.N * g.H * g.W * g.C);
    emulate<cm::ConvDgradTile>(tg, cm::dgrad_jobs(tg),
                               [&](int64_t z) { return cm::dgrad_job(z, tg); },
                               pdy, dy.size(), pw, w.size(),
                               [&](int64_t z, int64_t i, int64_t j, double v) {
                                 wr.put(cm::dgrad_out_offset(i, j, cm::dgrad_rows(z, tg), tg), v);
                               });
    wr.all_written();
    return dx;
  }, py::arg("dy"), py::arg("w"), py::arg("geometry"),
     "dx of conv2d_backward_input (float64) through the input-gradient kernel's tile walk.");

  m.def("conv2d_backward_weight_tiled", [](F64 dy, F64 x, std::vector<int64_t> geo) {
    const cm::TileGeom tg = geom_of(geo);
    const cm::Geom& g = tg.g;
    const cm::GemmDims d = cm::wgrad_dims(tg);
    if (!cm::wgrad_fits_int32(g)) throw std::invalid_argument("N*P*Q too large for int32");
    const cm::SplitK sk = cm::wgrad_split(tg);
    const double* pdy = checked(dy, g.N * g.P * g.Q * g.K, "dy");
    const double* px = checked(x, g.N * g.H * g.W * g.C, "x");
    const int64_t ws_n = cm::wgrad_workspace_floats(tg);
    std::vector<double> ws(ws_n > 0 ? ws_n : 1);
    F64 dw({g.R, g.S, g.C / g.groups, g.K});
    Writer wr(dw.mutable_data(), d.M * g.K);
    Writer part(ws.data(), ws_n);
    const bool partial = sk.splits > 1;
    emulate<cm::ConvWgradTile>(tg, sk.splits * g.groups,
                               [&](int64_t z) { return cm::wgrad_job(z, sk, tg); },
                               px, x.size(), pdy, dy.size(),
                               [&](int64_t z, int64_t i, int64_t j, double v) {
                                 const int64_t off = cm::out_offset(
                                     cm::wgrad_out(z / g.groups, z % g.groups, partial, tg), i, j);
                                 if (partial) part.put(off, v);
                                 else wr.put(off, v);
                               });
    if (sk.splits > 1) {  // the second pass: splits summed in ascending order
      part.all_written();
      for (int64_t e = 0; e < d.M * g.K; ++e) {
        const int64_t i = e / g.K, k = e % g.K, grp = k / d.N, j = k % d.N;
        double s = 0.0;
        for (int64_t sp = 0; sp < sk.splits; ++sp)
          s += ws[cm::out_offset(cm::wgrad_out(sp, grp, true, tg), i, j)];
        wr.put(cm::out_offset(cm::wgrad_out(0, grp, false, tg), i, j), s);
      }
    }
    wr.all_written();
    return dw;
  }, py::arg("dy"), py::arg("x"), py::arg("geometry"),
     "dw of conv2d_backward_weight (float64) through the weight-gradient kernel's split "
     "tile walk and its second-pass sum.");

  m.def("conv_dgrad_jobs", [](std::vector<int64_t> geo) {
    const cm::TileGeom tg = geom_of(geo);
    py::list out;
    for (int64_t z = 0; z < cm::dgrad_jobs(tg); ++z) {
      const cm::DgradPhase ph = cm::dgrad_phase(z, tg);
      const cm::GemmDims d = cm::dgrad_phase_dims(ph, tg);
      out.append(py::make_tuple(ph.grp, ph.h.first, ph.w.first, d.M, d.N, d.D));
    }
    return out;
  }, py::arg("geometry"),
     "The input gradient's jobs: (group, first h, first w, M, N, depth) per (group, phase).");

  m.def("conv_wgrad_split", [](std::vector<int64_t> geo) {
    const cm::SplitK sk = cm::wgrad_split(geom_of(geo));
    return py::make_tuple(sk.splits, sk.chunk);
  }, py::arg("geometry"), "(splits, chunk) of the weight gradient's reduction over N*P*Q.");

  m.def("conv_tiles", [](const std::string& kind, F64 a, F64 b, std::vector<int64_t> geo,
                         int64_t row0, int64_t col0, int64_t z, int64_t k0, int64_t kend) {
    const cm::TileGeom tg = geom_of(geo);
    const cm::Geom& g = tg.g;
    const int64_t nx = g.N * g.H * g.W * g.C, ny = g.N * g.P * g.Q * g.K,
                  nw = g.R * g.S * (g.C / g.groups) * g.K;
    const bool fwd = kind == "forward", dgrad = kind == "backward_input";
    if (kind == "backward_weight" && !cm::wgrad_fits_int32(g))
      throw std::invalid_argument("N*P*Q too large for int32");
    checked(a, fwd ? nx : (dgrad ? ny : nx), "a");
    checked(b, fwd ? nw : (dgrad ? nw : ny), "b");
    Tiles tl;
    // (for the weight gradient, z is the group and [k0, kend) any chunk of N*P*Q)
    const int64_t jobs = dgrad ? cm::dgrad_jobs(tg) : g.groups;
    const cm::Job jb = fwd     ? cm::fwd_job(z, tg)
                       : dgrad ? cm::dgrad_job(z, tg)
                               : cm::Job{cm::wgrad_dims(tg).M, tg.kg, 0, g.N * g.P * g.Q};
    if (z < 0 || z >= jobs || row0 < 0 || col0 < 0 || k0 < 0 || k0 >= kend || kend > jb.kend)
      throw std::invalid_argument("conv_tiles: z, row0, col0 >= 0 within the grid and "
                                  "0 <= k0 < kend <= the job's depth are required");
    const double *pa = a.data(), *pb = b.data();
    const int64_t na = a.size(), nb = b.size();
    if (kind == "forward")
      fill(threads_of<cm::ConvFwdTile>(tg, row0, col0, z, kend), tg, pa, na, pb, nb, k0, tl);
    else if (kind == "backward_input")
      fill(threads_of<cm::ConvDgradTile>(tg, row0, col0, z, kend), tg, pa, na, pb, nb, k0, tl);
    else if (kind == "backward_weight")
      fill(threads_of<cm::ConvWgradTile>(tg, row0, col0, z, kend), tg, pa, na, pb, nb, k0, tl);
    else
      throw std::invalid_argument("kind must be forward, backward_input or backward_weight");
    F64 ta({tmath::kTileK, tmath::kTileM}), tb({tmath::kTileK, tmath::kTileN});
    std::copy(&tl.a[0][0], &tl.a[0][0] + tmath::kTileK * tmath::kTileM, ta.mutable_data());
    std::copy(&tl.b[0][0], &tl.b[0][0] + tmath::kTileK * tmath::kTileN, tb.mutable_data());
    return py::make_tuple(ta, tb);
  }, py::arg("kind"), py::arg("a"), py::arg("b"), py::arg("geometry"), py::arg("row0"),
     py::arg("col0"), py::arg("z"), py::arg("k0"), py::arg("kend"),
     "The (A, B) shared tiles (8 x 128 each, k-major) that one block's threads load at one "
     "k-step (a, b: the kernel's two inputs, flat).");
}
