"""fkeras.ops.image (Keras 3.15's keras.ops.image): values against real Keras (torch backend)
and NumPy float64 references, both data formats, rank 3 and 4; signatures; symbolic shapes
and Functional graphs; argument errors; gradients against finite differences."""

import inspect

import numpy as np
import pytest

import fkeras
from fkeras import ops
from fkeras.engine.keras_tensor import KerasTensor
from fkeras.ops import groupings
from fkeras.ops import image as fi
from fkeras.ops.image_sampling import elastic_coords
from tests.ops.op_testing import fd_check

T1 = np.array([1.1, 0.2, -1.3, -0.1, 0.9, 0.7, 0, 0], np.float32)
T2 = np.array([0.8, 0.3, 1.3, -0.2, 1.1, -0.7, 0, 0], np.float32)
START = np.array([[0, 0], [6, 0], [0, 5], [6, 5]], np.float32)
END = np.array([[1, 0.5], [5, 0], [0.3, 5], [6, 4.2]], np.float32)

# (id, function name, kwargs): applied to a (2,) 6 x 7 x 3 image in each format and rank.
CASES = [
    ("gray", "rgb_to_grayscale", {}),
    ("hsv", "rgb_to_hsv", {}),
    ("rgb", "hsv_to_rgb", {}),
    ("blur", "gaussian_blur", {}),
    ("blur53", "gaussian_blur", dict(kernel_size=(5, 3), sigma=(1.5, 0.7))),
    ("resize", "resize", dict(size=(4, 9))),
    ("resize_cubic_aa", "resize", dict(size=(3, 3), interpolation="bicubic", antialias=True)),
    ("resize_pad", "resize", dict(size=(5, 5), pad_to_aspect_ratio=True, fill_value=0.3)),
    ("resize_crop", "resize", dict(size=(5, 4), crop_to_aspect_ratio=True,
                                   interpolation="nearest")),
    ("pad", "pad_images", dict(top_padding=1, bottom_padding=2, left_padding=0,
                               target_width=9)),
    ("crop", "crop_images", dict(top_cropping=1, target_height=3, left_cropping=2,
                                 right_cropping=1)),
    ("patches", "extract_patches", dict(size=2)),
    ("patches_same", "extract_patches", dict(size=(3, 2), strides=1, padding="same")),
    ("patches_dil", "extract_patches", dict(size=2, strides=1, dilation_rate=2)),
    ("affine", "affine_transform", dict(transform=T1)),
    ("affine_nearest_reflect", "affine_transform", dict(transform=T2, interpolation="nearest",
                                                         fill_mode="reflect")),
    ("affine_wrap", "affine_transform", dict(transform=T2, fill_mode="wrap")),
    ("affine_mirror", "affine_transform", dict(transform=T2, fill_mode="mirror")),
    ("affine_nearest", "affine_transform", dict(transform=T2, fill_mode="nearest")),
    ("affine_fill", "affine_transform", dict(transform=T2, fill_value=0.7)),
    ("perspective", "perspective_transform", dict(start_points=START, end_points=END)),
    ("perspective_nearest", "perspective_transform", dict(start_points=START, end_points=END,
                                                          interpolation="nearest")),
]
LAYOUTS = [(f, r) for f in ("channels_last", "channels_first") for r in (3, 4)]


def _image(data_format, rank, seed=0, dtype=np.float32):
    shape = (2, 6, 7, 3) if data_format == "channels_last" else (2, 3, 6, 7)
    return np.random.default_rng(seed).random(shape[4 - rank:]).astype(dtype)


def _keras_value(y):
    return y.detach().cpu().numpy() if hasattr(y, "detach") else np.asarray(y)


def _torchify(kwargs):
    import torch

    return {k: torch.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}


def _batch_transform(name, kwargs, rank):
    # Keras's torch affine needs one transform per image.
    if name == "affine_transform" and rank == 4:
        return dict(kwargs, transform=np.stack([kwargs["transform"]] * 2))
    return kwargs


def test_names_and_signatures_equal_keras():
    keras = pytest.importorskip("keras")
    public = {n for n in dir(keras.ops.image) if not n.startswith("_")}
    assert public == set(groupings.IMAGE)
    for name in groupings.IMAGE:
        assert inspect.signature(getattr(fi, name)) == \
            inspect.signature(getattr(keras.ops.image, name)), name
        assert hasattr(ops.image, name)
        # Not top-level ops names in Keras, nor here (`fkeras.ops.resize` is a submodule).
        assert not hasattr(keras.ops, name)
        assert not callable(getattr(ops, name, None)), name


@pytest.mark.parametrize("layout", LAYOUTS, ids=lambda v: f"{v[0][9:]}{v[1]}")
@pytest.mark.parametrize("case", CASES, ids=lambda c: c[0])
def test_matches_keras(case, layout):
    keras = pytest.importorskip("keras")
    torch = pytest.importorskip("torch")
    _, name, kwargs = case
    data_format, rank = layout
    kwargs = _batch_transform(name, kwargs, rank)
    x = _image(data_format, rank)
    expect = _keras_value(getattr(keras.ops.image, name)(torch.tensor(x), data_format=data_format,
                                                         **_torchify(kwargs)))
    got = np.asarray(getattr(fi, name)(x, data_format=data_format, **kwargs))
    assert got.shape == expect.shape
    np.testing.assert_allclose(got, expect, atol=1e-5, rtol=0)


@pytest.mark.parametrize("data_format", ["channels_last", "channels_first"])
@pytest.mark.parametrize("rank", [3, 4])
def test_ssim_and_sobel_match_keras(data_format, rank):
    keras = pytest.importorskip("keras")
    torch = pytest.importorskip("torch")
    x, y = _image(data_format, rank), _image(data_format, rank, seed=1)
    for kwargs in (dict(filter_size=3), dict(filter_size=5, filter_sigma=0.8, max_val=2.0)):
        expect = keras.ops.image.ssim(torch.tensor(x), torch.tensor(y),
                                      data_format=data_format, **kwargs)
        got = fi.ssim(x, y, data_format=data_format, **kwargs)
        np.testing.assert_allclose(np.asarray(got), _keras_value(expect), atol=1e-4)
    if rank == 4:
        expect = keras.ops.image.sobel_edges(torch.tensor(x), data_format=data_format)
        got = fi.sobel_edges(x, data_format=data_format)
        np.testing.assert_allclose(np.asarray(got), _keras_value(expect), atol=1e-5)


@pytest.mark.parametrize("order", [0, 1])
@pytest.mark.parametrize("fill_mode", ["constant", "nearest", "wrap", "mirror", "reflect"])
def test_map_coordinates_matches_keras(order, fill_mode):
    keras = pytest.importorskip("keras")
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    x = rng.random((5, 6, 3)).astype(np.float32)
    coords = (rng.random((3, 4, 7)) * 9 - 2).astype(np.float32)
    coords[2] = np.round(coords[2] / 3)
    expect = keras.ops.image.map_coordinates(torch.tensor(x), torch.tensor(coords), order,
                                             fill_mode, 0.4)
    got = fi.map_coordinates(x, coords, order, fill_mode, 0.4)
    np.testing.assert_allclose(np.asarray(got), _keras_value(expect), atol=1e-5)


@pytest.mark.parametrize("kwargs", [dict(size=2), dict(size=(2, 3, 2), strides=1),
                                    dict(size=(2, 2, 2), strides=(1, 2, 1), padding="same")])
@pytest.mark.parametrize("batched", [True, False])
def test_patches_3d_match_keras(kwargs, batched):
    keras = pytest.importorskip("keras")
    torch = pytest.importorskip("torch")
    v = np.random.default_rng(3).random((2, 4, 6, 5, 2)[0 if batched else 1:]).astype(np.float32)
    expect = keras.ops.image.extract_patches_3d(torch.tensor(v), **kwargs)
    got = fi.extract_patches_3d(v, **kwargs)
    np.testing.assert_allclose(np.asarray(got), _keras_value(expect), atol=1e-6)


@pytest.mark.parametrize("method", ["linear", "bicubic", "lanczos3", "lanczos5"])
@pytest.mark.parametrize("antialias", [True, False])
def test_scale_and_translate_matches_keras(method, antialias):
    keras = pytest.importorskip("keras")
    torch = pytest.importorskip("torch")
    im = np.random.default_rng(4).random((2, 6, 7, 3)).astype(np.float32)
    scale, shift = np.array([1.4, 0.6], np.float32), np.array([0.3, -0.5], np.float32)
    expect = keras.ops.image.scale_and_translate(torch.tensor(im), (2, 9, 4, 3),
                                                 torch.tensor(scale), torch.tensor(shift),
                                                 (1, 2), method, antialias)
    got = fi.scale_and_translate(im, (2, 9, 4, 3), scale, shift, (1, 2), method, antialias)
    np.testing.assert_allclose(np.asarray(got), _keras_value(expect), atol=1e-5)


def test_elastic_transform_is_map_coordinates_of_its_field():
    keras = pytest.importorskip("keras")
    torch = pytest.importorskip("torch")
    x = _image("channels_last", 4)
    got = np.asarray(fi.elastic_transform(x, alpha=3.0, sigma=1.0, seed=7))
    coords = elastic_coords(x.shape, 3.0, 1.0, 7)
    b, y, xx, ch = np.broadcast_arrays(*coords)
    for n in range(2):
        for c in range(3):
            field = torch.tensor(np.stack([y[n, ..., c], xx[n, ..., c]]))
            expect = keras.ops.image.map_coordinates(torch.tensor(x[n, ..., c]), field, 1,
                                                     "reflect", 0.0)
            np.testing.assert_allclose(got[n, ..., c], _keras_value(expect), atol=1e-4)


@pytest.mark.parametrize("layout", LAYOUTS, ids=lambda v: f"{v[0][9:]}{v[1]}")
def test_elastic_transform_seeded_and_statistics(layout):
    data_format, rank = layout
    x = _image(data_format, rank)
    a = np.asarray(fi.elastic_transform(x, seed=3, data_format=data_format))
    b = np.asarray(fi.elastic_transform(x, seed=3, data_format=data_format))
    c = np.asarray(fi.elastic_transform(x, seed=4, data_format=data_format))
    np.testing.assert_array_equal(a, b)
    assert a.shape == x.shape and not np.allclose(a, c)
    # Reflect fill and a convex blend: values stay in the input's range.
    assert a.min() >= x.min() - 1e-6 and a.max() <= x.max() + 1e-6
    # alpha = 0: no displacement, the identity.
    same = fi.elastic_transform(x, alpha=0.0, seed=1, data_format=data_format)
    np.testing.assert_allclose(np.asarray(same), x, atol=1e-6)
    # The field's spread: N(0, sigma^2) noise blurred by a unit-sum kernel.
    field = elastic_coords((8, 32, 32, 1), 1.0, 2.0, 0)[2] - np.arange(32)[None, None, :, None]
    assert 0.2 < float(np.std(field)) < 2.0 and abs(float(np.mean(field))) < 0.1


# ---- NumPy float64 references ----

def _np_patches(x, k, s):
    n, h, w, c = x.shape
    oh, ow = (h - k) // s + 1, (w - k) // s + 1
    out = np.zeros((n, oh, ow, k * k * c))
    for i in range(oh):
        for j in range(ow):
            out[:, i, j] = x[:, i * s:i * s + k, j * s:j * s + k, :].reshape(n, -1)
    return out


def _np_sobel(x):
    ky = np.array([[-1, -2, -1], [0, 0, 0], [1, 2, 1]], np.float64)
    p = np.pad(x.astype(np.float64), ((0, 0), (1, 1), (1, 1), (0, 0)))
    h, w = x.shape[1:3]
    out = np.zeros(x.shape + (2,))
    for i in range(3):
        for j in range(3):
            out[..., 0] += ky[i, j] * p[:, i:i + h, j:j + w]
            out[..., 1] += ky.T[i, j] * p[:, i:i + h, j:j + w]
    return out


NUMPY_CASES = [
    ("crop", lambda x: fi.crop_images(x, 1, 2, 2, 1),
     lambda x: x[:, 1:-2, 2:-1]),
    ("crop_target", lambda x: fi.crop_images(x, top_cropping=0, bottom_cropping=1,
                                            left_cropping=3, target_width=2),
     lambda x: x[:, 0:5, 3:5]),
    ("pad", lambda x: fi.pad_images(x, 1, 0, 2, 3),
     lambda x: np.pad(x, ((0, 0), (1, 2), (0, 3), (0, 0)))),
    ("pad_target", lambda x: fi.pad_images(x, bottom_padding=1, target_height=9,
                                          left_padding=2, right_padding=0),
     lambda x: np.pad(x, ((0, 0), (2, 1), (2, 0), (0, 0)))),
    ("gray", fi.rgb_to_grayscale,
     lambda x: (x @ np.array([0.2989, 0.587, 0.114]))[..., None]),
    ("patches", lambda x: fi.extract_patches(x, 2), lambda x: _np_patches(x, 2, 2)),
    ("patches_s1", lambda x: fi.extract_patches(x, 3, strides=1), lambda x: _np_patches(x, 3, 1)),
    ("sobel", fi.sobel_edges, _np_sobel),
]


@pytest.mark.parametrize("case", NUMPY_CASES, ids=lambda c: c[0])
def test_matches_numpy_float64(case):
    _, fn, reference = case
    x = _image("channels_last", 4)
    got = np.asarray(fn(x))
    np.testing.assert_allclose(got, reference(x.astype(np.float64)), atol=1e-5)


# ---- symbolic shapes and Functional graphs ----

SYMBOLIC = CASES + [
    ("sobel", "sobel_edges", {}),
    ("elastic", "elastic_transform", dict(seed=1)),
]


@pytest.mark.parametrize("data_format", ["channels_last", "channels_first"])
@pytest.mark.parametrize("case", SYMBOLIC, ids=lambda c: c[0])
def test_symbolic_shape_and_functional_graph(case, data_format):
    _, name, kwargs = case
    fn = getattr(fi, name)
    x = _image(data_format, 4)
    eager = np.asarray(fn(x, data_format=data_format, **kwargs))
    sym = fn(KerasTensor((None,) + x.shape[1:]), data_format=data_format, **kwargs)
    assert tuple(sym.shape) == (None,) + eager.shape[1:]
    inp = fkeras.Input(x.shape[1:])
    model = fkeras.Model(inp, fn(inp, data_format=data_format, **kwargs))
    np.testing.assert_allclose(np.asarray(model(x)), eager, atol=1e-6)


def test_symbolic_map_coordinates_ssim_scale_and_translate():
    coords = fi.map_coordinates(KerasTensor((5, 6)), KerasTensor((2, 3, 4)), 1)
    assert tuple(coords.shape) == (3, 4)
    assert tuple(fi.ssim(KerasTensor((None, 8, 8, 3)), KerasTensor((None, 8, 8, 3)),
                         filter_size=3).shape) == (None,)
    out = fi.scale_and_translate(KerasTensor((None, 6, 7, 3)), (None, 9, 4, 3),
                                 np.array([1.4, 0.6]), np.array([0.0, 0.0]), (1, 2), "linear")
    assert tuple(out.shape) == (None, 9, 4, 3)
    inp = fkeras.Input((6, 7, 3))
    model = fkeras.Model(inp, fi.ssim(inp, fi.gaussian_blur(inp), filter_size=3))
    x = _image("channels_last", 4)
    np.testing.assert_allclose(np.asarray(model(x)),
                               np.asarray(fi.ssim(x, fi.gaussian_blur(x), filter_size=3)),
                               atol=1e-6)


# ---- errors ----

X4 = np.zeros((1, 6, 7, 3), np.float32)
ERRORS = [
    (lambda: fi.rgb_to_grayscale(np.zeros((6, 7))), ValueError, "Invalid images rank"),
    (lambda: fi.rgb_to_grayscale(np.zeros((1, 6, 7, 2))), ValueError, "Invalid channel size"),
    (lambda: fi.rgb_to_hsv(np.zeros((1, 6, 7, 4), np.float32)), ValueError, "must have 3 channels"),
    (lambda: fi.hsv_to_rgb(np.zeros((6, 7, 3), np.int32)), ValueError, "expected float dtype"),
    (lambda: fi.pad_images(X4, 1, 1), ValueError, "Must specify exactly two of top_padding"),
    (lambda: fi.pad_images(X4, -1, 1, 1, 1), ValueError, "top_padding must be >= 0"),
    (lambda: fi.pad_images(X4, top_padding=1, target_height=3, left_padding=0,
                           right_padding=0), ValueError, "bottom_padding must be >= 0"),
    (lambda: fi.crop_images(X4, 1, 1, 1), ValueError, "Must specify exactly two of left_cropping"),
    (lambda: fi.crop_images(X4, 4, 1, 4, 1), ValueError, "target_height must be >= 0"),
    (lambda: fi.resize(X4, (2,)), ValueError, "Expected `size` to be a tuple of 2"),
    (lambda: fi.resize(X4, (0, 2)), ValueError, "must have positive height"),
    (lambda: fi.resize(X4, (2, 2), interpolation="lanczos3"), ValueError, "Lanczos"),
    (lambda: fi.resize(X4, (2, 2), interpolation="area"), ValueError, "interpolation"),
    (lambda: fi.resize(X4, (2, 2), crop_to_aspect_ratio=True, pad_to_aspect_ratio=True),
     ValueError, "Only one of"),
    (lambda: fi.resize(X4, (2, 2), fill_mode="reflect"), ValueError, "Only `'constant'`"),
    (lambda: fi.affine_transform(X4, T1, interpolation="cubic"), ValueError, "interpolation"),
    (lambda: fi.affine_transform(X4, T1, fill_mode="edge"), ValueError, "fill_mode"),
    (lambda: fi.affine_transform(X4, np.zeros((1, 1, 8))), ValueError, "Invalid transform rank"),
    (lambda: fi.perspective_transform(X4, np.zeros((3, 2)), END), ValueError,
     "Invalid start_points shape"),
    (lambda: fi.perspective_transform(X4, np.zeros((1, 4, 2)), END), ValueError,
     "must have the same shape"),
    (lambda: fi.map_coordinates(np.zeros((4, 4)), np.zeros((3, 2)), 1), ValueError,
     "First dim of `coordinates`"),
    (lambda: fi.map_coordinates(np.zeros((4, 4)), np.zeros((2, 2)), 3), NotImplementedError,
     "order<=1"),
    (lambda: fi.map_coordinates(np.zeros((4, 4)), np.zeros((2, 2)), 1, "edge"), ValueError,
     "fill_mode"),
    (lambda: fi.extract_patches(X4, "3"), TypeError, "Invalid `size` argument"),
    (lambda: fi.extract_patches(X4, (1, 2, 3, 4)), ValueError, "tuple of length 2 or 3"),
    (lambda: fi.extract_patches_3d(X4, 2, strides=(1, 1)), ValueError, "Invalid `strides`"),
    (lambda: fi.sobel_edges(X4[0]), ValueError, "expected rank 4"),
    (lambda: fi.scale_and_translate(X4, (1, 3, 3, 3), [1.0, 1.0], [0.0, 0.0], (1, 2), "area"),
     ValueError, "Invalid value for argument `method`"),
    (lambda: fi.elastic_transform(X4, fill_mode="edge"), ValueError, "fill_mode"),
    (lambda: fi.ssim(X4[0, 0], X4), ValueError, "Invalid images rank"),
    (lambda: fi.gaussian_blur(X4, data_format="nhwc"), ValueError, "data_format"),
]


@pytest.mark.parametrize("index", range(len(ERRORS)))
def test_errors(index):
    call, exc, match = ERRORS[index]
    with pytest.raises(exc, match=match):
        call()


# ---- gradients (finite differences, float64 reference device, random cotangent) ----

GRADIENTS = [
    ("crop", lambda x: fi.crop_images(x, 1, 2, 2, 1)),
    ("pad", lambda x: fi.pad_images(x, 1, 0, 2, 3)),
    ("gray", fi.rgb_to_grayscale),
    ("blur", lambda x: fi.gaussian_blur(x, (5, 3), (1.2, 0.8))),
    ("sobel", fi.sobel_edges),
    ("patches", lambda x: fi.extract_patches(x, (2, 3), strides=1, padding="same")),
    ("patches_3d", lambda x: fi.extract_patches_3d(ops.reshape(x, (2, 3, 7, 2, 3)), 2)),
    ("resize", lambda x: fi.resize(x, (4, 9))),
    ("resize_pad", lambda x: fi.resize(x, (5, 5), pad_to_aspect_ratio=True, fill_value=0.2)),
    ("affine", lambda x: fi.affine_transform(x, np.stack([T1, T2]))),
    ("affine_nearest_reflect", lambda x: fi.affine_transform(x, np.stack([T2, T1]), "nearest",
                                                             "reflect")),
    ("affine_fill_cf", lambda x: fi.affine_transform(x, np.stack([T1, T2]), fill_value=0.5,
                                                     data_format="channels_first")),
    ("perspective", lambda x: fi.perspective_transform(x, START, END)),
    ("map_coordinates", lambda x: fi.map_coordinates(
        x, np.random.default_rng(5).random((4, 3, 5)) * 8 - 1, 1, "mirror")),
    ("elastic", lambda x: fi.elastic_transform(x, 5.0, 1.0, seed=2)),
    ("scale_translate", lambda x: fi.scale_and_translate(x, (2, 9, 4, 3), [1.4, 0.6], [0.3, 0.1],
                                                         (1, 2), "cubic")),
    ("hsv", lambda x: fi.rgb_to_hsv(x)),
    ("rgb", lambda x: fi.hsv_to_rgb(x)),
    ("ssim", lambda x: fi.ssim(x, ops.flip(x, 1), filter_size=3)),
]


@pytest.mark.parametrize("case", GRADIENTS, ids=lambda c: c[0])
def test_gradients_match_finite_differences(case):
    _, fn = case
    rng = np.random.default_rng(6)
    # Distinct channel values (hsv's branches and clips are away from their kinks).
    x = rng.random((2, 6, 7, 3)) * 0.6 + np.array([0.05, 0.3, 0.2])
    fd_check(fn, [x], [0], rng, eps=1e-6, tol=1e-5)


@pytest.mark.parametrize("fill_mode", ["constant", "nearest", "wrap", "mirror", "reflect"])
def test_map_coordinates_gradient_in_coordinates(fill_mode):
    # Order 1 differentiates the interpolation weights in the coordinates (Keras's torch
    # backend does too); coordinates kept away from integers, where floor jumps.
    rng = np.random.default_rng(7)
    x = rng.random((5, 6, 3))
    coords = rng.random((3, 4, 5)) * 9 - 2
    coords += np.where(np.abs(coords - np.round(coords)) < 0.05, 0.1, 0.0)
    fd_check(lambda a, c: fi.map_coordinates(a, c, 1, fill_mode, 0.4), [x, coords], [0, 1],
             rng, eps=1e-7, tol=1e-5)


@pytest.mark.parametrize("order", [0, 1])
@pytest.mark.parametrize("fill_mode", ["constant", "reflect"])
def test_map_coordinates_gradients_match_keras(order, fill_mode):
    keras = pytest.importorskip("keras")
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(9)
    x = rng.random((5, 6, 3)).astype(np.float32)
    coords = (rng.random((3, 4, 7)) * 9 - 2).astype(np.float32)
    cot = rng.standard_normal((4, 7)).astype(np.float32)
    xt, ct = torch.tensor(x, requires_grad=True), torch.tensor(coords, requires_grad=True)
    y = keras.ops.image.map_coordinates(xt, ct, order, fill_mode, 0.4)
    (y * torch.tensor(cot)).sum().backward()
    xv, cv = fkeras.Variable(x), fkeras.Variable(coords)
    with fkeras.GradientTape() as tape:
        loss = ops.sum(fi.map_coordinates(xv, cv, order, fill_mode, 0.4) * cot)
    gx, gc = tape.gradient(loss, [xv, cv])
    np.testing.assert_allclose(np.asarray(gx), xt.grad.numpy(), atol=1e-5)
    if order == 0:  # torch's round has a zero gradient
        assert gc is None or not np.any(np.asarray(gc))
    else:
        np.testing.assert_allclose(np.asarray(gc), ct.grad.numpy(), atol=1e-5)


INTEGER_CASES = [
    ("resize", dict(size=(4, 5))),
    ("resize", dict(size=(9, 13), interpolation="bicubic")),
    ("affine_transform", dict(transform=np.stack([T1, T2]))),
    ("rgb_to_grayscale", {}),
    ("pad_images", dict(top_padding=1, bottom_padding=1, left_padding=2, right_padding=0)),
    ("crop_images", dict(top_cropping=1, bottom_cropping=1, left_cropping=2, right_cropping=0)),
    ("extract_patches", dict(size=2)),
]


@pytest.mark.parametrize("case", INTEGER_CASES, ids=lambda c: f"{c[0]}-{len(c[1])}")
def test_uint8_images_match_keras(case):
    keras = pytest.importorskip("keras")
    torch = pytest.importorskip("torch")
    name, kwargs = case
    x = (np.random.default_rng(8).random((2, 6, 7, 3)) * 255).astype(np.uint8)
    expect = getattr(keras.ops.image, name)(torch.tensor(x), **_torchify(kwargs))
    got = np.asarray(getattr(fi, name)(x, **kwargs))
    assert got.dtype == np.uint8
    np.testing.assert_array_equal(got, _keras_value(expect))
