"""Indexed reads and writes: values vs NumPy, Keras parity, symbolic shapes, gradients."""

import numpy as np
import pytest

from fkeras import ops
from fkeras.engine.keras_tensor import KerasTensor
from op_testing import fd_check

RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 5))
COORDS = np.array([[0, 1], [3, 4], [0, 1]])  # a repeated coordinate: scatter sums it


def _slice_update_ref(x, u):
    y = x.copy()
    y[1:3, 2:4] = u
    return y


def _scatter_ref(v):
    y = np.zeros((4, 5))
    np.add.at(y, (COORDS[:, 0], COORDS[:, 1]), v)
    return y


def _scatter_update_ref(x, u):
    y = x.copy()
    y[COORDS[:2, 0], COORDS[:2, 1]] = u
    return y


def _segment_max_ref(d):
    return np.stack([d[:2].max(0), d[2:].max(0)])


# name: (fkeras call, NumPy reference, inputs, positions to differentiate)
CASES = {
    "slice": (lambda x: ops.slice(x, (1, 2), (2, 3)), lambda x: x[1:3, 2:5], [X], [0]),
    "slice_update": (lambda x, u: ops.slice_update(x, (1, 2), u), _slice_update_ref,
                     [X, RNG.standard_normal((2, 2))], [0, 1]),
    "scatter": (lambda v: ops.scatter(COORDS, v, (4, 5)), _scatter_ref,
                [RNG.standard_normal(3)], [0]),
    "scatter_update": (lambda x, u: ops.scatter_update(x, COORDS[:2], u), _scatter_update_ref,
                       [X, RNG.standard_normal(2)], [0, 1]),
    "segment_sum": (lambda d: ops.segment_sum(d, np.array([0, 0, 2, 2]), num_segments=3),
                    lambda d: np.stack([d[:2].sum(0), np.zeros(5), d[2:].sum(0)]), [X], [0]),
    "segment_max": (lambda d: ops.segment_max(d, np.array([0, 0, 1, 1]), num_segments=2),
                    _segment_max_ref, [X], [0]),
    "sort": (lambda x: ops.sort(x, axis=0), lambda x: np.sort(x, 0), [X], [0]),
    "top_k_values": (lambda x: ops.top_k(x, 3)[0], lambda x: -np.sort(-x, -1)[:, :3], [X], [0]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_gradients(name):
    fn, ref, inputs, wrt = CASES[name]
    got = fn(*[a.astype(np.float32) for a in inputs])
    np.testing.assert_allclose(np.asarray(got), ref(*inputs), rtol=1e-5, atol=1e-6)
    fd_check(fn, inputs, wrt, np.random.default_rng(1))


@pytest.mark.parametrize("name", ["slice", "scatter", "segment_sum", "segment_max", "sort"])
def test_matches_keras(name):
    keras = pytest.importorskip("keras")
    calls = {
        "slice": lambda m: m.slice(X, (1, 2), (2, 3)),
        "scatter": lambda m: m.scatter(COORDS, np.array([1.0, 2.0, 3.0]), (4, 5)),
        "segment_sum": lambda m: m.segment_sum(X, np.array([0, 0, 2, 2]), num_segments=3),
        "segment_max": lambda m: m.segment_max(X, np.array([0, 0, 2, 2]), num_segments=3),
        "sort": lambda m: m.sort(X, axis=0),
    }
    np.testing.assert_allclose(np.asarray(calls[name](ops)),
                               keras.ops.convert_to_numpy(calls[name](keras.ops)), rtol=1e-6)


def test_top_k_indices_ties_and_keras():
    x = np.array([[1.0, 3.0, 3.0, 0.0], [5.0, 4.0, 6.0, 6.0]], np.float32)
    values, indices = ops.top_k(x, 2)
    assert indices.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(indices), [[1, 2], [2, 3]])
    np.testing.assert_array_equal(np.asarray(values), [[3, 3], [6, 6]])
    v, i = ops.top_k(KerasTensor((None, 4)), 2)
    assert v.shape == (None, 2) and i.shape == (None, 2) and i.dtype == "int32"
    keras = pytest.importorskip("keras")
    kv, ki = keras.ops.top_k(x, 2)
    np.testing.assert_array_equal(np.asarray(indices), keras.ops.convert_to_numpy(ki))


def test_one_hot_multi_hot_in_top_k_argsort():
    y = ops.one_hot(np.array([0, 2, -1]), 3)
    assert y.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(y), [[1, 0, 0], [0, 0, 1], [0, 0, 0]])
    np.testing.assert_array_equal(np.asarray(ops.one_hot(np.array([1, 0]), 2, axis=0)),
                                  [[0, 1], [1, 0]])
    assert ops.one_hot(KerasTensor((None, 4), "int32"), 5).shape == (None, 4, 5)
    np.testing.assert_array_equal(np.asarray(ops.multi_hot(np.array([[0, 2], [1, 1]]), 3)),
                                  [[1, 0, 1], [0, 1, 0]])
    preds = np.array([[0.1, 0.5, 0.4], [0.3, 0.3, 0.4]], np.float32)
    np.testing.assert_array_equal(np.asarray(ops.in_top_k(np.array([2, 0]), preds, 2)),
                                  [True, True])
    np.testing.assert_array_equal(np.asarray(ops.in_top_k(np.array([0, 1]), preds, 1)),
                                  [False, False])
    np.testing.assert_array_equal(np.asarray(ops.argsort(preds, axis=-1)),
                                  np.argsort(preds, -1, kind="stable"))
    for name in ("one_hot", "in_top_k", "argsort"):
        assert not ops.REGISTRY[name].differentiable
    keras = pytest.importorskip("keras")
    np.testing.assert_array_equal(
        np.asarray(ops.in_top_k(np.array([2, 0]), preds, 1)),
        keras.ops.convert_to_numpy(keras.ops.in_top_k(np.array([2, 0]), preds, 1)))


def test_nonzero_where_unique():
    x = np.array([[1, 0], [0, 3]])
    rows, cols = ops.nonzero(x)
    np.testing.assert_array_equal(np.asarray(rows), [0, 1])
    np.testing.assert_array_equal(np.asarray(cols), [0, 1])
    rows2, _ = ops.where(x)
    np.testing.assert_array_equal(np.asarray(rows2), [0, 1])
    with pytest.raises(ValueError, match="both"):
        ops.where(x, 1.0)
    np.testing.assert_array_equal(np.asarray(ops.where(x > 0, 1, 2)), [[1, 2], [2, 1]])
    values, inverse, counts = ops.unique(np.array([3, 1, 3, 2]), return_inverse=True,
                                         return_counts=True)
    np.testing.assert_array_equal(np.asarray(values), [1, 2, 3])
    np.testing.assert_array_equal(np.asarray(inverse), [2, 0, 2, 1])
    np.testing.assert_array_equal(np.asarray(counts), [1, 1, 2])
    with pytest.raises(ValueError, match="data-dependent"):
        ops.unique(KerasTensor((None,)))


def test_slice_errors_and_symbolic_shapes():
    with pytest.raises(ValueError, match="does not fit"):
        ops.slice(X, (3, 0), (2, 5))
    assert ops.slice(KerasTensor((None, 5)), (0, 1), (2, 3)).shape == (2, 3)
    assert ops.slice_update(KerasTensor((None, 5)), (0, 1), KerasTensor((1, 2))).shape == (None, 5)
    assert ops.segment_sum(KerasTensor((None, 5)), KerasTensor((None,), "int32"),
                           num_segments=3).shape == (3, 5)


def test_integer_index_gives_a_0d_tensor():
    t = ops.convert_to_tensor(np.arange(3.0))
    assert t[1].shape == () and ops.getitem(np.arange(3.0), 2).shape == ()
    assert float(t[1]) == 1.0
