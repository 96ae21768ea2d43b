// layernorm.cpp: layer normalization over the last axis, rows of length D (kernels.h).
//
// Layouts: x, y, dy, dx (rows, D) row-major float32; mean, rstd (rows); gamma, beta, dgamma,
// dbeta (D). Every output is overwritten. Built from the batch-norm block kernels (one row is
// a batch-norm "plane" of one run), so the vector code and its AVX2 / AVX-512 / scalar dispatch
// are shared with cpp/batchnorm/.
//
// Forward, per row (all sums in float64):
//   1. m = sum(x) / D, m_f = float(m);
//   2. s1 = sum(x - m_f), s2 = sum((x - m_f)^2): the corrected two-pass variance
//      var = s2 / D - (s1 / D)^2 (m_f is within rounding of the mean, so nothing cancels);
//      the exact mean is m_f + s1 / D;
//   3. z = (x - m_f) * rstd - (s1 / D) * rstd  (rms_scaling: z = x * rstd, uncentred), then
//      y = z * gamma + beta (either optional).
//   Saves mean = m_f and rstd = float(1 / sqrt(var + epsilon)).
// Backward, per row, with d = x - m_f and dz = dy * gamma (dy without gamma):
//   sums S_dz, S_d, S_dzd in float64 (md = S_d / D removes the rounding of m_f), then
//   dx = rstd * (dz - mean(dz) - xhat * mean(dz * xhat))   (layer norm), or
//   dx = rstd * dz - xc * rstd^3 * mean(dz * x)            (rms_scaling: var still centred),
//   both folded into dx = rstd * (dz + b * d + c).
//   dgamma = sum_rows dy * z, dbeta = sum_rows dy: rows are cut into blocks whose size depends
//   on (rows, D) only; each block writes its own float64 partial sums, merged in block order,
//   so the results do not depend on the thread count.
// An empty row (D == 0) writes mean 0 and rstd 1 / sqrt(epsilon); zero rows give zero dgamma,
// dbeta. NaN / inf in a row make that row's outputs NaN (as the float64 formula does).
#include <algorithm>
#include <cmath>
#include <vector>

#include "../batchnorm/batchnorm_isa.h"
#include "fkeras/kernels.h"
#include "fkeras/runtime.h"

namespace fk {
namespace {

const bn::BlockKernels& kernels() {
  switch (cpu_isa()) {
    case Isa::kAvx512: return bn::kAvx512Kernels;
    case Isa::kAvx2: return bn::kAvx2Kernels;
    default: return bn::kScalarKernels;
  }
}

constexpr int64_t kBlockElems = 8192;  // elements per row block: 32 KiB of x
constexpr int64_t kMaxBlocks = 256;    // bounds the backward's partial sums (2 * D doubles each)

int64_t block_rows(int64_t rows, int64_t D) {
  const int64_t r = std::max<int64_t>(1, kBlockElems / std::max<int64_t>(D, 1));
  return std::max(r, (rows + kMaxBlocks - 1) / kMaxBlocks);
}

struct RowStats {
  float m_f;     // the saved mean
  double md;     // exact mean - m_f
  double rstd;
};

RowStats row_stats(const bn::BlockKernels& K, const float* x, int64_t D, double epsilon) {
  double s[2];
  K.plane_stats(x, 1, D, D, 0.f, s);
  const float m_f = static_cast<float>(s[0] / static_cast<double>(D));
  K.plane_stats(x, 1, D, D, m_f, s);
  const double md = s[0] / static_cast<double>(D);
  double var = s[1] / static_cast<double>(D) - md * md;
  if (var < 0.0) var = 0.0;  // rounding only; NaN passes through
  return {m_f, md, 1.0 / std::sqrt(var + epsilon)};
}

}  // namespace

void layer_norm_forward(float* y, float* mean, float* rstd, const float* x, const float* gamma,
                        const float* beta, int64_t rows, int64_t D, double epsilon,
                        bool rms_scaling) {
  if (D == 0) {
    for (int64_t r = 0; r < rows; ++r) {
      mean[r] = 0.f;
      rstd[r] = static_cast<float>(1.0 / std::sqrt(epsilon));
    }
    return;
  }
  const bn::BlockKernels& K = kernels();
  const bool affine = gamma != nullptr || beta != nullptr;
  std::vector<float> zeros(affine ? D : 0, 0.f), ones;
  if (affine && gamma == nullptr) ones.assign(D, 1.f);
  const float* g = gamma != nullptr ? gamma : ones.data();
  const float* b = beta != nullptr ? beta : zeros.data();
  const int64_t R = block_rows(rows, D);
  parallel_for((rows + R - 1) / R, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t r = b0 * R; r < std::min(rows, b1 * R); ++r) {
      const float* px = x + r * D;
      float* py = y + r * D;
      const RowStats st = row_stats(K, px, D, epsilon);
      const float s = static_cast<float>(st.rstd);
      if (rms_scaling)
        K.plane_forward(py, px, 1, D, D, 0.f, s, 0.f);
      else
        K.plane_forward(py, px, 1, D, D, st.m_f, s, static_cast<float>(-st.md * st.rstd));
      if (affine) K.rows_forward(py, py, 1, D, D, zeros.data(), g, b);
      mean[r] = st.m_f;
      rstd[r] = s;
    }
  });
}

void layer_norm_backward(float* dx, float* dgamma, float* dbeta, const float* dy, const float* x,
                         const float* mean, const float* rstd, const float* gamma, int64_t rows,
                         int64_t D, bool rms_scaling) {
  const bool want_params = dgamma != nullptr || dbeta != nullptr;
  if (D == 0) return;
  const bn::BlockKernels& K = kernels();
  const int64_t R = block_rows(rows, D);
  const int64_t nblocks = (rows + R - 1) / R;
  // Per block: dbeta partial (D), dgamma partial (D), a spare (D) for the unused sum.
  std::vector<double> partial(want_params ? nblocks * 3 * D : 0, 0.0);
  const std::vector<float> zeros(D, 0.f);
  const double n = static_cast<double>(D);
  parallel_for(nblocks, 1, [&](int64_t b0, int64_t b1) {
    std::vector<float> dz(gamma != nullptr ? D : 0);
    std::vector<float> z(want_params ? R * D : 0);
    for (int64_t blk = b0; blk < b1; ++blk) {
      const int64_t r0 = blk * R, nr = std::min(R, rows - r0);
      for (int64_t i = 0; i < nr; ++i) {
        const int64_t r = r0 + i;
        const float* px = x + r * D;
        const float* pdy = dy + r * D;
        const float m_f = mean[r];
        const double rs = static_cast<double>(rstd[r]);
        double s[3];
        const float* pdz = pdy;
        if (gamma != nullptr) {
          K.rows_forward(dz.data(), pdy, 1, D, D, zeros.data(), gamma, zeros.data());
          pdz = dz.data();
        }
        K.plane_reduce(pdz, px, 1, D, D, m_f, s);  // S_dz, S_d, S_dzd
        const double md = s[1] / n;
        if (dx != nullptr) {
          const double sum_dzx = rms_scaling ? s[2] + static_cast<double>(m_f) * s[0]
                                             : s[2] - md * s[0];
          const double k = rs * rs * sum_dzx / n;
          const double c = rms_scaling ? k * md : k * md - s[0] / n;
          K.plane_backward(dx + r * D, pdz, px, 1, D, D, m_f, static_cast<float>(rs),
                           static_cast<float>(-k), static_cast<float>(c));
        }
        if (want_params) {
          float* pz = z.data() + i * D;
          if (rms_scaling)
            K.plane_forward(pz, px, 1, D, D, 0.f, static_cast<float>(rs), 0.f);
          else
            K.plane_forward(pz, px, 1, D, D, m_f, static_cast<float>(rs),
                            static_cast<float>(-md * rs));
        }
      }
      if (want_params) {
        double* p = partial.data() + blk * 3 * D;
        K.rows_reduce(dy + r0 * D, z.data(), nr, D, D, zeros.data(), p, p + 2 * D, p + D);
      }
    }
  });
  if (!want_params) return;
  for (int64_t j = 0; j < D; ++j) {
    double sb = 0.0, sg = 0.0;
    for (int64_t blk = 0; blk < nblocks; ++blk) {
      sb += partial[blk * 3 * D + j];
      sg += partial[blk * 3 * D + D + j];
    }
    if (dbeta != nullptr) dbeta[j] = static_cast<float>(sb);
    if (dgamma != nullptr) dgamma[j] = static_cast<float>(sg);
  }
}

}  // namespace fk
