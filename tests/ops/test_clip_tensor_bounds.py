"""ops.clip with tensor or array bounds (Keras takes any tensor broadcastable with x): np.clip's
values in x's dtype, a gradient for x and for bounds on the tape where they bind (against
central differences and real Keras), symbolic shapes; before, Tensor bounds recursed forever
inside the op's NumPy call."""

import numpy as np
import pytest

import fkeras
from fkeras import ops
from op_testing import fd_check

RNG = np.random.default_rng(7)
X = RNG.uniform(-2, 2, (3, 4))
LO = RNG.uniform(-1, 0, (3, 4))
HI = RNG.uniform(0, 1, (4,))  # broadcast along rows

BOUNDS = [
    ("both", LO, HI),
    ("min_only", LO, None),
    ("max_only", None, HI),
    ("scalar_min_tensor_max", -0.5, HI),
]


@pytest.mark.parametrize("name,lo,hi", BOUNDS, ids=[b[0] for b in BOUNDS])
def test_values_dtype_and_shape_are_np_clip(name, lo, hi):
    x = X.astype(np.float32)
    args = [None if b is None else np.asarray(b, np.float32) if np.ndim(b) else b
            for b in (lo, hi)]
    got = ops.clip(fkeras.ops.convert_to_tensor(x), *[
        fkeras.ops.convert_to_tensor(b) if isinstance(b, np.ndarray) else b for b in args])
    want = np.clip(x, *args)
    assert got.dtype == "float32"
    np.testing.assert_array_equal(np.asarray(got), want)


@pytest.mark.parametrize("name,lo,hi", BOUNDS, ids=[b[0] for b in BOUNDS])
def test_gradient_reaches_x_and_tensor_bounds(name, lo, hi):
    inputs = [X] + [b for b in (lo, hi) if isinstance(b, np.ndarray)]
    wrt = list(range(len(inputs)))

    def fn(x, *bounds):
        it = iter(bounds)
        lo_t = next(it) if isinstance(lo, np.ndarray) else lo
        hi_t = next(it) if isinstance(hi, np.ndarray) else hi
        return ops.clip(x, lo_t, hi_t)

    fd_check(fn, inputs, wrt, np.random.default_rng(1))


def test_gradient_under_a_tape_matches_keras():
    keras = pytest.importorskip("keras")
    torch = pytest.importorskip("torch")
    if keras.backend.backend() != "torch":
        pytest.skip("the comparison reads torch autograd")
    x, lo, hi = (v.astype(np.float32) for v in (X, LO, np.broadcast_to(HI, X.shape).copy()))
    tx, tlo, thi = (torch.tensor(v, requires_grad=True) for v in (x, lo, hi))
    want = torch.autograd.grad(torch.sum(keras.ops.clip(tx, tlo, thi) ** 2), (tx, tlo, thi))
    vs = [fkeras.Variable(v) for v in (x, lo, hi)]
    with fkeras.GradientTape() as tape:
        loss = ops.sum(ops.square(ops.clip(vs[0].value, vs[1].value, vs[2].value)))
    got = tape.gradient(loss, vs)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), w.numpy(), rtol=1e-6, atol=1e-7)


def test_nan_in_x_or_bound_stays_nan():
    x = np.array([np.nan, 0.5, 3.0], np.float32)
    lo = fkeras.ops.convert_to_tensor(np.array([0.0, np.nan, 0.0], np.float32))
    got = np.asarray(ops.clip(fkeras.ops.convert_to_tensor(x), lo, 1.0))
    np.testing.assert_array_equal(np.isnan(got), [True, True, False])
    assert got[2] == 1.0


def test_symbolic_clip_broadcasts_bound_shapes():
    x = fkeras.Input((4,))
    lo = fkeras.Input((4,))
    y = ops.clip(x, lo, 1.0)
    assert tuple(y.shape) == (None, 4) and y.dtype == "float32"
