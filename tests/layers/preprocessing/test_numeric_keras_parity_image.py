"""Resizing and CenterCrop against real Keras 3 (torch backend; skipped without keras): every
interpolation with and without antialias, crop/pad to aspect ratio, both data formats, integer
images; configs; `.keras` files both ways."""

import numpy as np
import pytest
from numeric_prep_helpers import fk_model, keras_model, predict

from keras_parity import keras, to_np  # noqa: I001  (path set by numeric_prep_helpers)

import fkeras
from fkeras import layers


def _images(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


ASPECT = [{}, {"crop_to_aspect_ratio": True}, {"pad_to_aspect_ratio": True},
          {"pad_to_aspect_ratio": True, "fill_value": 2.5}]
SIZES = [(5, 6), (12, 4), (3, 3), (20, 17)]


@pytest.mark.parametrize("interpolation", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("antialias", [False, True])
@pytest.mark.parametrize("aspect", ASPECT)
@pytest.mark.parametrize("data_format,shape", [("channels_last", (2, 7, 9, 3)),
                                               ("channels_first", (2, 3, 9, 7)),
                                               ("channels_last", (16, 11, 2))])
def test_resizing_matches_keras(interpolation, antialias, aspect, data_format, shape):
    kwargs = dict(interpolation=interpolation, antialias=antialias, data_format=data_format,
                  **aspect)
    for i, size in enumerate(SIZES):
        x = _images(*shape, seed=i)
        out = np.asarray(layers.Resizing(*size, **kwargs)(x))
        ref = to_np(keras.layers.Resizing(*size, **kwargs)(x))
        assert out.shape == ref.shape
        np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5, err_msg=str(size))


@pytest.mark.parametrize("interpolation", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("dtype", ["uint8", "int32"])
def test_resizing_integer_images_match_keras(interpolation, dtype):
    x = np.random.default_rng(0).integers(0, 256, (2, 7, 9, 3)).astype(dtype)
    for size in SIZES:
        out = np.asarray(layers.Resizing(*size, interpolation=interpolation)(x))
        ref = to_np(keras.layers.Resizing(*size, interpolation=interpolation)(x))
        assert out.dtype == ref.dtype
        # Rounding back to integers: a value within float32 noise of k + 0.5 may round either
        # way depending on torch's summation order; everything else is equal.
        diff = np.abs(out.astype(np.int64) - ref.astype(np.int64))
        assert diff.max() <= 1 and np.mean(diff > 0) < 0.02, (diff.max(), np.mean(diff > 0))


@pytest.mark.parametrize("shape", [(2, 7, 9, 3), (5, 4, 2), (1, 12, 12, 1)])
@pytest.mark.parametrize("size", [(5, 6), (12, 4), (3, 3), (7, 9), (20, 17)])
@pytest.mark.parametrize("data_format", ["channels_last", "channels_first"])
def test_center_crop_matches_keras(shape, size, data_format):
    x = _images(*shape)
    out = np.asarray(layers.CenterCrop(*size, data_format=data_format)(x))
    ref = to_np(keras.layers.CenterCrop(*size, data_format=data_format)(x))
    assert out.shape == ref.shape and out.dtype == ref.dtype
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("cls,kwargs", [
    ("Resizing", {"height": 4, "width": 5, "interpolation": "bicubic", "antialias": True,
                  "pad_to_aspect_ratio": True, "fill_value": 1.0}),
    ("CenterCrop", {"height": 4, "width": 5, "data_format": "channels_first"}),
])
def test_image_configs_match_keras(cls, kwargs):
    f_config = getattr(layers, cls)(**kwargs).get_config()
    k_config = getattr(keras.layers, cls)(**kwargs).get_config()
    assert set(f_config) == set(k_config)
    for key in set(k_config) - {"name", "dtype"}:
        assert f_config[key] == k_config[key], key


def test_image_layers_keras_files_both_ways(tmp_path):
    x = _images(3, 10, 8, 2)
    f_model = fk_model(lambda t: layers.CenterCrop(5, 5)(
        layers.Resizing(7, 6, interpolation="bicubic", antialias=True)(t)), (10, 8, 2), dense=True)
    f_model.save(tmp_path / "f.keras")
    k_loaded = keras.saving.load_model(tmp_path / "f.keras")
    np.testing.assert_allclose(predict(k_loaded, x), predict(f_model, x), rtol=1e-5, atol=1e-5)
    k_model = keras_model(keras, lambda t: keras.layers.CenterCrop(12, 9)(
        keras.layers.Resizing(6, 6, crop_to_aspect_ratio=True)(t)), (10, 8, 2), dense=True)
    k_model.save(tmp_path / "k.keras")
    f_loaded = fkeras.saving.load_model(tmp_path / "k.keras")
    np.testing.assert_allclose(predict(f_loaded, x), predict(k_model, x), rtol=1e-5, atol=1e-5)
