"""fkeras._C_cuda's batch-norm kernels against the CPU kernels of fkeras._C (needs a GPU).

Every output is pre-filled with NaN on the device, so a kernel that skips an element fails.
Run by tools/gpu_check.sh; skipped without a GPU.
"""

import numpy as np
import pytest

pytestmark = pytest.mark.cuda

SHAPES = [(1, 1, 1), (7, 3, 1), (33, 7, 1), (1000, 33, 1), (2, 5, 33), (3, 33, 17), (5, 2, 1000),
          (1, 1000, 7), (64, 3, 1024)]


def _nan_device(gpu, *shape):
    return gpu.DeviceArray.from_host(np.full(shape, np.nan, np.float32))


def _up(gpu, a):
    return None if a is None else gpu.DeviceArray.from_host(np.ascontiguousarray(a, np.float32))


def _cpu():
    from fkeras import _C

    return _C


@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("outer, C, inner", SHAPES)
def test_forward_train_and_infer_match_cpu(gpu, outer, C, inner, affine):
    rng = np.random.default_rng(outer * 7 + C * 3 + inner)
    x = (rng.standard_normal((outer, C, inner)) * 3 + 1).astype(np.float32)
    gamma = rng.standard_normal(C).astype(np.float32) if affine else None
    beta = rng.standard_normal(C).astype(np.float32) if affine else None
    eps = 1e-3
    cy, cv, cm, ci = (np.full(s, np.nan, np.float32) for s in (x.shape, (C,), (C,), (C,)))
    _cpu().batchnorm_forward_train(cy, cv, cm, ci, x, gamma, beta, outer, C, inner, eps)
    outs = [_nan_device(gpu, *x.shape)] + [_nan_device(gpu, C) for _ in range(3)]
    gpu.batchnorm_forward_train(*outs, _up(gpu, x), _up(gpu, gamma), _up(gpu, beta), outer, C,
                                inner, eps)
    y, v, m, i = (o.to_host() for o in outs)
    np.testing.assert_allclose(m, cm, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(v, cv, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(i, ci, rtol=1e-6)
    np.testing.assert_allclose(y, cy, rtol=1e-5, atol=1e-5)
    yi = _nan_device(gpu, *x.shape)
    gpu.batchnorm_forward_infer(yi, _up(gpu, x), _up(gpu, cm), _up(gpu, cv), _up(gpu, gamma),
                                _up(gpu, beta), outer, C, inner, eps)
    cyi = np.full(x.shape, np.nan, np.float32)
    _cpu().batchnorm_forward_infer(cyi, x, cm, cv, gamma, beta, outer, C, inner, eps)
    np.testing.assert_allclose(yi.to_host(), cyi, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("outer, C, inner", SHAPES)
def test_backward_matches_cpu(gpu, outer, C, inner):
    rng = np.random.default_rng(outer + C + inner)
    x = (rng.standard_normal((outer, C, inner)) + 0.5).astype(np.float32)
    dy = rng.standard_normal(x.shape).astype(np.float32)
    gamma = rng.standard_normal(C).astype(np.float32)
    cy, cv, cm, ci = (np.full(s, np.nan, np.float32) for s in (x.shape, (C,), (C,), (C,)))
    _cpu().batchnorm_forward_train(cy, cv, cm, ci, x, gamma, None, outer, C, inner, 1e-3)
    cdx, cdg, cdb = (np.full(s, np.nan, np.float32) for s in (x.shape, (C,), (C,)))
    _cpu().batchnorm_backward(cdx, cdg, cdb, dy, x, cm, ci, gamma, outer, C, inner)
    dx, dg, db = _nan_device(gpu, *x.shape), _nan_device(gpu, C), _nan_device(gpu, C)
    gpu.batchnorm_backward(dx, dg, db, _up(gpu, dy), _up(gpu, x), _up(gpu, cm), _up(gpu, ci),
                           _up(gpu, gamma), outer, C, inner)
    np.testing.assert_allclose(dg.to_host(), cdg, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(db.to_host(), cdb, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(dx.to_host(), cdx, rtol=1e-4, atol=1e-5)
    # Optional outputs: only dgamma.
    dg2 = _nan_device(gpu, C)
    gpu.batchnorm_backward(None, dg2, None, _up(gpu, dy), _up(gpu, x), _up(gpu, cm), _up(gpu, ci),
                           None, outer, C, inner)
    np.testing.assert_allclose(dg2.to_host(), cdg, rtol=1e-5, atol=1e-5)


def test_results_are_bitwise_reproducible(gpu):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4096, 8, 33)).astype(np.float32)
    xs = _up(gpu, x)
    runs = []
    for _ in range(3):
        outs = [_nan_device(gpu, *x.shape)] + [_nan_device(gpu, 8) for _ in range(3)]
        gpu.batchnorm_forward_train(*outs, xs, None, None, 4096, 8, 33, 1e-3)
        runs.append([o.to_host() for o in outs])
    for r in runs[1:]:
        for a, b in zip(runs[0], r):
            np.testing.assert_array_equal(a, b)


def test_badly_scaled_channel(gpu):
    rng = np.random.default_rng(5)
    x = (1e4 + 1e-2 * rng.standard_normal((100000, 2, 1))).astype(np.float32)
    outs = [_nan_device(gpu, *x.shape)] + [_nan_device(gpu, 2) for _ in range(3)]
    gpu.batchnorm_forward_train(*outs, _up(gpu, x), None, None, 100000, 2, 1, 0.0)
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(outs[1].to_host(), x64.var(axis=(0, 2)), rtol=1e-5)
    assert abs(float(outs[0].to_host().std()) - 1.0) < 1e-3


@pytest.mark.parametrize("special", [np.nan, np.inf, -np.inf])
def test_special_values_as_cpu(gpu, special):
    rng = np.random.default_rng(2)
    outer, C, inner = 33, 3, 7
    x = rng.standard_normal((outer, C, inner)).astype(np.float32)
    x[5, 1, 3] = special
    cy, cv, cm, ci = (np.full(s, np.nan, np.float32) for s in (x.shape, (C,), (C,), (C,)))
    with np.errstate(all="ignore"):
        _cpu().batchnorm_forward_train(cy, cv, cm, ci, x, None, None, outer, C, inner, 1e-3)
    outs = [_nan_device(gpu, *x.shape)] + [_nan_device(gpu, C) for _ in range(3)]
    gpu.batchnorm_forward_train(*outs, _up(gpu, x), None, None, outer, C, inner, 1e-3)
    for got, ref in zip((o.to_host() for o in outs), (cy, cv, cm, ci)):
        np.testing.assert_array_equal(np.isnan(got), np.isnan(ref))
        np.testing.assert_array_equal(got[np.isinf(ref)], ref[np.isinf(ref)])


def test_empty_batch(gpu):
    outs = [_nan_device(gpu, 0, 4, 1)] + [_nan_device(gpu, 4) for _ in range(3)]
    gpu.batchnorm_forward_train(*outs, _up(gpu, np.zeros((0, 4, 1))), None, None, 0, 4, 1, 1e-3)
    np.testing.assert_array_equal(outs[2].to_host(), 0)
    np.testing.assert_array_equal(outs[1].to_host(), 0)
    np.testing.assert_allclose(outs[3].to_host(), 1 / np.sqrt(1e-3), rtol=1e-6)


def test_bad_arguments_raise_before_launch(gpu):
    x = _up(gpu, np.zeros((2, 3, 1)))
    outs = [_nan_device(gpu, 2, 3, 1)] + [_nan_device(gpu, 3) for _ in range(3)]
    with pytest.raises(ValueError, match="batchnorm_forward_train: argument 'mean' must have 3"):
        gpu.batchnorm_forward_train(outs[0], outs[1], _nan_device(gpu, 4), outs[3], x, None,
                                    None, 2, 3, 1, 1e-3)
    with pytest.raises(ValueError, match="epsilon"):
        gpu.batchnorm_forward_train(*outs, x, None, None, 2, 3, 1, -1.0)
    with pytest.raises(ValueError, match="output 'y' must not be the input 'x'"):
        gpu.batchnorm_forward_train(x, *outs[1:], x, None, None, 2, 3, 1, 1e-3)
