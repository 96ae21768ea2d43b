"""The ops behind the core, activation, merging and reshaping layers: where, relu_general,
prelu, normalize, repeat. Forwards against NumPy float64 formulations, gradients against
central differences with random cotangents on the float64 reference device."""

import numpy as np
import pytest
from op_testing import fd_check

from fkeras.engine.keras_tensor import KerasTensor
from fkeras.ops import math as fmath
from fkeras.ops import normalization as fnorm
from fkeras.ops import reshape_ops as fshape


def _away_from(x, points, gap=1e-3):
    """x nudged so no entry is within `gap` of a kink (finite differences need smoothness)."""
    for p in points:
        close = np.abs(x - p) < gap
        x = np.where(close, p + 2 * gap, x)
    return x


def test_where_forward_shape_and_gradient():
    rng = np.random.default_rng(0)
    cond = rng.random((3, 4)) > 0.5
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((4,))
    np.testing.assert_allclose(fmath.where(cond, a.astype(np.float32), b.astype(np.float32)),
                               np.where(cond, a, b), rtol=1e-6)
    assert fmath.where(KerasTensor((None, 1)), KerasTensor((None, 4)), 0.0).shape == (None, 4)
    fd_check(lambda x, y: fmath.where(cond, x, y), [a, b], wrt=(0, 1), rng=rng)


@pytest.mark.parametrize("slope,max_value,threshold", [
    (0.0, 6.0, 0.0), (0.2, None, 0.5), (0.3, 1.5, 0.25), (0.0, None, 1.0)])
def test_relu_general_matches_keras_formula(slope, max_value, threshold):
    rng = np.random.default_rng(1)
    x = _away_from(rng.uniform(-3, 3, (4, 7)), [threshold, max_value or 0.0, 0.0])
    # Keras 3's piecewise definition, written directly.
    top = np.inf if max_value is None else max_value
    want = np.where(x >= top, top, np.where(x > threshold, x, slope * (x - threshold)))
    np.testing.assert_allclose(fmath.relu_general(x.astype(np.float32), slope, max_value,
                                                  threshold), want, rtol=1e-6, atol=1e-6)
    fd_check(lambda t: fmath.relu_general(t, slope, max_value, threshold), [x], wrt=(0,),
             rng=rng)


@pytest.mark.parametrize("alpha_shape", [(3, 5), (1, 5), (1, 1)])
def test_prelu_forward_and_gradients(alpha_shape):
    rng = np.random.default_rng(2)
    x = _away_from(rng.standard_normal((2, 3, 5)), [0.0])
    alpha = rng.uniform(0.05, 0.5, alpha_shape)
    np.testing.assert_allclose(fmath.prelu(x.astype(np.float32), alpha.astype(np.float32)),
                               np.where(x > 0, x, alpha * x), rtol=1e-6)
    fd_check(fmath.prelu, [x, alpha], wrt=(0, 1), rng=rng)


@pytest.mark.parametrize("axis", [-1, 1, (1, 2)])
def test_normalize_forward_and_gradient(axis):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, 4))
    want = x / np.sqrt(np.sum(x * x, axis=axis, keepdims=True))
    np.testing.assert_allclose(fnorm.normalize(x.astype(np.float32), axis=axis), want,
                               rtol=1e-5)
    fd_check(lambda t: fnorm.normalize(t, axis=axis), [x], wrt=(0,), rng=rng)


def test_normalize_epsilon_bound():
    x = np.zeros((2, 3), np.float32)
    x[1] = [1e-9, 0.0, 0.0]
    y = fnorm.normalize(x, epsilon=1e-7)
    np.testing.assert_allclose(y, x / 1e-7, rtol=1e-5)
    assert np.all(np.isfinite(y))
    rng = np.random.default_rng(4)
    fd_check(lambda t: fnorm.normalize(t, epsilon=1e-3), [rng.uniform(-1e-4, 1e-4, (2, 3))],
             wrt=(0,), rng=rng)


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_repeat_forward_shape_and_gradient(axis):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 3, 4))
    np.testing.assert_array_equal(fshape.repeat(x.astype(np.float32), 3, axis=axis),
                                  np.repeat(x.astype(np.float32), 3, axis=axis))
    sym = fshape.repeat(KerasTensor((None, 3, 4)), 3, axis=axis)
    expect = np.repeat(np.empty((2, 3, 4)), 3, axis=axis).shape
    assert sym.shape == ((None,) if axis is None else (None,) + expect[1:])
    fd_check(lambda t: fshape.repeat(t, 3, axis=axis), [x], wrt=(0,), rng=rng)


def test_repeat_rejects_non_int():
    with pytest.raises(ValueError, match="non-negative int `repeats`"):
        fshape.repeat(np.ones((2,)), 1.5)
