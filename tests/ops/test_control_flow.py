"""Control flow: eager results, gradients through the path that ran, symbolic tracing,
custom_gradient."""

import numpy as np
import pytest

import fkeras
from fkeras import ops
from fkeras.engine.keras_tensor import KerasTensor
from op_testing import fd_check


def test_cond_and_switch():
    x = np.array([1.0, 2.0])
    assert float(ops.sum(ops.cond(True, lambda: x * 2, lambda: x))) == 6.0
    assert float(ops.sum(ops.cond(ops.convert_to_tensor(False), lambda: x * 2, lambda: x))) == 3.0
    branches = [lambda v: v + 1, lambda v: v * 10]
    np.testing.assert_allclose(np.asarray(ops.switch(1, branches, x)), [10, 20])
    np.testing.assert_allclose(np.asarray(ops.switch(7, branches, x)), [10, 20])  # clamped
    np.testing.assert_allclose(np.asarray(ops.switch(-3, branches, x)), [2, 3])
    t = KerasTensor((None, 2))
    assert ops.cond(KerasTensor((), "bool"), lambda: t * 2, lambda: t).shape == (None, 2)
    with pytest.raises(ValueError, match="same"):
        ops.cond(KerasTensor((), "bool"), lambda: t, lambda: ops.sum(t, axis=1))
    fd_check(lambda v: ops.cond(True, lambda: ops.sin(v), lambda: v), [x], [0],
             np.random.default_rng(0))


def test_loops():
    assert ops.while_loop(lambda i: i < 10, lambda i: i + 3, 0) == 12
    i, s = ops.while_loop(lambda i, s: i < 4, lambda i, s: (i + 1, s + i), (0, 0))
    assert (i, s) == (4, 6)
    assert ops.while_loop(lambda i: True, lambda i: i + 1, 0, maximum_iterations=5) == 5
    assert ops.fori_loop(0, 5, lambda i, acc: acc + i, 0) == 10
    fd_check(lambda v: ops.fori_loop(0, 3, lambda i, acc: acc * v, ops.ones_like(v)),
             [np.array([0.5, 1.5])], [0], np.random.default_rng(1))


def test_scan_map_associative_scan():
    xs = np.arange(5.0)
    carry, ys = ops.scan(lambda c, x: (c + x, c * x), 0.0, xs)
    assert float(carry) == 10.0
    np.testing.assert_allclose(np.asarray(ys), [0, 0, 2, 9, 24])
    carry, ys = ops.scan(lambda c, x: (c + x, c), 0.0, xs, reverse=True)
    np.testing.assert_allclose(np.asarray(ys), [10, 9, 7, 4, 0])
    np.testing.assert_allclose(np.asarray(ops.map(lambda r: ops.sum(r), np.ones((3, 4)))),
                               [4, 4, 4])
    np.testing.assert_allclose(np.asarray(ops.vectorized_map(lambda r: r * 2, np.eye(2))),
                               2 * np.eye(2))
    np.testing.assert_allclose(np.asarray(ops.associative_scan(lambda a, b: a + b, xs)),
                               np.cumsum(xs))
    fd_check(lambda v: ops.scan(lambda c, x: (c * x, ops.sin(c)), ops.ones(()), v)[1],
             [np.array([0.5, 1.5, -0.7])], [0], np.random.default_rng(2))


def test_matches_keras():
    keras = pytest.importorskip("keras")
    xs = np.arange(1.0, 5.0, dtype=np.float32)

    def f(c, x):
        return c * x, c + x

    ours, theirs = ops.scan(f, np.float32(1.0), xs), keras.ops.scan(f, np.float32(1.0), xs)
    np.testing.assert_allclose(np.asarray(ours[1]), keras.ops.convert_to_numpy(theirs[1]))
    assert float(ours[0]) == float(keras.ops.convert_to_numpy(theirs[0]))


def test_custom_gradient():
    @ops.custom_gradient
    def clipped_identity(x):
        def grad(upstream):
            return ops.clip(upstream, -1.0, 1.0)
        return ops.multiply(x, 1.0), grad

    @ops.custom_gradient
    def log1pexp(x):
        e = ops.exp(x)

        def grad(*args, upstream=None):
            if upstream is None:
                (upstream,) = args
            return ops.multiply(upstream, 1.0 - 1.0 / ops.add(1.0, e))
        return ops.log(1.0 + e), grad

    x = ops.convert_to_tensor(np.array([1.0, 100.0], np.float32))
    with fkeras.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = clipped_identity(x)
        z = log1pexp(x)
        w = ops.sum(y * 5.0)
    np.testing.assert_allclose(np.asarray(tape.gradient(w, x)), [1.0, 1.0])
    np.testing.assert_allclose(np.asarray(tape.gradient(z, x)), [1 / (1 + np.exp(-1.0)), 1.0],
                               rtol=1e-6)
    np.testing.assert_allclose(np.asarray(z), [np.log1p(np.e), np.inf])
