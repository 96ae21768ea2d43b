"""fkeras._C_cuda's layer-norm kernels against the CPU kernels of fkeras._C (needs a GPU).

Every output is pre-filled with NaN on the device, so a kernel that skips an element fails.
Run by tools/gpu_check.sh (`pytest -m cuda`); skipped without a GPU.
"""

import numpy as np
import pytest

pytestmark = pytest.mark.cuda

SIZES = [(1, 1), (7, 3), (33, 7), (1000, 33), (5, 1000), (3, 1024), (4, 1025), (2, 4099),
         (1000, 1), (0, 5), (3, 0), (64, 768)]


def _nan(gpu, *shape):
    return gpu.DeviceArray.from_host(np.full(shape, np.nan, np.float32))


def _up(gpu, a):
    return None if a is None else gpu.DeviceArray.from_host(np.ascontiguousarray(a, np.float32))


def _C():
    from fkeras import _C

    return _C


@pytest.mark.parametrize("rms", [False, True])
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("rows, D", SIZES)
def test_forward_matches_cpu(gpu, rows, D, affine, rms):
    rng = np.random.default_rng(rows * 13 + D)
    x = (rng.standard_normal((rows, D)) * 3 + 2).astype(np.float32)
    gamma = rng.standard_normal(D).astype(np.float32) if affine else None
    beta = rng.standard_normal(D).astype(np.float32) if affine else None
    cy, cm, cr = (np.full(s, np.nan, np.float32) for s in ((rows, D), (rows,), (rows,)))
    _C().layer_norm_forward(cy, cm, cr, x, gamma, beta, rows, D, 1e-3, rms)
    y, m, r = _nan(gpu, rows, D), _nan(gpu, rows), _nan(gpu, rows)
    gpu.layer_norm_forward(y, m, r, _up(gpu, x), _up(gpu, gamma), _up(gpu, beta), rows, D, 1e-3,
                           rms)
    np.testing.assert_allclose(m.to_host(), cm, rtol=1e-7, atol=0)
    np.testing.assert_allclose(r.to_host(), cr, rtol=2e-7, atol=0)
    np.testing.assert_allclose(y.to_host(), cy, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("rms", [False, True])
@pytest.mark.parametrize("rows, D", SIZES)
def test_backward_matches_cpu(gpu, rows, D, rms):
    rng = np.random.default_rng(rows + 5 * D)
    x = (rng.standard_normal((rows, D)) - 1).astype(np.float32)
    dy = rng.standard_normal((rows, D)).astype(np.float32)
    gamma = rng.standard_normal(D).astype(np.float32)
    cy, cm, cr = (np.full(s, np.nan, np.float32) for s in ((rows, D), (rows,), (rows,)))
    _C().layer_norm_forward(cy, cm, cr, x, gamma, None, rows, D, 1e-3, rms)
    cdx, cdg, cdb = (np.full(s, np.nan, np.float32) for s in ((rows, D), (D,), (D,)))
    _C().layer_norm_backward(cdx, cdg, cdb, dy, x, cm, cr, gamma, rows, D, rms)
    dx, dg, db = _nan(gpu, rows, D), _nan(gpu, D), _nan(gpu, D)
    args = (_up(gpu, dy), _up(gpu, x), _up(gpu, cm), _up(gpu, cr))
    gpu.layer_norm_backward(dx, dg, db, *args, _up(gpu, gamma), rows, D, rms)
    np.testing.assert_allclose(dx.to_host(), cdx, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(dg.to_host(), cdg, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(db.to_host(), cdb, rtol=1e-6, atol=1e-6)
    # Each output alone, and no gamma.
    dg2 = _nan(gpu, D)
    gpu.layer_norm_backward(None, dg2, None, *args, _up(gpu, gamma), rows, D, rms)
    np.testing.assert_allclose(dg2.to_host(), cdg, rtol=1e-6, atol=1e-6)
    cdx0 = np.full((rows, D), np.nan, np.float32)
    _C().layer_norm_backward(cdx0, None, None, dy, x, cm, cr, None, rows, D, rms)
    dx0 = _nan(gpu, rows, D)
    gpu.layer_norm_backward(dx0, None, None, *args, None, rows, D, rms)
    np.testing.assert_allclose(dx0.to_host(), cdx0, rtol=1e-5, atol=1e-6)


def test_results_are_bitwise_reproducible(gpu):
    rng = np.random.default_rng(1)
    rows, D = 3000, 700
    x, dy = (rng.standard_normal((rows, D)).astype(np.float32) for _ in range(2))
    outs = []
    for _ in range(2):
        y, m, r = _nan(gpu, rows, D), _nan(gpu, rows), _nan(gpu, rows)
        gpu.layer_norm_forward(y, m, r, _up(gpu, x), None, None, rows, D, 1e-5)
        dx, dg, db = _nan(gpu, rows, D), _nan(gpu, D), _nan(gpu, D)
        gpu.layer_norm_backward(dx, dg, db, _up(gpu, dy), _up(gpu, x), m, r, None, rows, D)
        outs.append([a.to_host() for a in (y, dx, dg, db)])
    for a, b in zip(*outs):
        np.testing.assert_array_equal(a, b)


def test_nan_rows_match_cpu(gpu):
    x = np.random.default_rng(2).standard_normal((4, 50)).astype(np.float32)
    x[1, 7] = np.nan
    x[2, 0] = np.inf
    cy, cm, cr = (np.full(s, np.nan, np.float32) for s in ((4, 50), (4,), (4,)))
    _C().layer_norm_forward(cy, cm, cr, x, None, None, 4, 50, 1e-3)
    y, m, r = _nan(gpu, 4, 50), _nan(gpu, 4), _nan(gpu, 4)
    gpu.layer_norm_forward(y, m, r, _up(gpu, x), None, None, 4, 50, 1e-3)
    np.testing.assert_array_equal(np.isnan(y.to_host()), np.isnan(cy))


def test_argument_errors(gpu):
    x = _up(gpu, np.zeros((2, 3)))
    y, m, r = _nan(gpu, 2, 3), _nan(gpu, 2), _nan(gpu, 2)
    with pytest.raises(ValueError, match="layer_norm_forward: argument 'gamma'"):
        gpu.layer_norm_forward(y, m, r, x, _nan(gpu, 4), None, 2, 3, 1e-3)
    with pytest.raises(ValueError, match="epsilon"):
        gpu.layer_norm_forward(y, m, r, x, None, None, 2, 3, -1.0)
    with pytest.raises(ValueError, match="must not be the input 'x'"):
        gpu.layer_norm_forward(x, m, r, x, None, None, 2, 3, 1e-3)
    with pytest.raises(ValueError, match="layer_norm_backward: argument 'rstd'"):
        gpu.layer_norm_backward(None, None, None, x, x, m, _nan(gpu, 3), None, 2, 3)
