"""Rearranging ops: values vs NumPy, symbolic shapes (unknown batch kept), gradients."""

import numpy as np
import pytest

from fkeras import ops
from fkeras.engine.keras_tensor import KerasTensor
from op_testing import fd_check

IDX = np.array([[2, 0], [1, 1], [0, 2]])

# (fkeras call, NumPy reference, expected symbolic shape for a (None, 3, 4) input)
CASES = {
    "tile": (lambda x: ops.tile(x, (1, 2, 1)), lambda x: np.tile(x, (1, 2, 1)), (None, 6, 4)),
    "flip": (lambda x: ops.flip(x, 1), lambda x: np.flip(x, 1), (None, 3, 4)),
    "flip_all": (ops.flip, np.flip, (None, 3, 4)),
    "roll": (lambda x: ops.roll(x, 2, axis=2), lambda x: np.roll(x, 2, 2), (None, 3, 4)),
    "roll_flat": (lambda x: ops.roll(x, -1), lambda x: np.roll(x, -1), (None, 3, 4)),
    "broadcast_to": (lambda x: ops.broadcast_to(x, (5, 2, 3, 4)),
                     lambda x: np.broadcast_to(x, (5, 2, 3, 4)), None),
    "swapaxes": (lambda x: ops.swapaxes(x, 0, 2), lambda x: np.swapaxes(x, 0, 2), (4, 3, None)),
    "moveaxis": (lambda x: ops.moveaxis(x, 0, -1), lambda x: np.moveaxis(x, 0, -1), (3, 4, None)),
    "ravel": (ops.ravel, np.ravel, (None,)),
    "take": (lambda x: ops.take(x, IDX, axis=2), lambda x: np.take(x, IDX, 2), (None, 3, 3, 2)),
    "take_flat": (lambda x: ops.take(x, [5, 5, 0]), lambda x: np.take(x, [5, 5, 0]), (3,)),
    "take_along_axis": (lambda x: ops.take_along_axis(x, np.array([[[0], [3], [3]]]), axis=2),
                        lambda x: np.take_along_axis(x, np.array([[[0], [3], [3]]]), 2),
                        (None, 3, 1)),
    "diagonal": (lambda x: ops.diagonal(x, 0, 1, 2), lambda x: np.diagonal(x, 0, 1, 2),
                 (None, 3)),
    "tril": (lambda x: ops.tril(x, 1), lambda x: np.tril(x, 1), (None, 3, 4)),
    "triu": (lambda x: ops.triu(x, -1), lambda x: np.triu(x, -1), (None, 3, 4)),
    "stack": (lambda x: ops.stack([x, ops.multiply(x, 2.0)], axis=1),
              lambda x: np.stack([x, 2 * x], 1),
              (None, 2, 3, 4)),
    "hstack": (lambda x: ops.hstack([x, x]), lambda x: np.hstack([x, x]), (None, 6, 4)),
    "vstack": (lambda x: ops.vstack([x, x]), lambda x: np.vstack([x, x]), (None, 3, 4)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_arrangement(name):
    fn, ref, sym_shape = CASES[name]
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 4))
    np.testing.assert_allclose(np.asarray(fn(x.astype(np.float32))), ref(x), rtol=1e-6)
    if name not in ("take_flat", "broadcast_to"):
        assert fn(KerasTensor((None, 3, 4))).shape == sym_shape
    fd_check(fn, [x], [0], rng)


def test_split_unstack_array_split():
    x = np.arange(24.0).reshape(2, 6, 2)
    for got, want in [(ops.split(x, 3, axis=1), np.split(x, 3, 1)),
                      (ops.split(x, [1, 4], axis=1), np.split(x, [1, 4], 1)),
                      (ops.array_split(x, 4, axis=1), np.array_split(x, 4, 1)),
                      (ops.unstack(x, axis=1), [x[:, i] for i in range(6)])]:
        assert len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(np.asarray(g), w)
    parts = ops.split(KerasTensor((None, 6, 2)), 2, axis=1)
    assert [p.shape for p in parts] == [(None, 3, 2), (None, 3, 2)]
    with pytest.raises(ValueError, match="equal sections"):
        ops.split(x, 4, axis=1)
    fd_check(lambda t: ops.split(t, [2], axis=1), [x], [0], np.random.default_rng(1))
    fd_check(lambda t: ops.unstack(t), [x], [0], np.random.default_rng(2))


def test_stack_shape_mismatch_is_an_error():
    with pytest.raises(ValueError, match="one shape"):
        ops.stack([np.zeros((2, 3)), np.zeros((3, 2))])


@pytest.mark.parametrize("name", ["tile", "flip", "roll", "swapaxes", "moveaxis", "ravel", "take",
                                  "take_along_axis", "tril", "triu", "stack", "hstack"])
def test_matches_keras(name):
    keras = pytest.importorskip("keras")
    fn, _, _ = CASES[name]
    x = np.random.default_rng(3).standard_normal((2, 3, 4)).astype(np.float32)

    class KerasOps:  # the same call written against keras.ops
        pass

    import fkeras.ops as fops
    saved = {n: getattr(fops, n) for n in dir(keras.ops) if hasattr(fops, n) and not n.startswith("_")}
    try:
        for n in saved:
            setattr(fops, n, getattr(keras.ops, n))
        theirs = keras.ops.convert_to_numpy(fn(x))
    finally:
        for n, f in saved.items():
            setattr(fops, n, f)
    np.testing.assert_allclose(np.asarray(fn(x)), theirs, rtol=1e-6)
