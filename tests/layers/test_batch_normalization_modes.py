"""BatchNormalization's tf_keras-era and composed modes against NumPy float64 formulations
written from tf_keras 2.x's `BatchNormalizationBase.call`: renorm (r, d, clipping, the renorm
weights), virtual_batch_size (ghost batches), adjustment, fused=False, masks; gradients against
finite differences; run_layer_test for each argument combination."""

import sys
from pathlib import Path

import numpy as np
import pytest
from layer_testing import run_layer_test

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ops"))
from op_testing import fd_check  # noqa: E402

import fkeras  # noqa: E402
from fkeras import layers


def ref_train(x, axes, gamma, beta, eps, momentum, state, renorm=None, v=None, adj=None):
    """One training call: returns (y, new_state). `state` holds moving_mean, moving_variance
    and, with renorm (a dict: clipping, momentum), moving_stddev, renorm_mean, renorm_stddev,
    all in the kept axes' shape."""
    x = np.asarray(x, np.float64)
    kept = tuple(x.shape[a] for a in axes)
    bshape = tuple(x.shape[a] if a in axes else 1 for a in range(x.ndim))
    if v:
        xr = x.reshape((v, x.shape[0] // v) + x.shape[1:])
        red = tuple(a for a in range(xr.ndim) if a != 1 and a - 1 not in axes)
        mean, var = xr.mean(red, keepdims=True), xr.var(red, keepdims=True)
        xhat = ((xr - mean) / np.sqrt(var + eps)).reshape(x.shape)
        new_mean, new_var = mean.mean(axis=1).reshape(kept), var.mean(axis=1).reshape(kept)
    else:
        red = tuple(a for a in range(x.ndim) if a not in axes)
        mean, var = x.mean(red, keepdims=True), x.var(red, keepdims=True)
        xhat = (x - mean) / np.sqrt(var + eps)
        new_mean, new_var = mean.reshape(kept), var.reshape(kept)
    s = {k: np.asarray(val, np.float64).reshape(kept) for k, val in state.items()}
    y = xhat
    if renorm is not None:
        sigma = np.sqrt(new_var + eps)
        rs = np.maximum(s["renorm_stddev"], np.sqrt(eps))
        r = np.clip(sigma / rs, renorm["clipping"].get("rmin", 0), renorm["clipping"].get(
            "rmax", np.inf))
        dmax = renorm["clipping"].get("dmax", np.inf)
        d = np.clip((new_mean - s["renorm_mean"]) / rs, -dmax, dmax)
        y = y * r.reshape(bshape) + d.reshape(bshape)
        rm = renorm["momentum"]
        s["renorm_mean"] = s["renorm_mean"] * rm + new_mean * (1 - rm)
        s["renorm_stddev"] = s["renorm_stddev"] * rm + sigma * (1 - rm)
        s["moving_stddev"] = s["moving_stddev"] * momentum + sigma * (1 - momentum)
        s["moving_variance"] = np.maximum(s["moving_stddev"] ** 2 - eps, 0)
    else:
        s["moving_variance"] = s["moving_variance"] * momentum + new_var * (1 - momentum)
    s["moving_mean"] = s["moving_mean"] * momentum + new_mean * (1 - momentum)
    if adj is not None:
        y = y * adj[0] + adj[1]
    if gamma is not None:
        y = y * np.reshape(gamma, bshape)
    if beta is not None:
        y = y + np.reshape(beta, bshape)
    return y, s


def _state(layer):
    return {w.name: w.numpy() for w in layer.non_trainable_weights}


def _layer_with_weights(rng, shape, **kwargs):
    layer = layers.BatchNormalization(**kwargs)
    layer.build(shape)
    weights = []
    for w in layer.weights:
        if "variance" in w.name or "stddev" in w.name:
            weights.append(rng.uniform(0.5, 2, w.shape))
        else:
            weights.append(rng.standard_normal(w.shape))
    layer.set_weights(weights)
    return layer


@pytest.mark.parametrize("shape,axis,kept", [((8, 3), -1, (1,)), ((6, 4, 2, 3), 1, (1,)),
                                             ((6, 4, 2, 3), [1, 3], (1, 3))])
@pytest.mark.parametrize("clipping", [{}, {"rmax": 1.1, "rmin": 0.9, "dmax": 0.1}])
def test_renorm_three_steps(shape, axis, kept, clipping):
    rng = np.random.default_rng(0)
    layer = _layer_with_weights(rng, shape, axis=axis, renorm=True, renorm_clipping=clipping,
                                renorm_momentum=0.6, momentum=0.8, epsilon=1e-2)
    assert [w.name for w in layer.weights] == [
        "gamma", "beta", "moving_mean", "moving_variance", "moving_stddev", "renorm_mean",
        "renorm_stddev"]
    state = _state(layer)
    gamma, beta = layer.gamma.numpy(), layer.beta.numpy()
    for step in range(3):
        x = (rng.standard_normal(shape) * (2 + step) + step).astype(np.float32)
        want, state = ref_train(x, kept, gamma, beta, 1e-2, 0.8, state,
                                renorm={"clipping": clipping, "momentum": 0.6})
        np.testing.assert_allclose(layer(x, training=True), want, rtol=1e-5, atol=1e-5)
        for name, value in _state(layer).items():
            np.testing.assert_allclose(value.reshape(-1), state[name].reshape(-1), rtol=1e-5,
                                       atol=1e-6, err_msg=name)
    # inference uses moving_mean / moving_variance, as without renorm
    x = rng.standard_normal(shape).astype(np.float32)
    red = tuple(a for a in range(len(shape)) if a not in kept)
    bshape = [shape[a] if a in kept else 1 for a in range(len(shape))]
    want = (x - state["moving_mean"].reshape(bshape)) / np.sqrt(
        state["moving_variance"].reshape(bshape) + 1e-2) * gamma.reshape(bshape) + \
        beta.reshape(bshape)
    assert red
    np.testing.assert_allclose(layer(x), want, rtol=1e-5, atol=1e-5)


def test_renorm_gradients_treat_r_and_d_as_constants():
    """dx of renorm with cotangent c equals plain batch norm's dx with cotangent c * r."""
    rng = np.random.default_rng(10)
    x = (rng.standard_normal((7, 3)) * 2 + 1).astype(np.float32)
    cot = rng.standard_normal((7, 3)).astype(np.float32)
    renorm = _layer_with_weights(np.random.default_rng(11), (7, 3), renorm=True)
    plain = layers.BatchNormalization()
    plain.build((7, 3))
    plain.set_weights(renorm.get_weights()[:4])
    state = _state(renorm)
    var = x.astype(np.float64).var(0)
    r = np.sqrt(var + 1e-3) / np.maximum(state["renorm_stddev"], np.sqrt(1e-3))
    grads = []
    for layer, c in ((renorm, cot), (plain, cot * r.astype(np.float32))):
        with fkeras.GradientTape() as tape:
            tape.watch(x)
            y = layer(x, training=True)
        grads.append(tape.gradient(y, x, output_gradients=c))
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-4, atol=1e-5)
    assert np.abs(r - 1).max() > 0.05  # r is far from 1: the test would see a wrong backward


def test_renorm_initial_weights_and_no_gradient_through_r_d():
    layer = layers.BatchNormalization(renorm=True, moving_variance_initializer="ones")
    layer.build((4, 2))
    np.testing.assert_array_equal(layer.moving_stddev.numpy(), 1.0)
    np.testing.assert_array_equal(layer.renorm_stddev.numpy(), 1.0)
    np.testing.assert_array_equal(layer.renorm_mean.numpy(), 0.0)
    # dgamma = sum(dy * (xhat r + d)), dbeta = sum(dy): r and d are constants.
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((6, 2)) * 3 + 1).astype(np.float32)
    cot = rng.standard_normal((6, 2)).astype(np.float32)
    state = _state(layer)
    with fkeras.GradientTape() as tape:
        y = layer(x, training=True)
    dg, db = tape.gradient(y, layer.trainable_weights, output_gradients=cot)
    z, _ = ref_train(x, (1,), None, None, 1e-3, 0.99, state,
                     renorm={"clipping": {}, "momentum": 0.99})
    np.testing.assert_allclose(dg, (cot * z).sum(0), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(db, cot.sum(0), rtol=1e-5)


@pytest.mark.parametrize("shape,axis,kept,v", [((8, 3), -1, (1,), 4), ((8, 3), -1, (1,), 2),
                                               ((6, 4, 2, 3), -1, (3,), 3),
                                               ((6, 4, 2, 3), 1, (1,), 2)])
def test_virtual_batches(shape, axis, kept, v):
    rng = np.random.default_rng(2)
    layer = _layer_with_weights(rng, shape, axis=axis, virtual_batch_size=v, momentum=0.7)
    pshape = (1, 1) + tuple(shape[a] if a in kept else 1 for a in range(1, len(shape)))
    assert [w.shape for w in layer.weights] == [pshape] * 4  # tf_keras's parameter shape
    gamma, beta = layer.gamma.numpy(), layer.beta.numpy()
    state = _state(layer)
    x = (rng.standard_normal(shape) * 2 + 1).astype(np.float32)
    want, state = ref_train(x, kept, gamma, beta, 1e-3, 0.7, state, v=v)
    y = np.asarray(layer(x, training=True))
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)
    for name, value in _state(layer).items():
        np.testing.assert_allclose(value.reshape(-1), state[name].reshape(-1), rtol=1e-5,
                                   atol=1e-6)
    # Ghost batch k holds samples k, k + B/v, ...: each normalized on its own.
    n = shape[0] // v
    red = tuple(a for a in range(len(shape)) if a not in kept)
    bshape = [shape[a] if a in kept else 1 for a in range(len(shape))]
    for k in range(n):
        g = x[k::n].astype(np.float64)
        own = (g - g.mean(red, keepdims=True)) / np.sqrt(g.var(red, keepdims=True) + 1e-3)
        np.testing.assert_allclose(y[k::n], own * gamma.reshape(bshape) + beta.reshape(bshape),
                                   rtol=1e-5, atol=1e-5)
    # inference: the moving statistics, any batch size
    x1 = x[:1]
    want1 = (x1 - state["moving_mean"].reshape(bshape)) / np.sqrt(
        state["moving_variance"].reshape(bshape) + 1e-3) * gamma.reshape(bshape) + \
        beta.reshape(bshape)
    np.testing.assert_allclose(layer(x1), want1, rtol=1e-5, atol=1e-5)


def test_virtual_batch_errors():
    layer = layers.BatchNormalization(virtual_batch_size=4, name="bn")
    with pytest.raises(ValueError, match='Layer "bn": virtual_batch_size=4 must divide the '
                                         "batch size, but the input has batch size 6"):
        layer(np.ones((6, 3), np.float32), training=True)
    with pytest.raises(ValueError, match="axis cannot include 0"):
        layers.BatchNormalization(axis=0, virtual_batch_size=2).build((4, 3))


def test_virtual_batch_with_renorm():
    rng = np.random.default_rng(3)
    shape = (8, 3)
    layer = _layer_with_weights(rng, shape, virtual_batch_size=2, renorm=True,
                                renorm_clipping={"rmax": 1.5}, momentum=0.5)
    state = _state(layer)
    gamma, beta = layer.gamma.numpy(), layer.beta.numpy()
    for _ in range(2):
        x = (rng.standard_normal(shape) * 2).astype(np.float32)
        want, state = ref_train(x, (1,), gamma, beta, 1e-3, 0.5, state, v=2,
                                renorm={"clipping": {"rmax": 1.5}, "momentum": 0.99})
        np.testing.assert_allclose(layer(x, training=True), want, rtol=1e-5, atol=1e-5)
    for name, value in _state(layer).items():
        np.testing.assert_allclose(value.reshape(-1), state[name].reshape(-1), rtol=1e-5,
                                   atol=1e-6)


def test_adjustment_in_training_only():
    rng = np.random.default_rng(4)
    a, b = rng.uniform(0.9, 1.1, 3).astype(np.float32), rng.uniform(-.1, .1, 3).astype(np.float32)
    seen = []

    def adjustment(shape):
        seen.append(shape)
        return a, b

    layer = _layer_with_weights(rng, (5, 4, 3), adjustment=adjustment, momentum=0.5)
    gamma, beta, state = layer.gamma.numpy(), layer.beta.numpy(), _state(layer)
    x = rng.standard_normal((5, 4, 3)).astype(np.float32)
    want, state = ref_train(x, (2,), gamma, beta, 1e-3, 0.5, state, adj=(a, b))
    np.testing.assert_allclose(layer(x, training=True), want, rtol=1e-5, atol=1e-5)
    assert seen == [(5, 4, 3)]
    for name, value in _state(layer).items():
        np.testing.assert_allclose(value, state[name], rtol=1e-5, atol=1e-6)
    plain = (x - state["moving_mean"]) / np.sqrt(state["moving_variance"] + 1e-3) * gamma + beta
    np.testing.assert_allclose(layer(x), plain, rtol=1e-5, atol=1e-5)
    assert len(seen) == 1
    with pytest.warns(UserWarning, match="cannot be serialized"):
        assert layer.get_config()["adjustment"] is None


@pytest.mark.parametrize("shape,axis", [((6, 3), -1), ((4, 3, 2, 2), 1), ((4, 3, 2, 5), [1, 3])])
def test_fused_false_matches_fused(shape, axis):
    rng = np.random.default_rng(5)
    x = (rng.standard_normal(shape) * 2 + 1).astype(np.float32)
    fused = _layer_with_weights(np.random.default_rng(6), shape, axis=axis, fused=True)
    plain = _layer_with_weights(np.random.default_rng(6), shape, axis=axis, fused=False)
    cot = rng.standard_normal(shape).astype(np.float32)
    grads = []
    for layer in (fused, plain):
        with fkeras.GradientTape() as tape:
            tape.watch(x)
            y = layer(x, training=True)
        grads.append((np.asarray(y), *tape.gradient(y, [x] + layer.trainable_weights,
                                                    output_gradients=cot)))
    for f, p in zip(*grads):
        np.testing.assert_allclose(p, f, rtol=1e-4, atol=1e-5)
    for f, p in zip(fused.get_weights(), plain.get_weights()):
        np.testing.assert_allclose(p, f, rtol=1e-5, atol=1e-6)


def test_mask_statistics_keras3_formula():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((3, 5, 2)).astype(np.float32)
    mask = rng.uniform(size=(3, 5)) > 0.4
    layer = _layer_with_weights(rng, x.shape, momentum=0.5)
    gamma, beta, state = layer.gamma.numpy(), layer.beta.numpy(), _state(layer)
    w = mask[..., None].astype(np.float64)
    count = w.sum((0, 1)) + 1e-7
    mean = (x * w).sum((0, 1)) / count
    var = (((x - mean) * w) ** 2).sum((0, 1)) / count
    want = (x - mean) / np.sqrt(var + 1e-3) * gamma + beta
    np.testing.assert_allclose(layer(x, training=True, mask=mask), want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(layer.moving_mean.numpy(), state["moving_mean"] * .5 + mean * .5,
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(layer.moving_variance.numpy(),
                               state["moving_variance"] * .5 + var * .5, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="The mask provided should be one dimension less"):
        layer(x, training=True, mask=mask[:, :, None])
    with pytest.raises(ValueError, match="`fused=True` cannot be used with a mask"):
        layers.BatchNormalization(fused=True)(x, training=True, mask=mask)


@pytest.mark.parametrize("kwargs,shape", [
    (dict(renorm=True, renorm_clipping={"rmax": 1.2, "dmax": 0.3}), (6, 3)),
    (dict(virtual_batch_size=3, axis=1), (6, 3, 2)),
    (dict(virtual_batch_size=2, renorm=True, renorm_clipping={"rmin": 1.3, "rmax": 1.3,
                                                             "dmax": 0.0}), (6, 3)),
    (dict(adjustment=lambda s: (np.full(s[-1:], 1.1), np.full(s[-1:], 0.2))), (6, 4, 3)),
    (dict(fused=False, axis=[1, 2]), (5, 3, 2)),
])
def test_input_gradient_against_finite_differences(kwargs, shape):
    """With renorm, r and d depend on x but carry no gradient, so the finite differences only
    agree where clipping makes them constant (the unclipped case is checked against the plain
    backward in test_renorm_gradients_treat_r_and_d_as_constants)."""
    rng = np.random.default_rng(8)
    layer = _layer_with_weights(rng, shape, **kwargs)
    initial = layer.get_weights()

    def fn(x):
        layer.set_weights(initial)  # every evaluation from the same moving statistics
        return layer(x, training=True)

    x = rng.standard_normal(shape) * 2 + 0.5
    fd_check(fn, [x], [0], rng, tol=1e-5)


def test_masked_input_gradient_against_finite_differences():
    rng = np.random.default_rng(9)
    layer = _layer_with_weights(rng, (3, 4, 2), renorm=True,
                                renorm_clipping={"rmin": 0.7, "rmax": 0.7, "dmax": 0.0})
    initial = layer.get_weights()
    mask = rng.uniform(size=(3, 4)) > 0.3

    def fn(x):
        layer.set_weights(initial)
        return layer(x, training=True, mask=mask)

    fd_check(fn, [rng.standard_normal((3, 4, 2))], [0], rng, tol=1e-5)


@pytest.mark.parametrize("kwargs,shape,n_train,n_state,n_losses", [
    ({}, (4, 3), 2, 2, 0),
    (dict(axis=1, momentum=0.5, epsilon=1e-2), (4, 3, 2, 2), 2, 2, 0),
    (dict(axis=[1, 2]), (4, 3, 2, 2), 2, 2, 0),
    (dict(center=False, scale=False), (4, 3), 0, 2, 0),
    (dict(renorm=True, renorm_clipping={"rmax": 2.0}, renorm_momentum=0.9), (4, 3), 2, 5, 0),
    (dict(virtual_batch_size=2), (4, 3), 2, 2, 0),
    (dict(fused=False), (4, 2, 2, 3), 2, 2, 0),
    (dict(fused=True, axis=1), (4, 2, 2, 3), 2, 2, 0),
    (dict(beta_regularizer="l2", gamma_regularizer="l1", beta_constraint="non_neg",
          gamma_initializer="random_normal", moving_variance_initializer="ones",
          synchronized=True), (4, 3), 2, 2, 2),
])
def test_run_layer_test(kwargs, shape, n_train, n_state, n_losses):
    run_layer_test(layers.BatchNormalization, kwargs, input_shape=shape,
                   call_kwargs={"training": True}, expected_output_shape=shape,
                   expected_num_trainable_weights=n_train,
                   expected_num_non_trainable_weights=n_state,
                   expected_num_losses=n_losses, supports_masking=True)


def test_base_layer_arguments():
    layer = layers.BatchNormalization(input_shape=(3,), batch_size=4, name="bn",
                                      dtype="float32", trainable=False,
                                      weights=[np.full(3, 2.0), np.ones(3), np.zeros(3),
                                               np.full(3, 4.0)])
    model = fkeras.Sequential([layer]) if hasattr(fkeras, "Sequential") else None
    x = np.ones((4, 3), np.float32)
    y = layer(x, training=True)  # trainable=False: inference mode
    np.testing.assert_allclose(y, 2.0 / np.sqrt(4.0 + 1e-3) + 1.0, rtol=1e-6)
    config = layer.get_config()
    assert config["batch_input_shape"] == (4, 3) and config["name"] == "bn"
    assert config["trainable"] is False
    if model is not None:
        assert model.layers[0] is layer
