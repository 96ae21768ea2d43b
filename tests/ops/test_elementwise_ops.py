"""Elementwise math ops: values vs NumPy float64, Keras parity, symbolic shapes, gradients."""

import numpy as np
import pytest

from fkeras import ops
from fkeras.engine.keras_tensor import KerasTensor
from op_testing import fd_check

# name: (NumPy reference, input domain (low, high))
UNARY = {
    "sin": (np.sin, (-3, 3)), "cos": (np.cos, (-3, 3)), "tan": (np.tan, (-1.2, 1.2)),
    "arcsin": (np.arcsin, (-0.9, 0.9)), "arccos": (np.arccos, (-0.9, 0.9)),
    "arctan": (np.arctan, (-3, 3)), "sinh": (np.sinh, (-2, 2)), "cosh": (np.cosh, (-2, 2)),
    "arcsinh": (np.arcsinh, (-3, 3)), "arccosh": (np.arccosh, (1.1, 3)),
    "arctanh": (np.arctanh, (-0.9, 0.9)), "log1p": (np.log1p, (-0.5, 3)),
    "expm1": (np.expm1, (-2, 2)), "log2": (np.log2, (0.2, 4)), "log10": (np.log10, (0.2, 4)),
    "exp2": (np.exp2, (-2, 2)), "reciprocal": (np.reciprocal, (0.5, 3)),
    "rsqrt": (lambda x: 1 / np.sqrt(x), (0.5, 3)), "cbrt": (np.cbrt, (0.2, 3)),
    "deg2rad": (np.deg2rad, (-90, 90)), "rad2deg": (np.rad2deg, (-2, 2)),
}
ROUNDING = {"sign": np.sign, "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc,
            "round": np.round}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_values_shapes_and_gradients(name):
    ref, (lo, hi) = UNARY[name]
    fn = getattr(ops, name)
    rng = np.random.default_rng(abs(hash(name)) % 1000)
    x = rng.uniform(lo, hi, (3, 4))
    y = fn(x.astype(np.float32))
    assert y.dtype == np.float32
    np.testing.assert_allclose(np.asarray(y), ref(x), rtol=2e-5, atol=2e-5)
    assert fn(KerasTensor((None, 4))).shape == (None, 4)
    fd_check(fn, [x], [0], rng)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_matches_keras(name):
    keras = pytest.importorskip("keras")
    ref, (lo, hi) = UNARY[name]
    x = np.random.default_rng(0).uniform(lo, hi, (5,)).astype(np.float32)
    np.testing.assert_allclose(np.asarray(getattr(ops, name)(x)),
                               keras.ops.convert_to_numpy(getattr(keras.ops, name)(x)),
                               rtol=1e-5, atol=1e-5)


def test_unary_of_integers_gives_float32():
    assert ops.sin(np.array([0, 1], np.int32)).dtype == np.float32
    assert ops.log1p([0, 1]).dtype == np.float32


@pytest.mark.parametrize("name", sorted(ROUNDING))
def test_rounding_keeps_dtype_and_has_zero_gradient(name):
    import fkeras

    x = np.array([-1.5, -0.4, 0.0, 0.5, 2.5, 3.7], np.float32)
    fn = getattr(ops, name)
    np.testing.assert_array_equal(np.asarray(fn(x)), ROUNDING[name](x))
    assert fn(np.array([3, -2], np.int32)).dtype == np.int32
    with fkeras.GradientTape() as tape:
        t = ops.convert_to_tensor(x)
        tape.watch(t)
        y = fn(t)
    np.testing.assert_array_equal(np.asarray(tape.gradient(y, t)), 0.0)


def test_round_decimals():
    np.testing.assert_allclose(np.asarray(ops.round(np.array([1.234, 5.678]), 1)), [1.2, 5.7],
                               rtol=1e-6)


BINARY = {"arctan2": np.arctan2, "hypot": np.hypot, "logaddexp": np.logaddexp,
          "fmod": np.fmod}


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_values_shapes_and_gradients(name):
    rng = np.random.default_rng(3)
    a = rng.uniform(0.5, 3.0, (3, 4)) * rng.choice([-1, 1], (3, 4))
    b = rng.uniform(0.7, 2.0, (4,))
    fn = getattr(ops, name)
    np.testing.assert_allclose(np.asarray(fn(a, b)), BINARY[name](a, b), rtol=1e-5, atol=1e-5)
    assert fn(KerasTensor((None, 4)), KerasTensor((4,))).shape == (None, 4)
    if name == "fmod":
        a = np.where(np.abs(np.mod(a / b, 1.0) - 0.5) > 0.45, a + 0.3, a)  # stay off the jumps
    fd_check(fn, [a, b], [0, 1], rng)


def test_divide_no_nan():
    import fkeras

    a = np.array([1.0, 2.0, 3.0])
    b = np.array([2.0, 0.0, 4.0])
    np.testing.assert_allclose(np.asarray(ops.divide_no_nan(a, b)), [0.5, 0.0, 0.75])
    with fkeras.GradientTape() as tape:
        tb = ops.convert_to_tensor(b)
        tape.watch(tb)
        y = ops.divide_no_nan(a, tb)
    np.testing.assert_allclose(np.asarray(tape.gradient(y, tb)), [-0.25, 0.0, -3 / 16])
