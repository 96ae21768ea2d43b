"""Activation ops: values vs NumPy float64 formulas and Keras 3, symbolic shapes, gradients."""

import numpy as np
import pytest

from fkeras import ops
from fkeras.engine.keras_tensor import KerasTensor
from op_testing import fd_check


def _sig(x):
    return 1 / (1 + np.exp(-x))


# name: (fkeras call, NumPy float64 reference, keras call or None)
CASES = {
    "relu6": (ops.relu6, lambda x: np.clip(x, 0, 6)),
    "celu": (lambda x: ops.celu(x, alpha=0.7),
             lambda x: np.maximum(x, 0) + 0.7 * (np.exp(np.minimum(x, 0) / 0.7) - 1)),
    "hard_silu": (ops.hard_silu, lambda x: x * np.clip(x + 3, 0, 6) / 6),
    "hard_tanh": (ops.hard_tanh, lambda x: np.clip(x, -1, 1)),
    "log_sigmoid": (ops.log_sigmoid, lambda x: np.log(_sig(x))),
    "squareplus": (lambda x: ops.squareplus(x, 2), lambda x: (x + np.sqrt(x * x + 2)) / 2),
    "sparse_plus": (ops.sparse_plus,
                    lambda x: np.where(x <= -1, 0, np.where(x >= 1, x, (x + 1) ** 2 / 4))),
    "sparse_sigmoid": (ops.sparse_sigmoid, lambda x: np.clip((x + 1) / 2, 0, 1)),
    "soft_shrink": (lambda x: ops.soft_shrink(x, 0.3),
                    lambda x: np.sign(x) * np.maximum(np.abs(x) - 0.3, 0)),
    "hard_shrink": (lambda x: ops.hard_shrink(x, 0.3), lambda x: np.where(np.abs(x) > 0.3, x, 0)),
    "tanh_shrink": (ops.tanh_shrink, lambda x: x - np.tanh(x)),
    "threshold": (lambda x: ops.threshold(x, 0.2, -1.0), lambda x: np.where(x > 0.2, x, -1.0)),
    "glu": (ops.glu, lambda x: x[..., :3] * _sig(x[..., 3:])),
    "sparsemax": (ops.sparsemax, None),
}
KERAS_CALLS = {
    "celu": lambda k, x: k.ops.celu(x, alpha=0.7), "squareplus": lambda k, x: k.ops.squareplus(x, 2),
    "soft_shrink": lambda k, x: k.ops.soft_shrink(x, 0.3),
    "hard_shrink": lambda k, x: k.ops.hard_shrink(x, 0.3),
    "threshold": lambda k, x: k.ops.threshold(x, 0.2, -1.0),
}


def _input(seed=0):
    x = np.random.default_rng(seed).uniform(-4, 4, (4, 6))
    # keep finite-difference probes away from the kinks
    return np.where(np.min(np.abs(x[..., None] - np.array([-3, -1, 0, 0.2, 0.3, -0.3, 1, 3, 6])),
                           -1) < 0.05, x + 0.1, x)


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_shapes_gradients(name):
    fn, ref = CASES[name]
    x = _input()
    y = fn(x.astype(np.float32))
    if ref is not None:
        np.testing.assert_allclose(np.asarray(y), ref(x), rtol=1e-5, atol=1e-5)
    expect = (None, 3) if name == "glu" else (None, 6)
    assert fn(KerasTensor((None, 6))).shape == expect
    if name != "sparsemax":
        fd_check(fn, [x], [0], np.random.default_rng(1))


@pytest.mark.parametrize("name", sorted(set(CASES) - {"sparsemax"}))
def test_matches_keras(name):
    keras = pytest.importorskip("keras")
    x = _input(2).astype(np.float32)
    call = KERAS_CALLS.get(name, lambda k, v: getattr(k.ops, name)(v))
    np.testing.assert_allclose(np.asarray(CASES[name][0](x)),
                               keras.ops.convert_to_numpy(call(keras, x)), rtol=1e-5, atol=1e-5)


def test_sparsemax_projects_onto_the_simplex_and_differentiates():
    x = np.array([[0.1, 1.2, -0.5, 1.0], [3.0, 0.0, 0.1, 0.2]])
    y = np.asarray(ops.sparsemax(x))
    np.testing.assert_allclose(y.sum(-1), 1.0, rtol=1e-6)
    np.testing.assert_allclose(y[0], [0, 0.6, 0, 0.4], atol=1e-6)
    np.testing.assert_allclose(y[1], [1, 0, 0, 0], atol=1e-6)
    fd_check(lambda t: ops.sparsemax(t, axis=0), [np.ascontiguousarray(x.T)], [0],
             np.random.default_rng(4))


def test_sparsemax_matches_keras_where_keras_is_a_projection():
    # Keras 3.15 computes tau from the sum of the supported cumulative sums rather than the
    # k-th one, so it agrees with the sparsemax projection only where one entry is supported
    # (docs/keras_compatibility.md); fkeras returns the projection (rows sum to 1).
    keras = pytest.importorskip("keras")
    x = np.array([[3.0, 0.0, 0.1, 0.2], [0.0, -1.0, 2.5, 0.5]], np.float32)
    np.testing.assert_allclose(np.asarray(ops.sparsemax(x)),
                               keras.ops.convert_to_numpy(keras.ops.sparsemax(x)), atol=1e-6)
    fd_check(ops.sparsemax, [x], [0], np.random.default_rng(5))


def test_glu_odd_axis_is_an_error():
    with pytest.raises(ValueError, match="even size"):
        ops.glu(KerasTensor((None, 5)))
