"""The math of the CUDA layer-norm kernels, run on the CPU (no GPU needed).

`fkeras._C_cuda_host` compiles `fk_cuda/layernorm_math.h` (the code the GPU kernels call) and
emulates both kernels with the GPU's reduction structure (lanes per row, halving tree, column
chunks). Compared with the CPU kernels `fkeras._C.layer_norm_*`, the float64 reference and
finite differences.
"""

import numpy as np
import pytest

from fkeras.backend.reference import layernorm as ref

H = pytest.importorskip("fkeras._C_cuda_host")
C = pytest.importorskip("fkeras._C")

SIZES = [(1, 1), (7, 3), (33, 7), (5, 33), (3, 1000), (2, 1024), (4, 1025), (3, 4099),
         (1000, 8), (0, 5), (3, 0)]


def _cpu_forward(x, gamma, beta, rows, D, eps, rms):
    y, m, r = (np.full(s, np.nan, np.float32) for s in ((rows, D), (rows,), (rows,)))
    C.layer_norm_forward(y, m, r, x, gamma, beta, rows, D, eps, rms)
    return y, m, r


def _cpu_backward(dy, x, m, r, gamma, rows, D, rms):
    dx, dg, db = (np.full(s, np.nan, np.float32) for s in ((rows, D), (D,), (D,)))
    C.layer_norm_backward(dx, dg, db, dy, x, m, r, gamma, rows, D, rms)
    return dx, dg, db


def _data(rows, D, seed, offset=0.0):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((rows, D)) * 2 + offset).astype(np.float32)
    gamma = rng.standard_normal(D).astype(np.float32)
    beta = rng.standard_normal(D).astype(np.float32)
    dy = rng.standard_normal((rows, D)).astype(np.float32)
    return x, gamma, beta, dy


def test_threads_per_row_and_chunks():
    assert H.ln_threads_per_row(1) == 32 and H.ln_threads_per_row(1024) == 32
    assert H.ln_threads_per_row(1025) == 256
    for rows, D in [(0, 5), (1, 1), (33, 7), (100000, 3), (10, 100000)]:
        k = H.ln_col_chunks(rows, D)
        n = H.ln_col_chunk_len(rows, k)
        assert 1 <= k <= 65535 and k * n >= rows and (rows == 0 or n >= 1)


@pytest.mark.parametrize("rms", [False, True])
@pytest.mark.parametrize("affine", ["both", "gamma", "beta", "none"])
@pytest.mark.parametrize("rows, D", SIZES)
def test_forward_matches_cpu_kernel_and_float64(rows, D, affine, rms):
    x, gamma, beta, _ = _data(rows, D, rows * 31 + D, offset=3.0)
    g = gamma if affine in ("both", "gamma") else None
    b = beta if affine in ("both", "beta") else None
    eps = 1e-3
    y, m, r = H.ln_forward_emulated(x, g, b, rows, D, eps, rms)
    cy, cm, cr = _cpu_forward(x, g, b, rows, D, eps, rms)
    # Same float64 sums up to their order, same float32 roundings: equal to the last bit or two.
    np.testing.assert_allclose(m, cm, rtol=1e-7, atol=0)
    np.testing.assert_allclose(r, cr, rtol=2e-7, atol=0)
    np.testing.assert_allclose(y.reshape(rows, D), cy, rtol=1e-6, atol=1e-6)
    wy, wm, wr = (np.zeros(s) for s in ((rows, D), (rows,), (rows,)))
    ref.layer_norm_forward(wy, wm, wr, x, g, b, rows, D, eps, rms)
    np.testing.assert_allclose(m, wm, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(r, wr, rtol=1e-6)
    np.testing.assert_allclose(y.reshape(rows, D), wy, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("rms", [False, True])
@pytest.mark.parametrize("with_gamma", [True, False])
@pytest.mark.parametrize("rows, D", SIZES)
def test_backward_matches_cpu_kernel_and_float64(rows, D, with_gamma, rms):
    x, gamma, _, dy = _data(rows, D, rows * 7 + D + 1, offset=-2.0)
    g = gamma if with_gamma else None
    _, cm, cr = _cpu_forward(x, None, None, rows, D, 1e-3, rms)
    dx, dg, db = H.ln_backward_emulated(dy, x, cm, cr, g, rows, D, rms)
    cdx, cdg, cdb = _cpu_backward(dy, x, cm, cr, g, rows, D, rms)
    np.testing.assert_allclose(dx.reshape(rows, D), cdx, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(dg, cdg, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(db, cdb, rtol=1e-6, atol=1e-6)
    wdx, wdg, wdb = np.zeros((rows, D)), np.zeros(D), np.zeros(D)
    ref.layer_norm_backward(wdx, wdg, wdb, dy, x, cm, cr, g, rows, D, rms)
    np.testing.assert_allclose(dx.reshape(rows, D), wdx, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(dg, wdg, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(db, wdb, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("rms", [False, True])
def test_backward_is_the_vjp_of_the_forward(rms):
    """Central differences of sum(dy * y) in float64 through the emulated forward."""
    rows, D, eps = 3, 37, 1e-3
    x, gamma, beta, dy = _data(rows, D, 5)
    _, m, r = H.ln_forward_emulated(x, gamma, beta, rows, D, eps, rms)
    dx, dg, _ = H.ln_backward_emulated(dy, x, m, r, gamma, rows, D, rms)

    def loss(xx, gg):
        y = np.zeros((rows, D))
        ref.layer_norm_forward(y, np.zeros(rows), np.zeros(rows), xx, gg, beta, rows, D, eps,
                               rms)
        return float((y * dy).sum())

    x64, g64, h = x.astype(np.float64), gamma.astype(np.float64), 1e-5
    for i, j in [(0, 0), (1, 17), (2, 36)]:
        e = np.zeros_like(x64)
        e[i, j] = h
        fd = (loss(x64 + e, g64) - loss(x64 - e, g64)) / (2 * h)
        assert abs(dx.reshape(rows, D)[i, j] - fd) <= 1e-3 * max(1.0, abs(fd))
    for j in (0, 20):
        e = np.zeros_like(g64)
        e[j] = h
        fd = (loss(x64, g64 + e) - loss(x64, g64 - e)) / (2 * h)
        assert abs(dg[j] - fd) <= 1e-3 * max(1.0, abs(fd))


def test_large_offset_keeps_precision():
    """Mean 1e4, std 1e-2: the corrected two-pass variance keeps ~1e-3 relative accuracy."""
    rng = np.random.default_rng(0)
    x = (1e4 + 1e-2 * rng.standard_normal((4, 300))).astype(np.float32)
    _, _, r = H.ln_forward_emulated(x, None, None, 4, 300, 0.0)
    want = 1.0 / x.astype(np.float64).std(axis=1)
    np.testing.assert_allclose(r, want, rtol=1e-6)


def test_nan_and_inf_rows_match_cpu():
    x, gamma, beta, dy = _data(4, 40, 9)
    x[1, 3] = np.nan
    x[2, 0] = np.inf
    y, m, r = H.ln_forward_emulated(x, gamma, beta, 4, 40, 1e-3)
    cy, cm, cr = _cpu_forward(x, gamma, beta, 4, 40, 1e-3, False)
    np.testing.assert_array_equal(np.isnan(y.reshape(4, 40)), np.isnan(cy))
    np.testing.assert_array_equal(np.isnan(r), np.isnan(cr))
    assert np.isnan(y.reshape(4, 40)[1:3]).all() and not np.isnan(y.reshape(4, 40)[[0, 3]]).any()
    dx, dg, db = H.ln_backward_emulated(dy, x, cm, cr, gamma, 4, 40)
    cdx, cdg, cdb = _cpu_backward(dy, x, cm, cr, gamma, 4, 40, False)
    np.testing.assert_array_equal(np.isnan(dx.reshape(4, 40)), np.isnan(cdx))
    np.testing.assert_array_equal(np.isnan(dg), np.isnan(cdg))


def test_argument_errors_name_the_function():
    with pytest.raises(ValueError, match="ln_forward_emulated: argument 'gamma'"):
        H.ln_forward_emulated(np.zeros((2, 3), np.float32), np.zeros(4, np.float32), None, 2, 3,
                              1e-3)
