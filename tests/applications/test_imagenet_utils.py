"""preprocess_input (NumPy float64 references, and Keras where installed), decode_predictions
through the Keras cache, the download error without network, and the input-shape checks."""

import json
import os

import numpy as np
import pytest

import fkeras
from fkeras.applications import imagenet_utils
from fkeras.utils import file_utils

RNG = np.random.default_rng(0)
MEAN = {"caffe": [103.939, 116.779, 123.68], "torch": [0.485, 0.456, 0.406]}
STD = [0.229, 0.224, 0.225]


def _reference(x, mode, data_format):
    """float64 reference of the three conventions, written from their definitions."""
    x = np.asarray(x, dtype=np.float64)
    c_axis = -1 if data_format == "channels_last" else (0 if x.ndim == 3 else 1)
    x = np.moveaxis(x, c_axis, -1)
    if mode == "tf":
        y = x / 127.5 - 1.0
    elif mode == "torch":
        y = (x / 255.0 - np.array(MEAN["torch"])) / np.array(STD)
    else:
        y = x[..., ::-1] - np.array(MEAN["caffe"])
    return np.moveaxis(y, -1, c_axis)


MODULES = [("vgg16", "caffe"), ("vgg19", "caffe"), ("resnet", "caffe"), ("resnet50", "caffe"),
           ("resnet_v2", "tf"), ("densenet", "torch"), ("xception", "tf"),
           ("inception_v3", "tf"), ("inception_resnet_v2", "tf"), ("mobilenet", "tf"),
           ("mobilenet_v2", "tf")]
SHAPES = [((2, 5, 4, 3), "channels_last"), ((5, 4, 3), "channels_last"),
          ((2, 3, 5, 4), "channels_first"), ((3, 5, 4), "channels_first")]


@pytest.mark.parametrize("shape,data_format", SHAPES)
@pytest.mark.parametrize("module,mode", MODULES)
def test_preprocess_input_matches_reference(module, mode, shape, data_format):
    fn = getattr(fkeras.applications, module).preprocess_input
    x = RNG.uniform(0, 255, shape).astype("float32")
    expected = _reference(x, mode, data_format)
    got = fn(x.copy(), data_format=data_format)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-5)
    tensor = fn(fkeras.ops.convert_to_tensor(x), data_format=data_format)
    np.testing.assert_allclose(np.asarray(tensor), expected, rtol=1e-6, atol=1e-5)


@pytest.mark.parametrize("mode", ["caffe", "tf", "torch"])
def test_preprocess_input_dtypes_and_in_place_like_keras(mode):
    keras = pytest.importorskip("keras")
    for dtype in ("uint8", "float32", "float64", "int32"):
        x = RNG.uniform(0, 255, (2, 4, 4, 3)).astype(dtype)
        ours_in, theirs_in = x.copy(), x.copy()
        ours = imagenet_utils.preprocess_input(ours_in, mode=mode)
        theirs = keras.applications.imagenet_utils.preprocess_input(theirs_in, mode=mode)
        assert ours.dtype == theirs.dtype
        np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-5)
        np.testing.assert_array_equal(ours_in, theirs_in)  # same in-place behaviour


def test_preprocess_input_symbolic_in_a_model():
    inputs = fkeras.Input((4, 4, 3))
    model = fkeras.Model(inputs, fkeras.applications.vgg16.preprocess_input(inputs))
    x = RNG.uniform(0, 255, (2, 4, 4, 3)).astype("float32")
    np.testing.assert_allclose(model.predict(x, verbose=0),
                               _reference(x, "caffe", "channels_last"), rtol=1e-6, atol=1e-4)


def test_preprocess_input_errors():
    with pytest.raises(ValueError, match="mode"):
        imagenet_utils.preprocess_input(np.zeros((1, 2, 2, 3)), mode="bgr")
    with pytest.raises(ValueError, match="data_format"):
        imagenet_utils.preprocess_input(np.zeros((1, 2, 2, 3)), data_format="nhwc")


@pytest.fixture
def keras_home(tmp_path, monkeypatch):
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    monkeypatch.setattr(imagenet_utils, "_CLASS_INDEX", None)
    return tmp_path


def _no_network(monkeypatch):
    def refuse(origin, target):
        raise Exception(f"URL fetch failure on {origin}: None -- no network")

    monkeypatch.setattr(file_utils, "_download", refuse)


def test_decode_predictions_reads_the_cached_class_index(keras_home, monkeypatch):
    _no_network(monkeypatch)
    index = {str(i): [f"n{i:08d}", f"class_{i}"] for i in range(1000)}
    os.makedirs(keras_home / "models")
    (keras_home / "models" / "imagenet_class_index.json").write_text(json.dumps(index))
    monkeypatch.setattr(imagenet_utils, "CLASS_INDEX_HASH", None)  # our stand-in file
    preds = np.zeros((2, 1000), dtype="float32")
    preds[0, [7, 3, 999]] = [0.5, 0.3, 0.2]
    preds[1, 42] = 1.0
    decoded = fkeras.applications.resnet50.decode_predictions(preds, top=3)
    assert [d[:2] for d in decoded[0]] == [("n00000007", "class_7"), ("n00000003", "class_3"),
                                           ("n00000999", "class_999")]
    assert decoded[0][0][2] == pytest.approx(0.5)
    assert decoded[1][0][:2] == ("n00000042", "class_42") and len(decoded[1]) == 3


def test_decode_predictions_without_network_names_url_and_cache(keras_home, monkeypatch):
    _no_network(monkeypatch)
    with pytest.raises(Exception, match="imagenet_class_index.json") as info:
        imagenet_utils.decode_predictions(np.zeros((1, 1000)))
    message = str(info.value)
    assert imagenet_utils.CLASS_INDEX_PATH in message
    assert str(keras_home / "models" / "imagenet_class_index.json") in message


def test_decode_predictions_shape_error():
    with pytest.raises(ValueError, match=r"\(samples, 1000\).*\(2, 10\)"):
        imagenet_utils.decode_predictions(np.zeros((2, 10)))


@pytest.mark.parametrize("kwargs,message", [
    (dict(input_shape=(4, 64, 64, 3)), "three integers"),
    (dict(input_shape=(16, 64, 3)), "at least 32x32"),
    (dict(input_shape=(None, None, 3), require_flatten=True), "static `input_shape`"),
    (dict(input_shape=(64, 64, 1), weights="imagenet"), "3 channels"),
    (dict(input_shape=(64, 64, 3), weights="imagenet", require_flatten=True),
     r"should be \(224, 224, 3\)"),
])
def test_obtain_input_shape_errors(kwargs, message):
    args = dict(default_size=224, min_size=32, data_format="channels_last",
                require_flatten=False)
    args.update(kwargs)
    with pytest.raises(ValueError, match=message):
        imagenet_utils.obtain_input_shape(args.pop("input_shape"), **args)


@pytest.mark.parametrize("input_shape,require_flatten,expected", [
    (None, True, (224, 224, 3)), (None, False, (None, None, 3)),
    ((100, 120, 3), False, (100, 120, 3)), ((64, 64, 1), True, (64, 64, 1)),
])
def test_obtain_input_shape_values(input_shape, require_flatten, expected):
    got = imagenet_utils.obtain_input_shape(input_shape, 224, 32, "channels_last",
                                            require_flatten)
    assert got == expected
