"""SpatialDropout1D/2D/3D, GaussianNoise, GaussianDropout, AlphaDropout, ActivityRegularization
and the Dropout audit: identity outside training, the noise's structure and statistics, seeds,
gradients, losses, run_layer_test, config and errors."""

import numpy as np
import pytest
from layer_testing import run_layer_test

import fkeras
from fkeras import layers


def _training_vjp(layer, x, seed):
    """The layer's training-mode output on x, and the gradient with respect to x of a random
    cotangent (standard normal, `seed`): (out, grad, cotangent)."""
    with fkeras.GradientTape() as tape:
        tape.watch(x)
        out = layer(x, training=True)
    cot = np.random.default_rng(seed).standard_normal(x.shape).astype(np.float32)
    return out, tape.gradient(out, x, output_gradients=cot), cot


@pytest.mark.parametrize("cls,shape,fmt,shared", [
    (layers.SpatialDropout1D, (4, 7, 6), None, (1,)),
    (layers.SpatialDropout2D, (4, 3, 5, 6), "channels_last", (1, 2)),
    (layers.SpatialDropout2D, (4, 6, 3, 5), "channels_first", (2, 3)),
    (layers.SpatialDropout3D, (4, 2, 3, 2, 6), "channels_last", (1, 2, 3)),
    (layers.SpatialDropout3D, (4, 6, 2, 3, 2), "channels_first", (2, 3, 4)),
])
def test_spatial_dropout_drops_whole_channels(cls, shape, fmt, shared):
    kwargs = {} if fmt is None else {"data_format": fmt}
    layer = cls(0.5, seed=3, **kwargs)
    x = np.random.default_rng(0).uniform(1, 2, shape).astype(np.float32)
    np.testing.assert_array_equal(layer(x), x)
    y = np.asarray(layer(x, training=True))
    scale = y / x  # 0 or 2, constant over the shared (spatial) axes
    assert set(np.unique(scale.round(5))) <= {0.0, 2.0}
    np.testing.assert_array_equal(scale, np.broadcast_to(scale.max(axis=shared, keepdims=True),
                                                         shape))
    assert 0 < (scale == 0).mean() < 1
    # gradient: the same mask
    y, g, cot = _training_vjp(layer, x, seed=1)
    np.testing.assert_allclose(g, cot * (np.asarray(y) / x), rtol=1e-5)
    config = layer.get_config()
    assert set(config) == {"rate", "seed", "name", "dtype"} | (
        set() if cls is layers.SpatialDropout1D else {"data_format"})
    assert cls.from_config(config).get_config() == config
    run_layer_test(cls, dict(rate=0.3, **kwargs), input_shape=shape, call_kwargs={
        "training": True}, expected_output_shape=shape, expected_num_trainable_weights=0,
                   run_training_check=False)


def test_spatial_dropout_rank_error():
    with pytest.raises(ValueError, match="expected ndim=4, found ndim=3"):
        layers.SpatialDropout2D(0.5)(fkeras.Input(shape=(3, 4)))
    with pytest.raises(ValueError, match="Expected a float value between 0 and 1"):
        layers.SpatialDropout1D(2.0)


def test_gaussian_noise():
    x = np.zeros((2000, 50), np.float32)
    layer = layers.GaussianNoise(0.3, seed=1)
    np.testing.assert_array_equal(layer(x), x)
    y = np.asarray(layer(x, training=True))
    assert abs(y.std() - 0.3) < 0.01 and abs(y.mean()) < 0.005
    again = layers.GaussianNoise(0.3, seed=1)
    np.testing.assert_array_equal(again(x, training=True), y)
    assert not np.array_equal(layer(x, training=True), y)
    _, g, cot = _training_vjp(layer, x, seed=0)
    np.testing.assert_array_equal(g, cot)
    with pytest.raises(ValueError, match="argument `stddev`. Expected a float value between 0 "
                                         "and 1. Received: stddev=2"):
        layers.GaussianNoise(2)


def test_gaussian_dropout():
    x = np.ones((2000, 50), np.float32)
    layer = layers.GaussianDropout(0.2, seed=2)
    np.testing.assert_array_equal(layer(x), x)
    y = np.asarray(layer(x, training=True))
    assert abs(y.std() - np.sqrt(0.2 / 0.8)) < 0.01 and abs(y.mean() - 1) < 0.005
    x2 = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
    out, g, cot = _training_vjp(layer, x2, seed=1)
    np.testing.assert_allclose(g, cot * np.asarray(out) / x2, rtol=1e-4)


def test_alpha_dropout():
    rate = 0.3
    x = np.random.default_rng(0).standard_normal((4000, 25)).astype(np.float32)
    layer = layers.AlphaDropout(rate, seed=4)
    np.testing.assert_array_equal(layer(x), x)
    y = np.asarray(layer(x, training=True))
    alpha_p = -1.6732632423543772 * 1.0507009873554805
    a = ((1 - rate) * (1 + rate * alpha_p ** 2)) ** -0.5
    b = -a * alpha_p * rate
    kept = np.isclose(y, a * x + b, atol=1e-5)
    dropped = np.isclose(y, a * alpha_p + b, atol=1e-5)
    assert np.all(kept | dropped) and abs(dropped.mean() - rate) < 0.01
    assert abs(y.mean()) < 0.02 and abs(y.std() - 1) < 0.02  # keeps zero mean, unit variance
    shared = layers.AlphaDropout(0.5, noise_shape=(None, 1), seed=1)
    ys = np.asarray(shared(x[:40], training=True))
    a5 = (0.5 * (1 + 0.5 * alpha_p ** 2)) ** -0.5
    b5 = -a5 * alpha_p * 0.5
    row_dropped = np.isclose(ys, a5 * alpha_p + b5, atol=1e-5).all(1)
    row_kept = np.isclose(ys, a5 * x[:40] + b5, atol=1e-5).all(1)
    assert np.all(row_dropped ^ row_kept) and row_dropped.any() and row_kept.any()
    config = shared.get_config()
    assert config["noise_shape"] == (None, 1)
    out, g, cot = _training_vjp(layer, x, seed=1)
    g = np.asarray(g)
    outk = np.isclose(np.asarray(out), a * x + b, atol=1e-5)
    np.testing.assert_allclose(g, np.where(outk, a * cot, 0.0), rtol=1e-5, atol=1e-6)


def test_activity_regularization_loss_and_gradient():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 3)).astype(np.float32)
    layer = layers.ActivityRegularization(l1=0.1, l2=0.05)
    with fkeras.GradientTape() as tape:
        tape.watch(x)
        y = layer(x)
        loss = layer.losses[-1]
    np.testing.assert_array_equal(y, x)
    want = (0.1 * np.abs(x).sum() + 0.05 * (x.astype(np.float64) ** 2).sum()) / 4
    np.testing.assert_allclose(float(loss), want, rtol=1e-6)
    np.testing.assert_allclose(tape.gradient(loss, x), (0.1 * np.sign(x) + 0.1 * x) / 4,
                               rtol=1e-5)
    assert layers.ActivityRegularization().get_config()["l1"] == 0.0
    with pytest.raises(ValueError, match="Invalid value for argument `l2`"):
        layers.ActivityRegularization(l2=-1)


def test_activity_regularization_in_fit():
    """The penalty is part of the training loss and moves the weights before it."""
    x = np.ones((4, 2), np.float32)
    inp = fkeras.Input(shape=(2,))
    dense = layers.Dense(2, use_bias=False, kernel_initializer="ones")
    model = fkeras.Model(inp, layers.ActivityRegularization(l2=0.5)(dense(inp)))
    model.compile(optimizer=fkeras.optimizers.SGD(learning_rate=0.1), loss="mse")
    logs = model.train_on_batch(x, np.full((4, 2), 2.0, np.float32), return_dict=True)
    # mse = 0; penalty = 0.5 * sum(2^2 over 8 outputs) / 4 = 4
    np.testing.assert_allclose(logs["loss"], 4.0, rtol=1e-5)
    # d penalty / d kernel = 0.5 * 2 * y * x summed / 4 = 2 per entry -> 1 - 0.1 * 2
    np.testing.assert_allclose(dense.kernel.numpy(), np.full((2, 2), 0.8), rtol=1e-5)


@pytest.mark.parametrize("cls,kwargs", [(layers.GaussianNoise, dict(stddev=0.1, seed=1)),
                                        (layers.GaussianDropout, dict(rate=0.1, seed=1)),
                                        (layers.AlphaDropout, dict(rate=0.1, seed=1)),
                                        (layers.AlphaDropout, dict(rate=0.1,
                                                                   noise_shape=(None, 1, 4))),
                                        (layers.ActivityRegularization, dict(l1=0.01, l2=0.1)),
                                        (layers.Dropout, dict(rate=0.2, noise_shape=(None, 1, 4),
                                                              seed=3))])
def test_run_layer_test(cls, kwargs):
    run_layer_test(cls, kwargs, input_shape=(3, 2, 4), call_kwargs={} if
                   cls is layers.ActivityRegularization else {"training": True},
                   expected_output_shape=(3, 2, 4), expected_num_trainable_weights=0,
                   expected_num_losses=1 if cls is layers.ActivityRegularization else 0,
                   run_training_check=False, supports_masking=True)


def test_dropout_audit():
    """Keras 3 semantics: training=None/False is the identity, rate 0 and 1, noise_shape None
    entries, a new mask per call from an int seed, and the seed stream's reproducibility."""
    x = np.ones((6, 5, 4), np.float32)
    assert layers.Dropout(0.5)(x, training=None) is x or np.array_equal(
        layers.Dropout(0.5)(x, training=None), x)
    np.testing.assert_array_equal(layers.Dropout(0.0)(x, training=True), x)
    np.testing.assert_array_equal(layers.Dropout(1.0)(x, training=True), 0 * x)
    layer = layers.Dropout(0.5, noise_shape=(None, 1, None), seed=7)
    a, b = np.asarray(layer(x, training=True)), np.asarray(layer(x, training=True))
    np.testing.assert_array_equal(a, np.broadcast_to(a[:, :1], a.shape))
    assert not np.array_equal(a, b)
    np.testing.assert_array_equal(layers.Dropout(0.5, noise_shape=(None, 1, None), seed=7)(
        x, training=True), a)
    big = np.ones((400, 100), np.float32)
    y = np.asarray(layers.Dropout(0.3, seed=1)(big, training=True))
    assert abs((y == 0).mean() - 0.3) < 0.01
    np.testing.assert_allclose(y.mean(), 1.0, atol=0.02)
    with pytest.raises(ValueError, match="`seed` must be an int or None"):
        layers.Dropout(0.5, seed="a")
