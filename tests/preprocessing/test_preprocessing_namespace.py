"""fkeras.preprocessing: Keras 3's module, the fkeras.utils functions under Keras's names, and
smart_resize (values against a float64 NumPy reference and against Keras)."""

import inspect

import numpy as np
import pytest

import fkeras
from fkeras import preprocessing

ALIASES = [
    ("image_dataset_from_directory", preprocessing, fkeras.utils),
    ("text_dataset_from_directory", preprocessing, fkeras.utils),
    ("timeseries_dataset_from_array", preprocessing, fkeras.utils),
    ("array_to_img", preprocessing.image, fkeras.utils),
    ("img_to_array", preprocessing.image, fkeras.utils),
    ("load_img", preprocessing.image, fkeras.utils),
    ("save_img", preprocessing.image, fkeras.utils),
    ("pad_sequences", preprocessing.sequence, fkeras.utils),
]


@pytest.mark.parametrize("name,module,home", ALIASES, ids=[a[0] for a in ALIASES])
def test_names_are_the_utils_functions(name, module, home):
    assert getattr(module, name) is getattr(home, name)


def test_lazy_top_level_attribute():
    assert fkeras.preprocessing is preprocessing and fkeras.preprocessing.image.smart_resize


def _reference_smart_resize(x, size):
    """float64 NumPy: Keras's centred crop box, then half-pixel bilinear resize."""
    h, w = x.shape[:2]
    th, tw = size
    ch = max(min(h, int(float(w * th) / tw)), 1)
    cw = max(min(w, int(float(h * tw) / th)), 1)
    top, left = int(float(h - ch) / 2), int(float(w - cw) / 2)
    x = x[top:top + ch, left:left + cw].astype(np.float64)

    def axis(n_in, n_out):
        src = np.maximum((np.arange(n_out) + 0.5) * n_in / n_out - 0.5, 0.0)
        lo = np.minimum(np.floor(src).astype(int), n_in - 1)
        hi = np.minimum(lo + 1, n_in - 1)
        m = np.zeros((n_out, n_in))
        np.add.at(m, (np.arange(n_out), lo), 1 - (src - lo))
        np.add.at(m, (np.arange(n_out), hi), src - lo)
        return m

    return np.einsum("oh,pw,hwc->opc", axis(ch, th), axis(cw, tw), x)


@pytest.mark.parametrize("shape,size", [((5, 7, 3), (4, 4)), ((34, 50, 1), (20, 20)),
                                        ((9, 6, 2), (12, 2)), ((6, 6, 2), (6, 6)),
                                        ((3, 8, 1), (5, 3))])
def test_smart_resize_values(shape, size):
    x = np.random.default_rng(0).random(shape).astype(np.float32)
    got = preprocessing.image.smart_resize(x, size)
    assert isinstance(got, np.ndarray) and got.dtype == np.float32
    np.testing.assert_allclose(got, _reference_smart_resize(x, size), rtol=1e-5, atol=1e-6)
    batch = preprocessing.image.smart_resize(np.stack([x, 2 * x]), size)
    np.testing.assert_allclose(batch[1], 2 * got, rtol=1e-5, atol=1e-6)
    first = preprocessing.image.smart_resize(np.moveaxis(x, -1, 0), size,
                                             data_format="channels_first")
    np.testing.assert_allclose(np.moveaxis(first, 0, -1), got, rtol=1e-6)


@pytest.mark.parametrize("call,error,text", [
    (lambda x: preprocessing.image.smart_resize(x, (2, 2, 2)), ValueError,
     "Expected `size` to be a tuple of 2 integers"),
    (lambda x: preprocessing.image.smart_resize(x[0], (2, 2)), ValueError, "incorrect rank"),
    (lambda x: preprocessing.image.smart_resize(x, (2, 2), antialias=True), TypeError,
     "unexpected keyword arguments: ['antialias']"),
    (lambda x: preprocessing.image.smart_resize(x, (2, 2), "lanczos3"), ValueError,
     "Lanczos"),
])
def test_smart_resize_errors(call, error, text):
    with pytest.raises(error) as info:
        call(np.zeros((4, 4, 1), np.float32))
    assert text in str(info.value)


def test_smart_resize_keeps_integer_dtype_and_tensors():
    x = np.arange(48, dtype=np.uint8).reshape(4, 4, 3)
    assert preprocessing.image.smart_resize(x, (2, 2)).dtype == np.uint8
    out = preprocessing.image.smart_resize(fkeras.ops.convert_to_tensor(x.astype("float32")),
                                           (2, 2))
    assert isinstance(out, fkeras.Tensor) and out.shape == (2, 2, 3)


@pytest.mark.parametrize("shape,size,interpolation,data_format,dtype", [
    ((5, 7, 3), (4, 4), "bilinear", "channels_last", "float32"),
    ((2, 34, 50, 3), (20, 20), "bilinear", "channels_last", "float32"),
    ((2, 3, 9, 6), (4, 5), "nearest", "channels_first", "float32"),
    ((3, 9, 6), (12, 2), "bicubic", "channels_first", "float64"),
    ((1, 8, 8, 1), (3, 5), "bilinear", "channels_last", "uint8"),
])
def test_smart_resize_matches_keras(shape, size, interpolation, data_format, dtype):
    keras = pytest.importorskip("keras")
    x = (np.random.default_rng(1).random(shape) * 255).astype(dtype)
    want = keras.preprocessing.image.smart_resize(x, size, interpolation, data_format)
    got = preprocessing.image.smart_resize(x, size, interpolation, data_format)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), atol=1e-3)


def test_matches_keras_names_and_signatures():
    keras = pytest.importorskip("keras")
    for path in ("preprocessing", "preprocessing.image", "preprocessing.sequence"):
        theirs = __import__(f"keras.{path}", fromlist=["_"])
        ours = __import__(f"fkeras.{path}", fromlist=["_"])
        names = sorted(n for n in dir(theirs) if not n.startswith("_"))
        assert names == sorted(ours.__all__), path
        for name in names:
            if inspect.isfunction(getattr(theirs, name)):
                assert inspect.signature(getattr(ours, name)) == \
                    inspect.signature(getattr(theirs, name)), f"{path}.{name}"
