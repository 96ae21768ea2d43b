"""ops.full / ops.full_like with a tensor fill value: the same values as with a plain number
(or array), and the gradient reaches the fill value (the sum of the cotangent over the
broadcast), as Keras's backends; before, the value was read out of the tape silently."""

import numpy as np
import pytest

import fkeras
from fkeras import ops

FILLS = [
    ("scalar", np.float32(1.5)),
    ("row", np.array([1.0, -2.0, 0.5], np.float32)),
]


@pytest.mark.parametrize("name,fill", FILLS, ids=[f[0] for f in FILLS])
def test_values_equal_the_plain_fill(name, fill):
    shape = (2, 3)
    np.testing.assert_array_equal(np.asarray(ops.full(shape, ops.convert_to_tensor(fill))),
                                  np.asarray(ops.full(shape, fill)))
    x = np.zeros(shape, np.float32)
    np.testing.assert_array_equal(np.asarray(ops.full_like(x, ops.convert_to_tensor(fill))),
                                  np.asarray(ops.full_like(x, fill)))
    ints = np.zeros(shape, np.int32)
    got = ops.full_like(ints, ops.convert_to_tensor(fill))
    assert got.dtype == "int32"
    np.testing.assert_array_equal(np.asarray(got), np.full(shape, fill).astype(np.int32))


@pytest.mark.parametrize("name,fill", FILLS, ids=[f[0] for f in FILLS])
def test_gradient_reaches_the_fill_value(name, fill):
    cot = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    v = fkeras.Variable(fill)
    with fkeras.GradientTape() as tape:
        loss = (ops.sum(ops.full((4, 3), v.value) * cot)
                + ops.sum(ops.full_like(cot, v.value) * 2.0 * cot))
    want = 3.0 * cot.sum(axis=0)
    want = want.sum() if np.ndim(fill) == 0 else want
    np.testing.assert_allclose(np.asarray(tape.gradient(loss, v)), want, rtol=1e-5)


def test_full_like_gradient_matches_keras():
    keras = pytest.importorskip("keras")
    torch = pytest.importorskip("torch")
    if keras.backend.backend() != "torch":
        pytest.skip("the comparison reads torch autograd")
    # (Keras's torch backend takes a tensor fill of rank >= 1; a 0-d one is a TypeError there.)
    x = np.random.default_rng(1).standard_normal((3, 4)).astype(np.float32)
    fill = np.array([0.7, -0.2, 1.1, 0.4], np.float32)
    tv = torch.tensor(fill, requires_grad=True)
    (want,) = torch.autograd.grad(torch.sum(keras.ops.full_like(x, tv) * torch.tensor(x)), tv)
    v = fkeras.Variable(fill)
    with fkeras.GradientTape() as tape:
        loss = ops.sum(ops.full_like(x, v.value) * x)
    np.testing.assert_allclose(np.asarray(tape.gradient(loss, v)), want.numpy(), rtol=1e-6)
