"""The rest of Keras 3.15's augmentation layers: each deterministic transform against Keras
(Keras's own transformation dict fed to both, or layers that draw nothing), inference
behaviour (identity, or applied for AutoContrast / CLAHE as Keras), seeded reproducibility,
value ranges, configs, error texts and `.keras` files both ways."""

import numpy as np
import pytest

import fkeras
from fkeras import layers
from fkeras.layers.preprocessing.image_preprocessing import transforms
from augmentation_helpers import (assert_config_keys_match, augment_model, images,
                                  keras_or_skip, to_keras, to_np)

# Layers whose random draw is a transformation dict: the same dict gives the same output.
DRAWN = {
    "RandomShear": [{"x_factor": 0.3, "y_factor": 0.2},
                    {"x_factor": (0.1, 0.4), "fill_mode": "constant", "fill_value": 9.0,
                     "interpolation": "nearest"}],
    "RandomPerspective": [{"factor": 1.0, "scale": 0.5},
                          {"factor": (0.4, 0.9), "scale": 0.8, "interpolation": "nearest",
                           "fill_value": 3.0}],
    "RandomErasing": [{"factor": 1.0, "fill_value": 10.0},
                      {"factor": 0.7, "scale": (0.1, 0.5), "fill_value": (1.0, 2.0, 3.0)}],
    "RandomGaussianBlur": [{"factor": 1.0, "kernel_size": 3, "sigma": (0.5, 1.0)},
                           {"factor": 0.8, "kernel_size": 5, "sigma": 1.0}],
    "RandomGrayscale": [{"factor": 0.5}, {"factor": 1.0}],
    "RandomHue": [{"factor": 0.5}, {"factor": (0.2, 0.9), "value_range": (0, 1)}],
    "RandomSaturation": [{"factor": 0.6, "value_range": (0, 1)},
                         {"factor": (0.3, 0.9), "value_range": (0, 255)}],
    "RandomSharpness": [{"factor": 0.5}, {"factor": (0.0, 1.0), "value_range": (0, 1)}],
    "RandomPosterization": [{"factor": (1, 5)}, {"factor": (3, 3), "value_range": (0, 1)}],
    "RandomInvert": [{"factor": 0.5}, {"factor": 1.0, "value_range": (0, 1)}],
    "RandomColorDegeneration": [{"factor": 0.7}, {"factor": (0.2, 1.0), "value_range": (0, 1)}],
    "Solarization": [{"addition_factor": 0.2, "threshold_factor": 0.6},
                     {"threshold_factor": (0.3, 0.5), "value_range": (0, 1)}],
    "MixUp": [{"alpha": 0.2}, {"alpha": 1.0}],
    "CutMix": [{"factor": 1.0}, {"factor": (0.3, 0.6)}],
}
DRAWN_CASES = [(n, kw) for n, kws in DRAWN.items() for kw in kws]
DRAWN_IDS = [f"{n}-{i}" for n, kws in DRAWN.items() for i in range(len(kws))]


def _input(kwargs, shape, seed=0):
    value_range = kwargs.get("value_range", (0, 255))
    return images(shape, float(value_range[0]), float(value_range[1]), seed)


@pytest.mark.parametrize("data_format", ["channels_last", "channels_first"])
@pytest.mark.parametrize("name, kwargs", DRAWN_CASES, ids=DRAWN_IDS)
def test_transform_images_matches_keras_for_the_same_draw(name, kwargs, data_format):
    keras = keras_or_skip()
    if name == "RandomErasing" and isinstance(kwargs.get("fill_value"), tuple) and \
            data_format == "channels_first":
        pytest.skip("Keras 3.15 cannot broadcast a per-channel fill_value over NCHW")
    x = _input(kwargs, (4, 9, 11, 3))
    if data_format == "channels_first":
        x = np.ascontiguousarray(x.transpose(0, 3, 1, 2))
    k = getattr(keras.layers, name)(**kwargs, data_format=data_format, seed=3)
    f = getattr(layers, name)(**kwargs, data_format=data_format, seed=3)
    scale = float(kwargs.get("value_range", (0, 255))[1])
    for _ in range(3):
        t = to_np(k.get_random_transformation(keras.ops.convert_to_tensor(x), training=True))
        want = to_np(k.transform_images(keras.ops.convert_to_tensor(x), to_keras(t)))
        got = f.transform_images(x, t)
        assert got.shape == want.shape and got.dtype == np.float32
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * scale)


@pytest.mark.parametrize("name", ["MixUp", "CutMix"])
def test_label_mixing_matches_keras(name):
    keras = keras_or_skip()
    x = images((6, 8, 8, 3))
    labels = np.eye(3, dtype=np.float32)[[0, 1, 2, 0, 1, 2]]
    k = getattr(keras.layers, name)(seed=1)
    t = to_np(k.get_random_transformation(keras.ops.convert_to_tensor(x), training=True))
    want = to_np(k.transform_labels(keras.ops.convert_to_tensor(labels), to_keras(t)))
    got = getattr(layers, name)().transform_labels(labels, t)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got.sum(axis=1), 1.0, rtol=1e-5)


DETERMINISTIC = [
    ("AutoContrast", {}), ("AutoContrast", {"value_range": (0, 1)}),
    ("Equalization", {}), ("Equalization", {"value_range": (0, 1), "bins": 64}),
    # Keras 3.15 (torch) casts the clip limit to an integer 0 and pads with edge values
    # where it says "symmetric": parity only without clipping, on sizes needing no padding.
    ("ContrastLimitedAdaptiveHistogramEqualization", {"tile_grid_size": (1, 2),
                                                      "clip_limit": 0.0}),
    ("ContrastLimitedAdaptiveHistogramEqualization", {"tile_grid_size": (13, 5),
                                                      "clip_limit": 0.0,
                                                      "value_range": (0, 1)}),
    ("RandomColorJitter", {"value_range": (0, 255), "brightness_factor": (0.1, 0.1)}),
    ("RandomColorJitter", {"value_range": (0, 1), "brightness_factor": (-0.2, -0.2),
                           "contrast_factor": (-0.5, 0.5)}),
    ("RandomPosterization", {"factor": (2, 2)}),
    ("RandomInvert", {"factor": (1.0, 1.0)}),
    ("RandomColorDegeneration", {"factor": (0.5, 0.5)}),
    ("RandomSharpness", {"factor": (0.9, 0.9)}),
    ("Solarization", {"threshold_factor": (0.0, 0.0), "value_range": (0, 1)}),
    ("RandomGrayscale", {"factor": 1.0}),
]


@pytest.mark.parametrize("data_format", ["channels_last", "channels_first"])
@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("name, kwargs", DETERMINISTIC,
                         ids=[f"{n}-{i}" for i, (n, _) in enumerate(DETERMINISTIC)])
def test_deterministic_calls_match_keras(name, kwargs, batched, data_format):
    keras = keras_or_skip()
    if name == "AutoContrast" and data_format == "channels_first":
        pytest.skip("Keras reduces over axes (1, 2) whatever the format (matched, not tested)")
    if name == "RandomColorJitter" and data_format == "channels_first" and \
            "contrast_factor" in kwargs:
        pytest.skip("Keras 3.15's jitter builds its RandomContrast channels_last")
    x = _input(kwargs, (3, 13, 10, 3) if batched else (13, 10, 3), seed=4)
    if data_format == "channels_first":
        x = np.ascontiguousarray(np.moveaxis(x, -1, -3))
    extra = {"data_format": data_format}
    want = to_np(getattr(keras.layers, name)(**kwargs, **extra)(x, training=True))
    got = getattr(layers, name)(**kwargs, **extra)(x, training=True)
    scale = float(kwargs.get("value_range", (0, 255))[1])
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * scale)


@pytest.mark.parametrize("name, applied", [("AutoContrast", True), ("Equalization", False),
                                           ("ContrastLimitedAdaptiveHistogramEqualization",
                                            True), ("Solarization", False)])
def test_deterministic_layers_at_inference_as_keras(name, applied):
    keras = keras_or_skip()
    x = images((2, 8, 8, 3), 0, 200)
    kwargs = {"clip_limit": 0.0, "tile_grid_size": (2, 2)} if name.startswith("Contrast") \
        else {}
    want = to_np(getattr(keras.layers, name)(**kwargs)(x, training=False))
    got = getattr(layers, name)(**kwargs)(x, training=False)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=0.03)
    assert np.array_equal(got, x) != applied


@pytest.mark.parametrize("fill_mode", ["reflect", "wrap", "constant", "nearest", "mirror"])
@pytest.mark.parametrize("order", [0, 1])
def test_sampler_matches_keras_map_coordinates(fill_mode, order):
    keras = keras_or_skip()
    rng = np.random.default_rng(1)
    img = rng.standard_normal((6, 7)).astype(np.float32)
    ys = rng.uniform(-9, 15, (5, 4)).astype(np.float32) + 0.013
    xs = rng.uniform(-9, 15, (5, 4)).astype(np.float32) + 0.017
    want = to_np(keras.ops.image.map_coordinates(img, [ys, xs], order, fill_mode=fill_mode,
                                                 fill_value=0.5))
    got = transforms.sample(img[None, :, :, None], xs[None], ys[None],
                            ("nearest", "bilinear")[order], fill_mode, 0.5)[0, ..., 0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("kernel_size, sigma", [((3, 3), (1.0, 1.0)), ((5, 5), (0.7, 1.3)),
                                                ((9, 9), (2.5, 2.5))])
def test_gaussian_blur_matches_keras(kernel_size, sigma):
    keras = keras_or_skip()
    x = images((2, 10, 12, 3))
    want = to_np(keras.ops.image.gaussian_blur(x, kernel_size, sigma,
                                               data_format="channels_last"))
    got = transforms.gaussian_blur(x, kernel_size, sigma)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)


def test_hsv_round_trip_and_keras_conversions():
    keras = keras_or_skip()
    x = images((2, 5, 6, 3), 0, 1)
    x[0, 0, 0] = (0.5, 0.5, 0.5)
    hsv = transforms.rgb_to_hsv(x.astype(np.float64))
    np.testing.assert_allclose(hsv, to_np(keras.ops.image.rgb_to_hsv(x)), atol=1e-5)
    np.testing.assert_allclose(transforms.hsv_to_rgb(hsv), x, atol=1e-6)
    np.testing.assert_allclose(transforms.rgb_to_grayscale(x),
                               to_np(keras.ops.image.rgb_to_grayscale(x)), atol=1e-6)


def test_homography_maps_the_end_points_onto_the_start_points():
    start = np.array([[[0, 0], [9, 0], [0, 7], [9, 7]]], np.float64)
    end = start + np.array([[[1, 0.5], [-1, 1], [0.5, -1], [-0.5, -0.5]]])
    a0, a1, a2, b0, b1, b2, c0, c1 = transforms.homography(start, end)[0]
    x, y = end[0, :, 0], end[0, :, 1]
    k = c0 * x + c1 * y + 1
    np.testing.assert_allclose(np.stack([(a0 * x + a1 * y + a2) / k,
                                         (b0 * x + b1 * y + b2) / k], -1), start[0], atol=1e-9)


def test_elastic_transform_moves_pixels_smoothly_and_scale_zero_is_identity():
    x = images((2, 24, 24, 3))
    y = layers.RandomElasticTransform(factor=1.0, scale=(0.5, 0.5), seed=1)(x)
    assert y.shape == x.shape and not np.allclose(y, x) and y.min() >= 0 and y.max() <= 255
    again = layers.RandomElasticTransform(factor=1.0, scale=(0.5, 0.5), seed=1)(x)
    np.testing.assert_array_equal(y, again)
    np.testing.assert_array_equal(layers.RandomElasticTransform(scale=0.0)(x), x)
    flat = np.full((1, 16, 16, 1), 7.0, np.float32)
    np.testing.assert_allclose(layers.RandomElasticTransform(factor=1.0, seed=2)(flat), 7.0,
                               rtol=1e-6)


ALL = {**{n: kws[0] for n, kws in DRAWN.items()},
       "RandomElasticTransform": {"factor": 1.0, "scale": 0.5},
       "AutoContrast": {}, "Equalization": {},
       "ContrastLimitedAdaptiveHistogramEqualization": {"tile_grid_size": (2, 2),
                                                        "clip_limit": 0.0},
       "RandomColorJitter": {"brightness_factor": 0.2, "contrast_factor": 0.3,
                             "saturation_factor": 0.4, "hue_factor": 0.2},
       "AugMix": {}, "RandAugment": {"num_ops": 3}, "MaxNumBoundingBoxes": {"max_number": 2}}
# RandomSaturation's value_range clips the saturation (Keras 3), not the pixels.
RANDOM = sorted(set(ALL) - {"AutoContrast", "Equalization", "MaxNumBoundingBoxes",
                            "ContrastLimitedAdaptiveHistogramEqualization"})
ALWAYS_APPLIED = {"AutoContrast", "ContrastLimitedAdaptiveHistogramEqualization"}


@pytest.mark.parametrize("name", sorted(ALL))
def test_inference_behaviour(name):
    x = _input(ALL[name], (4, 12, 12, 3))
    y = getattr(layers, name)(**ALL[name])(x, training=False)
    assert y.dtype == np.float32 and y.shape == x.shape
    assert np.array_equal(y, x) == (name not in ALWAYS_APPLIED)


@pytest.mark.parametrize("name", RANDOM)
def test_same_seed_same_draws_and_calls_differ(name):
    kwargs = dict(ALL[name])
    if name == "RandomGrayscale":
        kwargs["factor"] = 0.5
    x = _input(kwargs, (8, 12, 12, 3), seed=5)
    a = getattr(layers, name)(**kwargs, seed=21)
    b = getattr(layers, name)(**kwargs, seed=21)
    outs = [a(x) for _ in range(3)]
    for out in outs:
        np.testing.assert_array_equal(out, b(x))
    assert any(not np.array_equal(outs[0], o) for o in outs[1:])


@pytest.mark.parametrize("name", RANDOM)
def test_outputs_stay_in_value_range(name):
    if name == "RandomSaturation":
        pytest.skip("Keras 3's value_range bounds the saturation, not the pixel values")
    kwargs = {**ALL[name]}
    if "value_range" in kwargs or name in ("MixUp", "CutMix", "RandomShear",
                                           "RandomPerspective", "RandomGrayscale"):
        kwargs.pop("value_range", None)
    x = images((8, 12, 12, 3), 0, 255, seed=6)
    y = getattr(layers, name)(**kwargs, seed=2)(x)
    assert y.min() >= -1e-3 and y.max() <= 255 + 1e-3, (y.min(), y.max())


@pytest.mark.parametrize("name", sorted(ALL))
def test_config_keys_and_values_match_keras(name):
    kwargs = dict(ALL[name])
    if name not in ("AutoContrast", "Equalization", "MaxNumBoundingBoxes",
                    "ContrastLimitedAdaptiveHistogramEqualization", "RandomGrayscale"):
        kwargs["seed"] = 5
    assert_config_keys_match(name, kwargs)


@pytest.mark.parametrize("name", sorted(ALL))
def test_config_round_trip_and_shapes(name):
    layer = getattr(layers, name)(**ALL[name])
    again = type(layer).from_config(layer.get_config())
    assert again.get_config() == layer.get_config()
    assert tuple(layer(fkeras.Input((12, 12, 3))).shape) == (None, 12, 12, 3)
    assert layer(images((12, 12, 3))).shape == (12, 12, 3)


def test_random_shear_config_written_by_keras_loads():
    keras = keras_or_skip()
    config = keras.layers.RandomShear(x_factor=0.3, y_factor=0.1).get_config()
    layer = layers.RandomShear.from_config(config)
    assert layer.x_factor == (-0.3, 0.3) and layer.y_factor == (-0.1, 0.1)


BAD = [
    ("RandomShear", {"x_factor": 1.5}), ("RandomShear", {"y_factor": -0.5}),
    ("RandomPerspective", {"scale": 1.5}), ("RandomPerspective", {"factor": 2.0}),
    ("RandomPerspective", {"interpolation": "area"}),
    ("RandomErasing", {"scale": 1.5}), ("RandomGaussianBlur", {"kernel_size": 4}),
    ("RandomGaussianBlur", {"kernel_size": (3, 3, 3)}), ("RandomGaussianBlur", {"sigma": 2.0}),
    ("RandomGrayscale", {"factor": 1.5}), ("RandomHue", {"factor": 1.5}),
    ("RandomSaturation", {"factor": 0.5, "value_range": 3}),
    ("RandomPosterization", {"factor": 9}), ("RandomInvert", {"factor": -0.5}),
    ("RandomColorDegeneration", {"factor": 2.0}),
    ("Solarization", {"addition_factor": 1.5}), ("Solarization", {"threshold_factor": "x"}),
    ("AutoContrast", {"value_range": (0, 1, 2)}), ("CutMix", {"factor": 1.5}),
    ("AugMix", {"factor": 1.5}),
    ("RandAugment", {"factor": -1.0}),
]


@pytest.mark.parametrize("name, kwargs", BAD, ids=[f"{n}-{i}" for i, (n, _) in enumerate(BAD)])
def test_bad_arguments_raise_keras_texts(name, kwargs):
    keras = keras_or_skip()
    with pytest.raises((ValueError, NotImplementedError)) as k_err:
        getattr(keras.layers, name)(**kwargs)
    with pytest.raises(type(k_err.value)) as f_err:
        getattr(layers, name)(**kwargs)
    assert str(f_err.value) == str(k_err.value)


def test_colour_degeneration_needs_three_channels():
    with pytest.raises(ValueError, match="3 channels"):
        layers.RandomColorDegeneration(0.5)(fkeras.Input((8, 8, 1)))


def test_max_num_bounding_boxes_pads_and_truncates_like_keras():
    keras = keras_or_skip()
    boxes = {"boxes": np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4),
             "labels": np.array([[1, 2, 3], [4, 5, 6]], np.float32)}
    x = images((2, 6, 6, 3))
    for n in (2, 5):
        want = to_np(keras.layers.MaxNumBoundingBoxes(n, bounding_box_format="xyxy")(
            {"images": x, "bounding_boxes": {k: v.copy() for k, v in boxes.items()}}))
        got = layers.MaxNumBoundingBoxes(n, bounding_box_format="xyxy")(
            {"images": x, "bounding_boxes": boxes})
        for key in ("boxes", "labels"):
            np.testing.assert_array_equal(got["bounding_boxes"][key],
                                          want["bounding_boxes"][key])


def test_mixup_moves_labels_and_masks_with_images():
    x = images((6, 5, 5, 3))
    labels = np.eye(6, dtype=np.float32)
    out = layers.MixUp(alpha=1.0, seed=3)({"images": x, "labels": labels,
                                          "segmentation_masks": x[..., :1]})
    np.testing.assert_allclose(out["labels"].sum(axis=1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(out["segmentation_masks"], out["images"][..., :1], rtol=1e-5)


KERAS_FILES = {**ALL, "RandomShear": {"x_factor": (0.1, 0.3), "y_factor": (0.0, 0.2)}}


@pytest.mark.parametrize("name", sorted(KERAS_FILES))
def test_keras_files_both_ways(tmp_path, name):
    pytest.importorskip("h5py")
    keras = keras_or_skip()
    kwargs = dict(KERAS_FILES[name])
    if name not in ("AutoContrast", "Equalization", "MaxNumBoundingBoxes",
                    "ContrastLimitedAdaptiveHistogramEqualization"):
        kwargs["seed"] = 9
    x = _input(kwargs, (2, 12, 12, 3))
    for src, dst in ((fkeras, keras), (keras, fkeras)):
        model = augment_model(src, name, kwargs, (12, 12, 3))
        path = tmp_path / f"{src.__name__}.keras"
        model.save(path)
        loaded = dst.models.load_model(path)
        np.testing.assert_allclose(to_np(loaded.predict(x, verbose=0)),
                                   to_np(model.predict(x, verbose=0)), rtol=1e-4, atol=2e-2)
        if name == "Equalization" and keras in (src, dst):
            continue  # Keras 3.15's Equalization returns its input symbolically: no node
        assert type(loaded.get_layer("aug")).__name__ == name


def test_elastic_fill_mode_error():
    with pytest.raises(NotImplementedError, match="Unknown `fill_mode` edge"):
        layers.RandomElasticTransform(fill_mode="edge")


def _clahe_reference(img, grid, clip_limit):
    """float64 loops: one (H, W) channel on [0, 255] whose size the grid divides."""
    h, w = img.shape
    th, tw = h // grid[0], w // grid[1]
    luts = np.zeros((grid[0], grid[1], 256))
    for i in range(grid[0]):
        for j in range(grid[1]):
            tile = img[i * th:(i + 1) * th, j * tw:(j + 1) * tw].astype(int)
            hist = np.bincount(tile.ravel(), minlength=256).astype(float)
            if clip_limit > 0:
                limit = clip_limit * th * tw / 256.0
                excess = np.maximum(hist - limit, 0).sum()
                hist = np.minimum(hist, limit) + excess / 256.0
            cdf = np.cumsum(hist)
            luts[i, j] = np.clip((cdf - cdf[0]) * 255.0 / max(th * tw - cdf[0], 1e-12), 0, 255)
    out = np.zeros((h, w))
    for y in range(h):
        for x in range(w):
            fy, fx = (y - th / 2.0) / th, (x - tw / 2.0) / tw
            y0, x0 = int(np.floor(fy)), int(np.floor(fx))
            wy, wx = fy - y0, fx - x0
            v = int(img[y, x])

            def lut(a, b):
                return luts[min(max(a, 0), grid[0] - 1), min(max(b, 0), grid[1] - 1), v]
            out[y, x] = ((lut(y0, x0) * (1 - wx) + lut(y0, x0 + 1) * wx) * (1 - wy) +
                         (lut(y0 + 1, x0) * (1 - wx) + lut(y0 + 1, x0 + 1) * wx) * wy)
    return out


@pytest.mark.parametrize("grid, clip_limit", [((2, 2), 4.0), ((3, 2), 2.0), ((2, 4), 0.0),
                                              ((4, 4), 40.0)])
def test_clahe_matches_a_float64_reference(grid, clip_limit):
    x = images((2, 24, 16, 2), seed=7)
    got = layers.ContrastLimitedAdaptiveHistogramEqualization(
        clip_limit=clip_limit, tile_grid_size=grid)(x)
    for n in range(2):
        for c in range(2):
            np.testing.assert_allclose(got[n, ..., c], _clahe_reference(x[n, ..., c], grid,
                                                                        clip_limit),
                                       rtol=1e-4, atol=1e-3)
