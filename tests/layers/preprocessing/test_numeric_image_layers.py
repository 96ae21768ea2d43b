"""Resizing and CenterCrop without Keras: the resampling matrices against direct formulas,
shapes (eager, symbolic, compute_output_shape), dtypes, the gradient, configs and errors."""

import numpy as np
import pytest
from numeric_prep_helpers import fk_model

import fkeras
from fkeras import layers
from fkeras.layers.preprocessing.resize_weights import resize_matrix
from layer_testing import run_layer_test


def _images(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("interpolation", ["nearest", "bilinear", "bicubic"])
@pytest.mark.parametrize("antialias", [False, True])
@pytest.mark.parametrize("sizes", [(4, 4), (5, 9), (9, 5), (1, 3), (7, 1), (6, 4)])
def test_resize_matrix_rows_sum_to_one(interpolation, antialias, sizes):
    m = resize_matrix(sizes[0], sizes[1], interpolation, antialias)
    assert m.shape == (sizes[1], sizes[0])
    np.testing.assert_allclose(m.sum(axis=1), 1.0, rtol=1e-12)


def test_resize_matrix_known_values():
    # Bilinear 2 -> 4: half-pixel centres at -0.25 (clamped), 0.25, 0.75, 1.25 (clamped).
    np.testing.assert_allclose(resize_matrix(2, 4, "bilinear"),
                               [[1, 0], [0.75, 0.25], [0.25, 0.75], [0, 1]])
    # Nearest 4 -> 2 picks floor((i + 0.5) * 2) = 1, 3.
    np.testing.assert_array_equal(resize_matrix(4, 2, "nearest").argmax(axis=1), [1, 3])
    # The same size is the identity for every scheme.
    for interp in ("nearest", "bilinear", "bicubic"):
        np.testing.assert_allclose(resize_matrix(5, 5, interp), np.eye(5), atol=1e-12)
    # Antialiased bilinear 4 -> 2: a triangle stretched by the scale (2), centred at 1 and 3,
    # taps at pixel centres 0.5, 1.5, 2.5 -> weights 3/4, 3/4, 1/4, normalized.
    np.testing.assert_allclose(resize_matrix(4, 2, "bilinear", True),
                               [[3 / 7, 3 / 7, 1 / 7, 0], [0, 1 / 7, 3 / 7, 3 / 7]])


@pytest.mark.parametrize("kwargs,shape,expected", [
    ({"height": 4, "width": 6}, (2, 8, 3, 3), (2, 4, 6, 3)),
    ({"height": 4, "width": 6}, (8, 3, 3), (4, 6, 3)),
    ({"height": 4, "width": 6, "data_format": "channels_first"}, (2, 3, 8, 5), (2, 3, 4, 6)),
    ({"height": 5, "width": 5, "crop_to_aspect_ratio": True}, (1, 6, 9, 2), (1, 5, 5, 2)),
    ({"height": 5, "width": 5, "pad_to_aspect_ratio": True}, (1, 6, 9, 2), (1, 5, 5, 2)),
])
def test_resizing_shapes(kwargs, shape, expected):
    out = run_layer_test(layers.Resizing, kwargs, input_shape=shape,
                         expected_output_shape=expected, expected_num_trainable_weights=0,
                         expected_num_non_trainable_weights=0, run_training_check=False)
    assert np.asarray(out).dtype == np.float32


def test_resizing_pad_fill_value_and_integers():
    x = np.ones((1, 2, 4, 1), np.float32)
    out = np.asarray(layers.Resizing(4, 4, pad_to_aspect_ratio=True, fill_value=-1.0,
                                     interpolation="nearest")(x))
    np.testing.assert_array_equal(out[0, :, :, 0], [[-1] * 4, [1] * 4, [1] * 4, [-1] * 4])
    img = np.array([[[0], [255]], [[255], [0]]], np.uint8)
    out = np.asarray(layers.Resizing(3, 3, interpolation="bicubic")(img))
    assert out.dtype == np.uint8 and out.min() >= 0 and out.max() <= 255


def test_resizing_gradient_is_the_transposed_resize():
    x = fkeras.Variable(_images(1, 3, 5, 2))
    g = _images(1, 4, 4, 2, seed=1)
    layer = layers.Resizing(4, 4, interpolation="bicubic")
    with fkeras.GradientTape() as tape:
        loss = fkeras.ops.sum(fkeras.ops.multiply(layer(x), g))
    grad = np.asarray(tape.gradient(loss, x))
    ah, aw = resize_matrix(3, 4, "bicubic"), resize_matrix(5, 4, "bicubic")
    np.testing.assert_allclose(grad, np.einsum("ph,npqc,qw->nhwc", ah, g, aw), rtol=1e-5,
                               atol=1e-5)


@pytest.mark.parametrize("kwargs,match", [
    ({"height": 0, "width": 2}, r'Layer "resizing": `height` must be a positive integer'),
    ({"height": 2, "width": 2, "interpolation": "lanczos3"}, r"not supported by fkeras"),
    ({"height": 2, "width": 2, "interpolation": "cubic"}, r"invalid value for argument "
                                                          r"`interpolation`"),
    ({"height": 2, "width": 2, "fill_mode": "reflect"}, r"Only 'constant' is supported"),
    ({"height": 2, "width": 2, "crop_to_aspect_ratio": True, "pad_to_aspect_ratio": True},
     r"only one of `pad_to_aspect_ratio` & `crop_to_aspect_ratio`"),
    ({"height": 2, "width": 2, "data_format": "nhwc"}, r"`data_format` argument must be one"),
])
def test_resizing_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        layers.Resizing(**kwargs)


def test_resizing_rank_error():
    with pytest.raises(ValueError, match=r'Layer "resizing".*expected rank 3.*\(2, 3\)'):
        layers.Resizing(2, 2)(np.zeros((2, 3), np.float32))


@pytest.mark.parametrize("shape,size,expected_slice", [
    ((1, 6, 8, 2), (4, 4), (slice(1, 5), slice(2, 6))),
    ((1, 5, 5, 1), (2, 3), (slice(1, 3), slice(1, 4))),
    ((1, 4, 4, 1), (4, 4), (slice(0, 4), slice(0, 4))),
])
def test_center_crop_window(shape, size, expected_slice):
    x = _images(*shape)
    out = np.asarray(layers.CenterCrop(*size)(x))
    np.testing.assert_array_equal(out, x[:, expected_slice[0], expected_slice[1], :])


def test_center_crop_smaller_image_resizes():
    x = _images(1, 3, 8, 2)
    out = np.asarray(layers.CenterCrop(4, 4)(x))
    ref = np.asarray(layers.Resizing(4, 4, crop_to_aspect_ratio=True)(x))
    np.testing.assert_array_equal(out, ref)
    assert np.asarray(layers.CenterCrop(2, 2)(np.zeros((3, 3, 1), np.uint8))).dtype == \
        np.float32


def test_center_crop_catalogue_checks_and_errors():
    run_layer_test(layers.CenterCrop, {"height": 2, "width": 3, "data_format":
                                       "channels_first"}, input_shape=(2, 1, 4, 5),
                   expected_output_shape=(2, 1, 2, 3), run_training_check=False)
    with pytest.raises(ValueError, match=r'Layer "center_crop.*`input_shape` must be'):
        layers.CenterCrop(2, 2).compute_output_shape((4, 4))
    with pytest.raises(ValueError, match=r"`width` must be a positive integer"):
        layers.CenterCrop(2, -1)


def test_image_layers_in_a_trained_model(tmp_path):
    x = np.random.default_rng(0).integers(0, 256, (16, 10, 12, 3)).astype(np.uint8)
    y = x.mean(axis=(1, 2, 3), dtype=np.float64)[:, None].astype(np.float32) / 255.0
    inputs = fkeras.Input(shape=(10, 12, 3), dtype="uint8")
    h = layers.CenterCrop(8, 8)(layers.Resizing(9, 9, antialias=True)(inputs))
    h = layers.Rescaling(1 / 255.0)(h)
    model = fkeras.Model(inputs, layers.Dense(1)(layers.Flatten()(h)))
    model.compile(optimizer="adam", loss="mse")
    model.fit(x, y, epochs=2, batch_size=8, verbose=0)
    model.save(tmp_path / "img.keras")
    loaded = fkeras.saving.load_model(tmp_path / "img.keras")
    np.testing.assert_allclose(loaded.predict(x, verbose=0), model.predict(x, verbose=0),
                               rtol=1e-6)
    assert fk_model(layers.Resizing(3, 3), (5, 5, 1)).output_shape == (None, 3, 3, 1)
