"""Rescaling and Normalization against real Keras 3 (torch backend; skipped without keras):
outputs, adapt statistics, config keys, and `.keras` files exchanged both ways."""

import numpy as np
import pytest
from numeric_prep_helpers import fk_model, keras_model, predict

from keras_parity import keras, to_np  # noqa: I001  (path set by numeric_prep_helpers)

import fkeras
from fkeras import layers


def _data(*shape, seed=0):
    return (np.random.default_rng(seed).standard_normal(shape) * 3 + 2).astype(np.float32)


RESCALING = [
    {"scale": 1 / 255.0},
    {"scale": 1 / 127.5, "offset": -1.0},
    {"scale": [0.5, 1.0, 2.0], "offset": [1.0, 0.0, -1.0]},
]


@pytest.mark.parametrize("kwargs", RESCALING)
@pytest.mark.parametrize("dtype", ["float32", "uint8"])
def test_rescaling_matches_keras(kwargs, dtype):
    x = (np.random.default_rng(0).uniform(0, 255, (4, 5, 3))).astype(dtype)
    out = np.asarray(layers.Rescaling(**kwargs)(x))
    np.testing.assert_allclose(out, to_np(keras.layers.Rescaling(**kwargs)(x)),
                               rtol=1e-6, atol=1e-6)


NORMALIZATION = [
    ({}, (60, 4)),
    ({"axis": None}, (60, 4)),
    ({"axis": (1, 2)}, (30, 2, 3)),
    ({"axis": 1}, (30, 3, 5)),
    ({"axis": -1, "invert": True}, (30, 2, 3)),
]


@pytest.mark.parametrize("kwargs,shape", NORMALIZATION)
def test_normalization_adapt_matches_keras(kwargs, shape):
    x = _data(*shape)
    f_layer, k_layer = layers.Normalization(**kwargs), keras.layers.Normalization(**kwargs)
    f_layer.adapt(x)
    k_layer.adapt(x)
    np.testing.assert_allclose(np.asarray(f_layer.adapt_mean), to_np(k_layer.adapt_mean),
                               rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(np.asarray(f_layer.adapt_variance),
                               to_np(k_layer.adapt_variance), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(f_layer(x)), to_np(k_layer(x)), rtol=1e-5, atol=1e-5)
    # Batched data (Keras 3.15 reaches for tensorflow on anything but arrays and tensors,
    # so the reference is its whole-array result).
    f_layer.adapt([x[:7], x[7:19], x[19:]])
    np.testing.assert_allclose(np.asarray(f_layer.adapt_mean), to_np(k_layer.adapt_mean),
                               rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(np.asarray(f_layer.adapt_variance),
                               to_np(k_layer.adapt_variance), rtol=1e-5)


def test_normalization_given_statistics_match_keras():
    x = _data(6, 2, 3)
    for kwargs in ({"mean": 2.0, "variance": 3.0}, {"mean": [1.0, 2.0, 3.0],
                                                    "variance": [1.0, 4.0, 0.0]},
                   {"axis": (1, 2), "mean": [1.0, 2.0, 3.0], "variance": [1.0, 4.0, 9.0]}):
        np.testing.assert_allclose(np.asarray(layers.Normalization(**kwargs)(x)),
                                   to_np(keras.layers.Normalization(**kwargs)(x)), rtol=1e-6,
                                   atol=1e-6)


@pytest.mark.parametrize("cls,kwargs", [
    ("Rescaling", {"scale": 0.5, "offset": 2.0}),
    ("Rescaling", {"scale": np.array([1.0, 2.0], np.float32)}),
    ("Normalization", {"axis": (1, 2)}),
    ("Normalization", {"mean": [1.0, 2.0], "variance": [2.0, 3.0], "invert": True}),
])
def test_configs_match_keras(cls, kwargs):
    f_config = getattr(layers, cls)(**kwargs).get_config()
    k_config = getattr(keras.layers, cls)(**kwargs).get_config()
    assert set(f_config) == set(k_config)
    for key in set(k_config) - {"name", "dtype"}:
        assert np.asarray(f_config[key] if not isinstance(f_config[key], dict)
                          else f_config[key]["config"]["value"]).tolist() == \
            np.asarray(k_config[key] if not isinstance(k_config[key], dict)
                       else k_config[key]["config"]["value"]).tolist(), key


def _fk_stack(x):
    norm = layers.Normalization()
    norm.adapt(x)
    inputs = fkeras.Input(shape=x.shape[1:])
    hidden = layers.Rescaling(np.array([1.0, 2.0, 0.5], np.float32), 0.25)(norm(inputs))
    return fkeras.Model(inputs, layers.Dense(2)(hidden))


def _keras_stack(x):
    norm = keras.layers.Normalization(axis=None)
    norm.adapt(x)
    inputs = keras.Input(shape=x.shape[1:])
    hidden = keras.layers.Normalization(mean=[1.0, 2.0, 3.0], variance=[1.0, 4.0, 9.0])(
        keras.layers.Rescaling(2.0, -1.0)(norm(inputs)))
    return keras.Model(inputs, keras.layers.Dense(2)(hidden))


def test_fkeras_file_loads_in_keras(tmp_path):
    x = _data(20, 3)
    model = _fk_stack(x)
    model.save(tmp_path / "f.keras")
    loaded = keras.saving.load_model(tmp_path / "f.keras")
    np.testing.assert_allclose(predict(loaded, x), predict(model, x), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(to_np(loaded.layers[1].adapt_mean),
                               np.asarray(model.layers[1].adapt_mean))


def test_keras_file_loads_in_fkeras(tmp_path):
    x = _data(20, 3)
    model = _keras_stack(x)
    model.save(tmp_path / "k.keras")
    loaded = fkeras.saving.load_model(tmp_path / "k.keras")
    np.testing.assert_allclose(predict(loaded, x), predict(model, x), rtol=1e-5, atol=1e-5)


def test_integer_image_model_round_trip(tmp_path):
    x = np.random.default_rng(0).integers(0, 256, (4, 3, 3, 2)).astype(np.uint8)
    model = fk_model(layers.Rescaling(1 / 255.0), (3, 3, 2), dtype="uint8", dense=True)
    model.save(tmp_path / "r.keras")
    k_model = keras.saving.load_model(tmp_path / "r.keras")
    np.testing.assert_allclose(predict(k_model, x), predict(model, x), rtol=1e-5)
    k_model = keras_model(keras, keras.layers.Rescaling(1 / 255.0), (3, 3, 2), "uint8", True)
    k_model.save(tmp_path / "r2.keras")
    np.testing.assert_allclose(predict(fkeras.saving.load_model(tmp_path / "r2.keras"), x),
                               predict(k_model, x), rtol=1e-5)
