"""nanmedian / nanquantile / nanpercentile are differentiable (as Keras's backends): the
gradient reaches the order statistics of each slice's valid values (central differences,
real Keras), NaN entries get none, values as NumPy's including all-NaN slices and every
method; before, they were computed outside the tape and cut the gradient silently."""

import warnings

import numpy as np
import pytest

import fkeras
from fkeras import ops
from op_testing import fd_check


def _data(seed=0, shape=(4, 6)):
    x = np.random.default_rng(seed).standard_normal(shape)
    x[0, 1] = x[2, 4] = x[2, 0] = x[3, 5] = np.nan  # slices of 6, 5 and 4 valid values
    return x


CASES = [
    ("nanmedian_axis1", lambda x: ops.nanmedian(x, axis=1), lambda x: np.nanmedian(x, axis=1)),
    ("nanmedian_all", lambda x: ops.nanmedian(x), lambda x: np.nanmedian(x)),
    ("nanquantile_axis0_keep", lambda x: ops.nanquantile(x, [0.2, 0.7], axis=0, keepdims=True),
     lambda x: np.nanquantile(x, [0.2, 0.7], axis=0, keepdims=True)),
    ("nanquantile_midpoint", lambda x: ops.nanquantile(x, 0.35, axis=1, method="midpoint"),
     lambda x: np.nanquantile(x, 0.35, axis=1, method="midpoint")),
    ("nanpercentile_nearest", lambda x: ops.nanpercentile(x, 60, axis=-1, method="nearest"),
     lambda x: np.nanpercentile(x, 60, axis=-1, method="nearest")),
]


@pytest.mark.parametrize("name,fn,ref", CASES, ids=[c[0] for c in CASES])
def test_values_match_numpy(name, fn, ref):
    x = _data().astype(np.float32)
    np.testing.assert_allclose(np.asarray(fn(ops.convert_to_tensor(x))), ref(x), rtol=1e-5)


@pytest.mark.parametrize("name,fn,ref", CASES, ids=[c[0] for c in CASES])
def test_gradient_matches_central_differences(name, fn, ref):
    fd_check(fn, [_data(1)], [0], np.random.default_rng(2))


def test_nan_entries_get_no_gradient_and_all_nan_slices_stay_nan():
    x = _data(3).astype(np.float32)
    x[1] = np.nan
    v = fkeras.Variable(x)
    with fkeras.GradientTape() as tape:
        med = ops.nanmedian(v.value, axis=1)
        loss = ops.sum(ops.where(ops.isnan(med), 0.0, med))
    g = np.asarray(tape.gradient(loss, v))
    assert np.isnan(np.asarray(med))[1] and not np.isnan(np.asarray(med))[[0, 2, 3]].any()
    assert not g[np.isnan(x)].any()
    np.testing.assert_allclose(g.sum(axis=1), [1.0, 0.0, 1.0, 1.0], rtol=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        np.testing.assert_allclose(np.asarray(med), np.nanmedian(x, axis=1), rtol=1e-6)


def test_gradient_matches_keras():
    keras = pytest.importorskip("keras")
    torch = pytest.importorskip("torch")
    if keras.backend.backend() != "torch":
        pytest.skip("the comparison reads torch autograd")
    x = _data(4).astype(np.float32)
    tx = torch.tensor(x, requires_grad=True)
    (want,) = torch.autograd.grad(torch.sum(keras.ops.nanmedian(tx, axis=1) * 2.0), tx)
    v = fkeras.Variable(x)
    with fkeras.GradientTape() as tape:
        loss = ops.sum(ops.nanmedian(v.value, axis=1) * 2.0)
    np.testing.assert_allclose(np.asarray(tape.gradient(loss, v)), want.numpy(), rtol=1e-6)
