"""Dropout layer: identity unless training=True, scaling, noise_shape, seeds, models, config."""

import numpy as np
import pytest

import fkeras
from fkeras import layers


def test_identity_unless_training():
    x = np.random.default_rng(0).standard_normal((8, 5)).astype(np.float32)
    layer = layers.Dropout(0.5)
    np.testing.assert_array_equal(layer(x), x)
    np.testing.assert_array_equal(layer(x, training=False), x)
    y = np.asarray(layer(x, training=True))
    kept = y != 0
    np.testing.assert_allclose(y[kept], x[kept] * 2, rtol=1e-6)
    assert 0 < kept.mean() < 1


def test_noise_shape_and_seed():
    x = np.ones((4, 6, 3), np.float32)
    layer = layers.Dropout(0.5, noise_shape=(None, 1, 3), seed=5)
    y = np.asarray(layer(x, training=True))
    np.testing.assert_array_equal(y, np.broadcast_to(y[:, :1], y.shape))
    again = layers.Dropout(0.5, noise_shape=(None, 1, 3), seed=5)
    np.testing.assert_array_equal(again(x, training=True), y)  # same seed, same first mask
    assert not np.array_equal(layer(x, training=True), y)  # the stream moves on


def test_model_passes_training():
    inp = fkeras.Input(shape=(100,))
    model = fkeras.Model(inp, layers.Dropout(0.5, seed=1)(inp))
    x = np.ones((2, 100), np.float32)
    np.testing.assert_array_equal(model.predict(x, verbose=0), x)
    np.testing.assert_array_equal(model(x), x)
    assert (np.asarray(model(x, training=True)) == 0).any()


def test_config_and_errors():
    layer = layers.Dropout(0.3, noise_shape=(None, 1), seed=2, name="d")
    config = layer.get_config()
    assert (config["rate"], config["noise_shape"], config["seed"]) == (0.3, (None, 1), 2)
    assert layers.Dropout.from_config(config).get_config() == config
    with pytest.raises(ValueError, match="Invalid value received for argument `rate`. "
                                         "Expected a float value between 0 and 1. Received: "
                                         "rate=1.5"):
        layers.Dropout(1.5)
    assert layers.Dropout(0.2)(fkeras.Input(shape=(3, 4))).shape == (None, 3, 4)
