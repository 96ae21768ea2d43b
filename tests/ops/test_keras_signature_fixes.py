"""The ops whose signatures were aligned with Keras 3.15: values against NumPy float64 and real
Keras (when installed), gradients by central differences, errors."""

import warnings

import numpy as np
import pytest

import fkeras
from fkeras import ops
from op_testing import fd_check

RNG = np.random.default_rng(12)


def _np(t):
    return np.asarray(t)


# ---------------------------------------------------------------- scatter_update reduction
SCATTER_CASES = [
    # (input shape, indices, updates shape)
    ((5,), [[1], [3], [1]], (3,)),
    ((4, 3), [[0, 1], [2, 2], [0, 1]], (3,)),
    ((4, 3), [[2], [0], [2]], (3, 3)),
]


def _scatter_reference(x, idx, upd, reduction):
    y = np.array(x, np.float64)
    for i, row in enumerate(np.asarray(idx)):
        key = tuple(row)
        if reduction is None:
            y[key] = upd[i]
        elif reduction == "add":
            y[key] = y[key] + upd[i]
        elif reduction == "mul":
            y[key] = y[key] * upd[i]
        elif reduction == "max":
            y[key] = np.maximum(y[key], upd[i])
        else:
            y[key] = np.minimum(y[key], upd[i])
    return y


@pytest.mark.parametrize("reduction", [None, "add", "mul", "max", "min"])
@pytest.mark.parametrize("shape,idx,ushape", SCATTER_CASES)
def test_scatter_update_reduction_values_and_gradients(reduction, shape, idx, ushape):
    x = RNG.standard_normal(shape)
    upd = RNG.standard_normal(ushape)
    got = _np(ops.scatter_update(x.astype(np.float32), idx, upd.astype(np.float32),
                                 reduction=reduction))
    np.testing.assert_allclose(got, _scatter_reference(x, idx, upd, reduction), rtol=1e-5,
                               atol=1e-6)
    wrt = [0] if reduction is None and len(idx) != len({tuple(r) for r in idx}) else [0, 2]
    fd_check(lambda a, i, u: ops.scatter_update(a, i, u, reduction=reduction),
             [x, np.asarray(idx), upd], wrt, RNG)


@pytest.mark.parametrize("reduction", [None, "add", "mul", "max", "min"])
def test_scatter_update_reduction_matches_keras(reduction):
    keras = pytest.importorskip("keras")
    x = RNG.standard_normal((4, 3)).astype(np.float32)
    idx = np.array([[0, 1], [2, 2], [0, 1]])
    upd = RNG.standard_normal(3).astype(np.float32)
    if reduction is None:  # duplicates: which write wins is backend-defined; use unique ones
        idx = idx[:2]
        upd = upd[:2]
    want = keras.ops.convert_to_numpy(keras.ops.scatter_update(x, idx, upd, reduction=reduction))
    np.testing.assert_allclose(_np(ops.scatter_update(x, idx, upd, reduction=reduction)), want,
                               rtol=1e-6)


def test_scatter_update_bad_reduction():
    with pytest.raises(ValueError, match="Unsupported reduction: mean"):
        ops.scatter_update(np.zeros(3), [[0]], [1.0], reduction="mean")


# ---------------------------------------------------------------- max / min initial
@pytest.mark.parametrize("name", ["max", "min"])
@pytest.mark.parametrize("axis,keepdims", [(None, False), (0, False), (1, True), ((0, 1), False)])
@pytest.mark.parametrize("initial", [None, 0.25, -0.25])
def test_max_min_initial(name, axis, keepdims, initial):
    x = RNG.standard_normal((3, 4))
    got = _np(getattr(ops, name)(x.astype(np.float32), axis=axis, keepdims=keepdims,
                                 initial=initial))
    want = getattr(np, name)(x, axis=axis, keepdims=keepdims,
                             **({} if initial is None else {"initial": initial}))
    np.testing.assert_allclose(got, want, rtol=1e-6)
    fd_check(lambda a: getattr(ops, name)(a, axis=axis, keepdims=keepdims, initial=initial),
             [x], [0], RNG)


@pytest.mark.parametrize("name", ["max", "min"])
def test_max_min_initial_matches_keras_and_empty(name):
    keras = pytest.importorskip("keras")
    x = np.array([[0.5, -2.0], [1.5, 0.1]], np.float32)
    for initial in (1.0, -1.0):
        want = keras.ops.convert_to_numpy(getattr(keras.ops, name)(x, axis=1, initial=initial))
        np.testing.assert_allclose(_np(getattr(ops, name)(x, axis=1, initial=initial)), want)
    empty = np.zeros((0,), np.float32)
    assert float(_np(getattr(ops, name)(empty, initial=3.0))) == 3.0
    with pytest.raises(ValueError, match=f"Cannot compute the {name} of an empty tensor"):
        getattr(ops, name)(empty)


def test_max_initial_symbolic_shape():
    t = fkeras.KerasTensor((None, 3, 4))
    assert ops.max(t, axis=-1, initial=0.0).shape == (None, 3)


# ---------------------------------------------------------------- the nan statistics
@pytest.mark.parametrize("axis,keepdims", [(None, False), (0, True), (1, False)])
def test_nan_statistics_keyword_arguments(axis, keepdims):
    # float32 interpolation between order statistics (as quantile, and Keras): rtol 1e-5
    x = RNG.standard_normal((4, 5))
    x[1, 2] = x[3, 0] = np.nan
    np.testing.assert_allclose(_np(ops.nanmedian(x, axis=axis, keepdims=keepdims)),
                               np.nanmedian(x, axis=axis, keepdims=keepdims), rtol=1e-5)
    for method in ("linear", "nearest", "lower"):
        np.testing.assert_allclose(
            _np(ops.nanquantile(x, [0.2, 0.9], axis=axis, method=method, keepdims=keepdims)),
            np.nanquantile(x, [0.2, 0.9], axis=axis, method=method, keepdims=keepdims),
            rtol=1e-5)
        np.testing.assert_allclose(
            _np(ops.nanpercentile(x, 40, axis=axis, method=method, keepdims=keepdims)),
            np.nanpercentile(x, 40, axis=axis, method=method, keepdims=keepdims), rtol=1e-5)


# ---------------------------------------------------------------- pinv, rms, layer norm
def test_pinv_default_rcond_matches_keras():
    keras = pytest.importorskip("keras")
    x = np.array([[1.0, 2.0], [2.0, 4.0 + 1e-7], [0.0, 1.0]], np.float32)
    want = keras.ops.convert_to_numpy(keras.ops.pinv(x))
    np.testing.assert_allclose(_np(ops.pinv(x)), want, rtol=1e-4, atol=1e-5)


def test_pinv_default_rcond_cuts_float32_noise():
    # Singular values below max(M, N) * eps32 of the largest are dropped.
    u = np.linalg.qr(RNG.standard_normal((3, 3)))[0]
    x = u @ np.diag([1.0, 1e-9, 0.0]) @ u.T
    np.testing.assert_allclose(_np(ops.pinv(x)), np.linalg.pinv(x, rcond=3e-7), atol=1e-5)


def test_rms_normalization_scale_none():
    x = RNG.standard_normal((2, 5))
    want = x / np.sqrt(np.mean(x ** 2, -1, keepdims=True) + 1e-7)
    np.testing.assert_allclose(_np(ops.rms_normalization(x.astype(np.float32))), want,
                               rtol=1e-5)
    scale = RNG.standard_normal(5)
    np.testing.assert_allclose(_np(ops.rms_normalization(x, scale=scale)), want * scale,
                               rtol=1e-5)


def test_layer_normalization_kwargs():
    x = RNG.standard_normal((2, 5)).astype(np.float32)
    with pytest.warns(UserWarning, match="rms_scaling=True"):
        ops.layer_normalization(x, rms_scaling=True)
    with pytest.raises(TypeError, match="unexpected keyword arguments"):
        ops.layer_normalization(x, center=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        layer = fkeras.layers.LayerNormalization(rms_scaling=False)
        layer(x)


# ---------------------------------------------------------------- bitwise (x, y) and shifts
@pytest.mark.parametrize("name,ref", [("bitwise_and", np.bitwise_and),
                                      ("bitwise_or", np.bitwise_or),
                                      ("bitwise_xor", np.bitwise_xor),
                                      ("left_shift", np.left_shift),
                                      ("right_shift", np.right_shift),
                                      ("bitwise_left_shift", np.left_shift),
                                      ("bitwise_right_shift", np.right_shift)])
def test_bitwise_keyword_names(name, ref):
    x = np.array([[1, 6, 12]], np.int32)
    y = np.array([[3], [2]], np.int32)
    np.testing.assert_array_equal(_np(getattr(ops, name)(x=x, y=y)), ref(x, y))


def test_stop_gradient_keyword_variable():
    x = np.array([1.0, 2.0])
    with fkeras.GradientTape() as tape:
        v = fkeras.Variable(x)
        y = ops.sum(ops.multiply(ops.stop_gradient(variable=v), v))
    np.testing.assert_allclose(_np(tape.gradient(y, v)), x)
