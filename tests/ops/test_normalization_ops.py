"""Batch normalization ops: values against the formula, every kept-axis layout, gradients of
all outputs (y, mean, var) and inputs on the float64 reference device."""

import numpy as np
import pytest
from op_testing import fd_check

from fkeras import ops
from fkeras.engine.keras_tensor import KerasTensor

# (shape, kept axes): last, first-after-batch, middle, contiguous pair, non-contiguous pair.
LAYOUTS = [((6, 5), (-1,)), ((3, 4, 2, 5), (1,)), ((3, 4, 2, 5), (2,)), ((3, 4, 2, 5), (1, 2)),
           ((3, 4, 2, 5), (1, 3)), ((2, 3, 4), (0,))]


def _stats(x, axes):
    axes = tuple(a % x.ndim for a in axes)
    red = tuple(a for a in range(x.ndim) if a not in axes)
    mean = x.mean(axis=red, keepdims=True)
    return red, mean, ((x - mean) ** 2).mean(axis=red, keepdims=True)


@pytest.mark.parametrize("shape,axes", LAYOUTS)
def test_batch_norm_train_values(shape, axes):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape) * 3 + 1
    red, mean, var = _stats(x, axes)
    kept = mean.squeeze(red).shape
    gamma, beta = rng.standard_normal(kept), rng.standard_normal(kept)
    y, m, v = ops.batch_norm_train(x.astype(np.float32), gamma.astype(np.float32),
                                   beta.astype(np.float32), axis=axes, epsilon=1e-3)
    bshape = mean.shape
    want = gamma.reshape(bshape) * (x - mean) / np.sqrt(var + 1e-3) + beta.reshape(bshape)
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(m, mean.reshape(kept), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(v, var.reshape(kept), rtol=1e-5, atol=1e-5)  # biased


@pytest.mark.parametrize("shape,axes", LAYOUTS)
def test_batch_normalization_inference_values(shape, axes):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape)
    _, mean, _ = _stats(x, axes)
    kept = tuple(shape[a] for a in sorted(a % len(shape) for a in axes))
    mu, var = rng.standard_normal(kept), rng.uniform(0.5, 2, kept)
    g, b = rng.standard_normal(kept), rng.standard_normal(kept)
    y = ops.batch_normalization(x.astype(np.float32), mu, var, axis=list(axes), offset=b,
                                scale=g, epsilon=1e-2)
    bs = mean.shape
    want = (x - mu.reshape(bs)) / np.sqrt(var.reshape(bs) + 1e-2) * g.reshape(bs) + b.reshape(bs)
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shape,axes", LAYOUTS)
def test_batch_norm_train_gradients_all_outputs(shape, axes):
    rng = np.random.default_rng(2)
    x = rng.standard_normal(shape)
    kept = tuple(shape[a] for a in sorted(a % len(shape) for a in axes))
    fd_check(lambda x_, g_, b_: ops.batch_norm_train(x_, g_, b_, axis=axes),
             [x, rng.standard_normal(kept), rng.standard_normal(kept)], wrt=(0, 1, 2), rng=rng)


def test_batch_norm_train_without_scale_and_offset():
    rng = np.random.default_rng(3)
    fd_check(lambda x_: ops.batch_norm_train(x_, None, None, axis=1),
             [rng.standard_normal((4, 3, 2))], wrt=(0,), rng=rng)


@pytest.mark.parametrize("shape,axes", LAYOUTS[:4])
def test_batch_normalization_inference_gradients(shape, axes):
    rng = np.random.default_rng(4)
    kept = tuple(shape[a] for a in sorted(a % len(shape) for a in axes))
    args = [rng.standard_normal(shape), rng.standard_normal(kept), rng.uniform(0.5, 2, kept),
            rng.standard_normal(kept), rng.standard_normal(kept)]
    fd_check(lambda x_, m_, v_, o_, s_: ops.batch_normalization(
        x_, m_, v_, axis=axes, offset=o_, scale=s_), args, wrt=(0, 1, 2, 3, 4), rng=rng)


def test_symbolic_shapes_and_axis_errors():
    y, m, v = ops.batch_norm_train(KerasTensor((None, 4, 5)), axis=(1,))
    assert (y.shape, m.shape, v.shape) == ((None, 4, 5), (4,), (4,))
    with pytest.raises(ValueError, match=r"Expected 0 <= axis < inputs.rank \(with "
                                         r"inputs.rank=2\). Received: axis=\(3,\)"):
        ops.batch_norm_train(KerasTensor((None, 4)), axis=(3,))
    with pytest.raises(ValueError, match="one value per channel"):
        ops.batch_normalization(KerasTensor((None, 4)), np.zeros(3), np.ones(3), axis=-1)


def test_moments():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 3, 2))
    mean, var = ops.moments(x.astype(np.float32), axes=(0, 2))
    np.testing.assert_allclose(mean, x.mean(axis=(0, 2)), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(var, x.var(axis=(0, 2)), rtol=1e-5, atol=1e-6)
    fd_check(lambda x_: ops.moments(x_, axes=(0, 2)), [x], wrt=(0,), rng=rng)
