"""LayerNormalization, GroupNormalization, UnitNormalization and their ops: forward against
NumPy float64 formulations, gradients against finite differences (random cotangents, float64
reference device), run_layer_test, config and errors."""

import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from layer_testing import run_layer_test

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ops"))
from op_testing import fd_check  # noqa: E402

import fkeras  # noqa: E402
from fkeras import layers, ops


def ref_layer_norm(x, axes, gamma=None, beta=None, eps=1e-3, rms=False):
    x = np.asarray(x, np.float64)
    bshape = [x.shape[a] if a in axes else 1 for a in range(x.ndim)]
    var = x.var(axis=tuple(axes), keepdims=True)
    base = x if rms else x - x.mean(axis=tuple(axes), keepdims=True)
    y = base / np.sqrt(var + eps)
    if gamma is not None:
        y = y * np.reshape(gamma, bshape)
    if beta is not None:
        y = y + np.reshape(beta, bshape)
    return y


def ref_group_norm(x, groups, axis, gamma, beta, eps=1e-3):
    """Loops over samples and groups: each group's channels normalized together."""
    x = np.moveaxis(np.asarray(x, np.float64), axis, -1)
    y = np.empty_like(x)
    per = x.shape[-1] // groups
    for n in range(x.shape[0]):
        for g in range(groups):
            part = x[n, ..., g * per:(g + 1) * per]
            y[n, ..., g * per:(g + 1) * per] = (part - part.mean()) / np.sqrt(part.var() + eps)
    y = y * gamma + beta
    return np.moveaxis(y, -1, axis)


@pytest.mark.parametrize("shape,axis", [((4, 7), -1), ((3, 4, 5), [1, 2]), ((3, 4, 5), 1),
                                        ((2, 3, 4, 5), [-1, 1])])
@pytest.mark.parametrize("rms", [False, True])
def test_layer_normalization_op_forward_and_gradients(shape, axis, rms):
    rng = np.random.default_rng(0)
    axes = sorted(a % len(shape) for a in (axis if isinstance(axis, list) else [axis]))
    pshape = tuple(shape[a] for a in axes)
    x = rng.standard_normal(shape) * 2 + 1
    gamma, beta = rng.standard_normal(pshape), rng.standard_normal(pshape)
    y = ops.layer_normalization(x.astype(np.float32), gamma.astype(np.float32),
                                beta.astype(np.float32), axis=axis, epsilon=1e-3,
                                rms_scaling=rms)
    np.testing.assert_allclose(y, ref_layer_norm(x, axes, gamma, beta, rms=rms), rtol=1e-5,
                               atol=1e-5)
    fd_check(lambda a, g, b: ops.layer_normalization(a, g, b, axis=axis, epsilon=1e-3,
                                                     rms_scaling=rms),
             [x, gamma, beta], [0, 1, 2], rng)
    fd_check(lambda a: ops.layer_normalization(a, axis=axis, epsilon=1e-3, rms_scaling=rms),
             [x], [0], rng)


def test_normalize_op_forward_and_gradients():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 4, 5))
    x[0, 1] = 0.0  # an all-zero slice: the 1/epsilon clip keeps it at zero
    y = np.asarray(ops.normalize(x.astype(np.float32), axis=-1))
    norm = np.sqrt((x ** 2).sum(-1, keepdims=True))
    np.testing.assert_allclose(y, np.where(norm > 0, x / np.where(norm > 0, norm, 1), 0),
                               rtol=1e-5, atol=1e-6)
    fd_check(lambda a: ops.normalize(a, axis=[1, 2]), [x + 0.1], [0], rng)
    small = x + 0.1
    small[0] *= 0.01  # norm ~0.03 < epsilon = 0.5: clipped, y = x / epsilon
    fd_check(lambda a: ops.normalize(a, axis=-1, epsilon=0.5), [small], [0], rng)
    np.testing.assert_allclose(ops.normalize(small, axis=-1, epsilon=0.5)[0], small[0] * 2)
    with pytest.raises(ValueError, match="Argument `order` must be an int >= 1"):
        ops.normalize(x, order=0)


def test_stop_gradient():
    x = np.arange(3.0, dtype=np.float32)
    with fkeras.GradientTape() as tape:
        tape.watch(x)
        y = ops.add(ops.multiply(ops.stop_gradient(x), x), x)
    np.testing.assert_allclose(tape.gradient(y, x, output_gradients=np.ones(3)), x + 1)


@pytest.mark.parametrize("kwargs,shape", [({}, (4, 6)), (dict(axis=[1, 2]), (2, 3, 4)),
                                          (dict(axis=1, center=False), (2, 3, 4)),
                                          (dict(scale=False, epsilon=1e-5), (3, 5)),
                                          (dict(rms_scaling=True), (3, 5))])
def test_layer_normalization_layer(kwargs, shape):
    rng = np.random.default_rng(2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        layer = layers.LayerNormalization(**kwargs)
    layer.build(shape)
    axis = kwargs.get("axis", -1)
    axes = sorted(a % len(shape) for a in (axis if isinstance(axis, list) else [axis]))
    for w in layer.weights:
        w.assign(rng.standard_normal(w.shape))
    x = rng.standard_normal(shape).astype(np.float32)
    g = None if layer.gamma is None else layer.gamma.numpy()
    b = None if layer.beta is None else layer.beta.numpy()
    want = ref_layer_norm(x, axes, g, b, eps=kwargs.get("epsilon", 1e-3),
                          rms=kwargs.get("rms_scaling", False))
    np.testing.assert_allclose(layer(x), want, rtol=1e-5, atol=1e-5)
    n_weights = (kwargs.get("scale", True) or kwargs.get("rms_scaling", False)) + \
        (kwargs.get("center", True) and not kwargs.get("rms_scaling", False))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run_layer_test(layers.LayerNormalization, kwargs, input_shape=shape,
                       expected_output_shape=shape, expected_num_trainable_weights=n_weights,
                       expected_num_non_trainable_weights=0, supports_masking=True)


def test_layer_normalization_rms_scaling_warns_and_config():
    with pytest.warns(UserWarning, match="`rms_scaling=True`, which is deprecated"):
        layer = layers.LayerNormalization(rms_scaling=True)
    config = layer.get_config()
    assert config["rms_scaling"] is True and config["axis"] == -1
    layer = layers.LayerNormalization(axis=[1, 2], beta_regularizer="l2", gamma_constraint="non_neg")
    layer.build((2, 3, 4))
    assert layer.gamma.shape == (3, 4) and len(layer.losses) == 1
    assert layers.LayerNormalization.from_config(layer.get_config()).get_config() == \
        layer.get_config()


@pytest.mark.parametrize("groups,axis,shape", [(2, -1, (2, 3, 4)), (3, 1, (2, 6, 2, 2)),
                                               (-1, -1, (2, 5, 3)), (1, -1, (3, 4))])
def test_group_normalization(groups, axis, shape):
    rng = np.random.default_rng(3)
    layer = layers.GroupNormalization(groups=groups, axis=axis)
    layer.build(shape)
    C = shape[axis]
    gamma, beta = rng.standard_normal(C), rng.standard_normal(C)
    layer.set_weights([gamma, beta])
    x = rng.standard_normal(shape) * 2 + 1
    g = C if groups == -1 else groups
    assert layer.groups == g
    want = ref_group_norm(x, g, axis % len(shape), gamma, beta)
    np.testing.assert_allclose(layer(x.astype(np.float32)), want, rtol=1e-5, atol=1e-5)
    fd_check(lambda a: layer(a), [x], [0], rng)
    run_layer_test(layers.GroupNormalization, dict(groups=groups, axis=axis),
                   input_shape=shape, expected_output_shape=shape,
                   expected_num_trainable_weights=2, expected_num_non_trainable_weights=0)


def test_group_normalization_weight_gradients_and_errors():
    rng = np.random.default_rng(4)
    layer = layers.GroupNormalization(groups=2)
    x = rng.standard_normal((3, 4)).astype(np.float32)
    cot = rng.standard_normal((3, 4)).astype(np.float32)
    with fkeras.GradientTape() as tape:
        y = layer(x)
    dg, db = tape.gradient(y, layer.trainable_weights, output_gradients=cot)
    xhat = ref_group_norm(x, 2, 1, np.ones(4), np.zeros(4))
    np.testing.assert_allclose(dg, (cot * xhat).sum(0), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(db, cot.sum(0), rtol=1e-5)
    with pytest.raises(ValueError, match="Received an invalid value for argument `groups`"):
        layers.GroupNormalization(groups=0)
    with pytest.raises(ValueError, match=r"Number of groups \(3\) must be a multiple"):
        layers.GroupNormalization(groups=3)(fkeras.Input(shape=(4,)))
    with pytest.raises(ValueError, match=r"Number of groups \(8\) cannot be more than"):
        layers.GroupNormalization(groups=8)(fkeras.Input(shape=(4,)))
    with pytest.raises(ValueError, match="Axis 3 is out of bounds"):
        layers.GroupNormalization(groups=1, axis=3)(fkeras.Input(shape=(4,)))


@pytest.mark.parametrize("axis,shape", [(-1, (3, 4)), ([1, 2], (2, 3, 4)), (1, (2, 3, 4))])
def test_unit_normalization(axis, shape):
    rng = np.random.default_rng(5)
    x = rng.standard_normal(shape)
    axes = tuple(a % len(shape) for a in (axis if isinstance(axis, list) else [axis]))
    want = x / np.sqrt((x ** 2).sum(axes, keepdims=True))
    np.testing.assert_allclose(layers.UnitNormalization(axis=axis)(x.astype(np.float32)), want,
                               rtol=1e-5, atol=1e-6)
    run_layer_test(layers.UnitNormalization, dict(axis=axis), input_shape=shape,
                   expected_output_shape=shape, expected_num_trainable_weights=0,
                   run_training_check=False, supports_masking=True)


def test_unit_normalization_errors():
    with pytest.raises(TypeError, match="Invalid value for `axis` argument"):
        layers.UnitNormalization(axis="x")
    with pytest.raises(ValueError, match="out of bounds"):
        layers.UnitNormalization(axis=2)(fkeras.Input(shape=(4,)))
