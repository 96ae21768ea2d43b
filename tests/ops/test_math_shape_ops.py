"""keras.ops math and shape ops: symbolic shapes, eager values, gradients (finite differences
on the float64 reference device with random cotangents)."""

import numpy as np
import pytest

import fkeras
from fkeras import ops
from fkeras.engine.keras_tensor import KerasTensor


def _fd_check(fn, inputs, rng, eps=1e-6, tol=1e-6):
    """Gradient of <cot, fn(*inputs)> by the tape vs central differences, per input."""
    with fkeras.device("reference"):
        xs = [np.asarray(x, np.float64) for x in inputs]
        with fkeras.GradientTape() as tape:
            tape.watch(xs)
            y = fn(*xs)
        cot = rng.standard_normal(np.shape(y))
        grads = tape.gradient(y, xs, output_gradients=cot)
        for i, (x, g) in enumerate(zip(xs, grads)):
            v = rng.standard_normal(x.shape)
            plus = [a + eps * v if j == i else a for j, a in enumerate(xs)]
            minus = [a - eps * v if j == i else a for j, a in enumerate(xs)]
            numeric = (np.sum(cot * fn(*plus)) - np.sum(cot * fn(*minus))) / (2 * eps)
            analytic = float(np.sum(np.asarray(g) * v))
            assert abs(numeric - analytic) <= tol * max(1.0, abs(numeric)), (i, numeric, analytic)


BINARY = [ops.add, ops.subtract, ops.multiply, ops.divide, ops.maximum, ops.minimum]


@pytest.mark.parametrize("fn", BINARY, ids=lambda f: f.__name__)
@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((3, 4), (4,)), ((2, 1, 4), (3, 1))])
def test_binary_ops_values_shapes_and_gradients(fn, shapes):
    rng = np.random.default_rng(0)
    a = rng.standard_normal(shapes[0]) + 3.0
    b = rng.standard_normal(shapes[1]) + 3.0
    expect = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply,
              "divide": np.divide, "maximum": np.maximum, "minimum": np.minimum}[fn.__name__]
    np.testing.assert_allclose(fn(a.astype(np.float32), b.astype(np.float32)),
                               expect(a, b), rtol=1e-5, atol=1e-6)
    sym = fn(KerasTensor((None,) + shapes[0][1:]), KerasTensor(shapes[1]))
    assert sym.shape[1:] == np.broadcast_shapes(shapes[0], shapes[1])[1:]
    _fd_check(fn, [a, b], rng)


@pytest.mark.parametrize("fn", [ops.exp, ops.log, ops.sqrt, ops.square, ops.absolute, ops.negative])
def test_unary_ops_gradients(fn):
    rng = np.random.default_rng(1)
    _fd_check(fn, [rng.uniform(0.5, 2.0, (3, 5))], rng)


@pytest.mark.parametrize("fn", [ops.sum, ops.mean, ops.max, ops.min])
@pytest.mark.parametrize("axis,keepdims", [(None, False), (0, False), (1, True), ((0, 2), False)])
def test_reductions(fn, axis, keepdims):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((3, 4, 5))
    ref = {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min}[fn.__name__]
    np.testing.assert_allclose(fn(x.astype(np.float32), axis=axis, keepdims=keepdims),
                               ref(x, axis=axis, keepdims=keepdims), rtol=1e-5, atol=1e-6)
    assert fn(KerasTensor((None, 4, 5)), axis=axis, keepdims=keepdims).shape == \
        tuple(None if i == 0 and d == 3 else d for i, d in
              enumerate(ref(x, axis=axis, keepdims=keepdims).shape)) or axis in (None, 0, (0, 2))
    _fd_check(lambda t: fn(t, axis=axis, keepdims=keepdims), [x], rng)


def test_matmul_2d_uses_the_gemm_kernel_and_differentiates():
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((5, 7)), rng.standard_normal((7, 3))
    np.testing.assert_allclose(ops.matmul(a.astype(np.float32), b.astype(np.float32)), a @ b,
                               rtol=1e-5, atol=1e-5)
    assert ops.matmul(KerasTensor((None, 7)), KerasTensor((7, 3))).shape == (None, 3)
    with pytest.raises(ValueError, match="Inner dimensions"):
        ops.matmul(KerasTensor((None, 7)), KerasTensor((6, 3)))
    _fd_check(ops.matmul, [a, b], rng)
    _fd_check(ops.matmul, [rng.standard_normal((2, 4, 3)), rng.standard_normal((3, 5))], rng)


def test_shape_ops():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 3, 4))
    assert ops.reshape(KerasTensor((None, 3, 4)), (-1, 12)).shape == (None, 12)
    assert ops.reshape(KerasTensor((2, 3, 4)), (4, -1)).shape == (4, 6)
    with pytest.raises(ValueError, match="total size of new array must be unchanged"):
        ops.reshape(KerasTensor((2, 3, 4)), (5, -1))
    assert ops.transpose(KerasTensor((None, 3, 4)), (0, 2, 1)).shape == (None, 4, 3)
    assert ops.concatenate([KerasTensor((None, 3)), KerasTensor((None, 5))], axis=1).shape == (None, 8)
    with pytest.raises(ValueError, match="matching shapes except for the concatenation axis"):
        ops.concatenate([KerasTensor((None, 3, 2)), KerasTensor((None, 5, 3))], axis=1)
    assert ops.expand_dims(KerasTensor((None, 3)), -1).shape == (None, 3, 1)
    assert ops.squeeze(KerasTensor((None, 1, 3)), 1).shape == (None, 3)
    assert ops.getitem(KerasTensor((None, 5)), (slice(None), slice(1, 3))).shape == (None, 2)
    _fd_check(lambda t: ops.reshape(t, (4, 6)), [x], rng)
    _fd_check(lambda t: ops.transpose(t, (2, 0, 1)), [x], rng)
    _fd_check(lambda a, b: ops.concatenate([a, b], axis=1), [x, rng.standard_normal((2, 2, 4))], rng)
    _fd_check(lambda t: ops.getitem(t, (slice(None), 1)), [x], rng)


def test_tape_sums_fan_in_and_skips_constants():
    with fkeras.device("reference"):
        x = np.array([1.0, 2.0, 3.0])
        c = np.array([5.0, 5.0, 5.0])
        with fkeras.GradientTape() as tape:
            tape.watch(x)
            y = ops.sum(ops.add(ops.multiply(x, x), ops.multiply(x, c)))
        gx, gc = tape.gradient(y, [x, c])
    np.testing.assert_allclose(gx, 2 * x + c)
    assert gc is None  # c was never watched: nothing computed for it
