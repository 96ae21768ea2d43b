"""Reductions and scans: values vs NumPy float64, symbolic shapes, gradients, integer outputs."""

import numpy as np
import pytest

from fkeras import ops
from fkeras.engine.keras_tensor import KerasTensor
from op_testing import fd_check

DIFFERENTIABLE = {
    "prod": np.prod, "var": np.var, "std": np.std, "amax": np.max, "amin": np.min,
    "logsumexp": lambda x, axis=None, keepdims=False: np.log(
        np.sum(np.exp(x), axis=axis, keepdims=keepdims)),
}
AXES = [(None, False), (1, False), (0, True), ((0, 2), False), ((0, 2), True)]


@pytest.mark.parametrize("name", sorted(DIFFERENTIABLE))
@pytest.mark.parametrize("axis,keepdims", AXES)
def test_reductions(name, axis, keepdims):
    rng = np.random.default_rng(0)
    x = rng.uniform(0.5, 1.5, (2, 3, 4)) * rng.choice([-1, 1], (2, 3, 4))
    fn = getattr(ops, name)
    ref = DIFFERENTIABLE[name](x, axis=axis, keepdims=keepdims)
    np.testing.assert_allclose(np.asarray(fn(x.astype(np.float32), axis=axis, keepdims=keepdims)),
                               ref, rtol=1e-5, atol=1e-6)
    sym = fn(KerasTensor((None, 3, 4)), axis=axis, keepdims=keepdims)
    axes = (0, 1, 2) if axis is None else ((axis,) if isinstance(axis, int) else axis)
    expect = tuple(1 if i in axes else d for i, d in enumerate((None, 3, 4)) if keepdims or
                   i not in axes)
    assert sym.shape == expect
    fd_check(lambda t: fn(t, axis=axis, keepdims=keepdims), [x], [0], rng)


def test_prod_gradient_with_zeros_is_exact():
    x = np.array([[0.0, 2.0, 3.0], [0.0, 0.0, 4.0]])
    fd_check(lambda t: ops.prod(t, axis=1), [x], [0], np.random.default_rng(1))


@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_scans(name, axis):
    rng = np.random.default_rng(2)
    x = rng.uniform(0.5, 1.5, (3, 4))
    fn = getattr(ops, name)
    np.testing.assert_allclose(np.asarray(fn(x, axis=axis)), getattr(np, name)(x, axis=axis),
                               rtol=1e-5)
    assert fn(KerasTensor((None, 4)), axis=axis).shape == ((None,) if axis is None else (None, 4))
    x[1, 2] = 0.0  # cumprod's gradient is exact through zeros
    fd_check(lambda t: fn(t, axis=axis), [x], [0], rng)


@pytest.mark.parametrize("name,ref,dtype", [
    ("argmax", np.argmax, np.int32), ("argmin", np.argmin, np.int32),
    ("any", np.any, np.bool_), ("all", np.all, np.bool_),
])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_integer_reductions(name, ref, dtype, axis):
    x = np.array([[0.0, 3.0, -1.0], [2.0, 0.0, 5.0]], np.float32)
    y = getattr(ops, name)(x, axis=axis)
    assert y.dtype == dtype
    np.testing.assert_array_equal(np.asarray(y), ref(x, axis=axis))
    assert not __import__("fkeras").ops.REGISTRY[name].differentiable


def test_count_nonzero_and_keras_parity():
    x = np.array([[0.0, 3.0, 0.0], [2.0, 0.0, 5.0]], np.float32)
    assert int(ops.count_nonzero(x)) == 3
    np.testing.assert_array_equal(np.asarray(ops.count_nonzero(x, axis=0)), [1, 1, 1])
    keras = pytest.importorskip("keras")
    for name in ("argmax", "argmin", "count_nonzero"):
        np.testing.assert_array_equal(np.asarray(getattr(ops, name)(x, axis=1)),
                                      keras.ops.convert_to_numpy(getattr(keras.ops, name)(x, axis=1)))
    for name in ("var", "std", "logsumexp", "prod"):
        np.testing.assert_allclose(np.asarray(getattr(ops, name)(x, axis=1)),
                                   keras.ops.convert_to_numpy(getattr(keras.ops, name)(x, axis=1)),
                                   rtol=1e-6)
