"""Creation ops: values, dtypes (Keras 3 defaults), Tensors in user code, KerasTensor `_like`."""

import numpy as np
import pytest

from fkeras import ops
from fkeras.engine.keras_tensor import KerasTensor
from fkeras.engine.tensor import Tensor

CASES = [
    (lambda m: m.zeros((2, 3)), np.zeros((2, 3))),
    (lambda m: m.ones(4, dtype="int32"), np.ones(4, np.int32)),
    (lambda m: m.full((2, 2), 7), np.full((2, 2), 7.0)),
    (lambda m: m.full((2,), 0.5), np.full((2,), 0.5)),
    (lambda m: m.zeros_like(np.ones((2, 3), np.int64)), np.zeros((2, 3), np.int64)),
    (lambda m: m.ones_like(np.ones((2, 3)), dtype="float32"), np.ones((2, 3))),
    (lambda m: m.full_like(np.ones((3,), np.float32), 2.5), np.full((3,), 2.5)),
    (lambda m: m.arange(5), np.arange(5, dtype=np.int32)),
    (lambda m: m.arange(1, 3, 0.5), np.arange(1, 3, 0.5)),
    (lambda m: m.linspace(0, 1, 5), np.linspace(0, 1, 5)),
    (lambda m: m.linspace(0, 1, 4, endpoint=False), np.linspace(0, 1, 4, endpoint=False)),
    (lambda m: m.logspace(0, 2, 3), np.logspace(0, 2, 3)),
    (lambda m: m.eye(3, 4, k=1), np.eye(3, 4, 1)),
    (lambda m: m.identity(3), np.eye(3)),
    (lambda m: m.tri(3), np.tri(3)),
]


@pytest.mark.parametrize("i", range(len(CASES)))
def test_creation_values_and_dtypes(i):
    make, expect = CASES[i]
    y = make(ops)
    assert isinstance(y, Tensor)
    want_dtype = np.float32 if expect.dtype == np.float64 else expect.dtype
    assert y.dtype == want_dtype
    np.testing.assert_allclose(np.asarray(y), expect, rtol=1e-6)


@pytest.mark.parametrize("i", range(len(CASES)))
def test_creation_dtypes_match_keras(i):
    keras = pytest.importorskip("keras")
    make, _ = CASES[i]
    ours, theirs = make(ops), make(keras.ops)
    assert str(ours.dtype) == keras.backend.standardize_dtype(theirs.dtype)
    np.testing.assert_allclose(np.asarray(ours), keras.ops.convert_to_numpy(theirs), rtol=1e-6)


def test_like_of_a_keras_tensor_is_symbolic():
    t = KerasTensor((None, 3), "float32")
    assert ops.zeros_like(t).shape == (None, 3)
    assert ops.ones_like(t, dtype="int32").dtype == "int32"
