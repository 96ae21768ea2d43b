"""ops.repeat with per-element counts (a list, array or tensor of ints, as Keras and NumPy take)
or a 0-d integer tensor: np.repeat's values, shapes (symbolic too), the gradient summed back
into each repeated element (central differences, real Keras), and Keras-style errors before any
kernel runs."""

import numpy as np
import pytest

import fkeras
from fkeras import ops
from op_testing import fd_check

X = np.random.default_rng(3).standard_normal((2, 3, 4))

CASES = [
    ("int_axis1", 2, 1),
    ("tensor_int", "tensor2", 0),
    ("counts_axis1", [1, 0, 3], 1),
    ("counts_last_axis", np.array([2, 1, 0, 1]), -1),
    ("single_count_list", [3], 2),
    ("counts_flat", np.arange(24) % 3, None),
]


def _counts(spec):
    return ops.convert_to_tensor(np.int32(2)) if isinstance(spec, str) else spec


@pytest.mark.parametrize("name,repeats,axis", CASES, ids=[c[0] for c in CASES])
def test_values_and_symbolic_shape_are_np_repeat(name, repeats, axis):
    x = X.astype(np.float32)
    got = ops.repeat(ops.convert_to_tensor(x), _counts(repeats), axis=axis)
    want = np.repeat(x, np.asarray(2 if isinstance(repeats, str) else repeats), axis=axis)
    np.testing.assert_array_equal(np.asarray(got), want)
    if axis is not None:
        symbolic = ops.repeat(fkeras.Input(x.shape[1:], batch_size=2), _counts(repeats),
                              axis=axis)
        assert tuple(symbolic.shape) == want.shape


@pytest.mark.parametrize("name,repeats,axis", CASES, ids=[c[0] for c in CASES])
def test_gradient_sums_back_into_each_element(name, repeats, axis):
    fd_check(lambda x: ops.repeat(x, _counts(repeats), axis=axis), [X], [0],
             np.random.default_rng(5))


def test_gradient_matches_keras():
    keras = pytest.importorskip("keras")
    torch = pytest.importorskip("torch")
    if keras.backend.backend() != "torch":
        pytest.skip("the comparison reads torch autograd")
    x = X.astype(np.float32)
    weights = np.random.default_rng(9).standard_normal((2, 4, 4)).astype(np.float32)
    tx = torch.tensor(x, requires_grad=True)
    out = keras.ops.repeat(tx, torch.tensor([1, 0, 3]), axis=1)
    (want,) = torch.autograd.grad(torch.sum(out * torch.tensor(weights)), tx)
    v = fkeras.Variable(x)
    with fkeras.GradientTape() as tape:
        loss = ops.sum(ops.repeat(v.value, [1, 0, 3], axis=1) * weights)
    np.testing.assert_allclose(np.asarray(tape.gradient(loss, v)), want.numpy(), rtol=1e-6)


@pytest.mark.parametrize("repeats,match", [
    ([1, 2], "holds 2 counts for an axis of size 3"),
    ([1, -1, 2], "non-negative"),
    ([1.5, 1, 1], "non-negative int"),
    (True, "non-negative int"),
    ([[1, 2, 3]], "1-D"),
])
def test_bad_counts_raise_before_any_kernel(repeats, match):
    with pytest.raises(ValueError, match=match):
        ops.repeat(X.astype(np.float32), repeats, axis=1)


def test_symbolic_counts_are_refused():
    counts = fkeras.Input((3,), dtype="int32", batch_size=1)
    with pytest.raises(ValueError, match="concrete `repeats`"):
        ops.repeat(fkeras.Input((3,)), counts, axis=1)
