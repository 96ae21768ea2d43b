"""Weights: files written by real Keras 3.15 load into fkeras's applications and predict the
same; `weights="imagenet"` goes through the Keras cache ($KERAS_HOME/models) and fails clearly
without network; Keras's argument checks."""

import os

import numpy as np
import pytest

import fkeras
from fkeras.saving import legacy_h5
from fkeras.utils import file_utils

h5py = pytest.importorskip("h5py")


def _perturb_bn(model, rng):
    """Non-trivial batch-norm statistics, so a mis-assigned weight shows in the output."""
    for layer in model.layers:
        if type(layer).__name__ == "BatchNormalization":
            layer.moving_mean.assign(rng.normal(0, 0.1, layer.moving_mean.shape))
            layer.moving_variance.assign(rng.uniform(0.5, 1.5, layer.moving_variance.shape))


CASES = [
    ("mobilenet_v2", "MobileNetV2", dict(alpha=0.35, input_shape=(96, 96, 3),
                                         classifier_activation=None), (2, 96, 96, 3)),
    ("resnet50", "ResNet50", dict(input_shape=(64, 64, 3), include_top=False, pooling="avg"),
     (2, 64, 64, 3)),
]


FORMATS = [(CASES[0], "weights.h5"), (CASES[0], "legacy.h5"), (CASES[0], "model.h5"),
           (CASES[1], "weights.h5")]


@pytest.mark.parametrize("case,fmt", FORMATS, ids=[f"{c[1]}-{f}" for c, f in FORMATS])
def test_keras_written_weights_predict_the_same(tmp_path, case, fmt):
    module, fn, kwargs, shape = case
    keras = pytest.importorskip("keras")
    from keras.src.legacy.saving import legacy_h5_format

    rng = np.random.default_rng(1)
    keras.utils.set_random_seed(1)
    theirs = getattr(getattr(keras.applications, module), fn)(weights=None, **kwargs)
    _perturb_bn(theirs, rng)
    path = str(tmp_path / f"{fn}.{fmt}")
    if fmt == "weights.h5":
        theirs.save_weights(path)
    elif fmt == "legacy.h5":  # the layout of Keras's published ImageNet files
        path = str(tmp_path / f"{fn}.h5")
        with h5py.File(path, "w") as f:
            legacy_h5_format.save_weights_to_hdf5_group(f, theirs)
    else:  # a whole model in the legacy format: its `model_weights` group
        path = str(tmp_path / f"{fn}_model.h5")
        theirs.save(path)
    x = rng.uniform(0, 255, shape).astype("float32")
    prep = getattr(keras.applications, module).preprocess_input
    expected = np.asarray(theirs.predict(prep(x.copy()), verbose=0))

    ours = getattr(getattr(fkeras.applications, module), fn)(weights=path, **kwargs)
    got = ours.predict(getattr(fkeras.applications, module).preprocess_input(x.copy()),
                       verbose=0)
    scale = max(1.0, float(np.abs(expected).max()))
    assert np.abs(got - expected).max() <= 1e-4 * scale


def test_fkeras_weights_round_trip_into_keras(tmp_path):
    keras = pytest.importorskip("keras")
    kwargs = dict(alpha=0.35, input_shape=(32, 32, 3), include_top=False, pooling="max")
    ours = fkeras.applications.MobileNetV2(weights=None, **kwargs)
    _perturb_bn(ours, np.random.default_rng(2))
    ours.save_weights(tmp_path / "m.weights.h5")
    theirs = keras.applications.MobileNetV2(weights=None, **kwargs)
    theirs.load_weights(tmp_path / "m.weights.h5")
    x = np.random.default_rng(3).uniform(-1, 1, (2, 32, 32, 3)).astype("float32")
    np.testing.assert_allclose(ours.predict(x, verbose=0),
                               np.asarray(theirs.predict(x, verbose=0)), rtol=1e-4, atol=1e-4)


def _write_legacy(model, path):
    with h5py.File(path, "w") as f:
        legacy_h5._write_model_weights(model, f)


@pytest.fixture
def keras_home(tmp_path, monkeypatch):
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))

    def refuse(origin, target):
        raise Exception(f"URL fetch failure on {origin}: None -- no network")

    monkeypatch.setattr(file_utils, "_download", refuse)
    return tmp_path


def test_imagenet_weights_come_from_the_cache(keras_home):
    kwargs = dict(alpha=0.35, input_shape=(96, 96, 3), include_top=False)
    source = fkeras.applications.MobileNetV2(weights=None, **kwargs)
    _perturb_bn(source, np.random.default_rng(4))
    os.makedirs(keras_home / "models")
    fname = "mobilenet_v2_weights_tf_dim_ordering_tf_kernels_0.35_96_no_top.h5"
    _write_legacy(source, keras_home / "models" / fname)
    model = fkeras.applications.MobileNetV2(weights="imagenet", **kwargs)
    for a, b in zip(source.weights, model.weights):
        np.testing.assert_array_equal(np.asarray(a.numpy()), np.asarray(b.numpy()))


@pytest.mark.parametrize("fn,kwargs,fname", [
    ("ResNet50", dict(include_top=False), "resnet50_weights_tf_dim_ordering_tf_kernels_notop.h5"),
    ("VGG16", dict(include_top=False), "vgg16_weights_tf_dim_ordering_tf_kernels_notop.h5"),
    ("MobileNet", dict(alpha=0.25, input_shape=(128, 128, 3)), "mobilenet_2_5_128_tf.h5"),
])
def test_imagenet_without_network_names_url_and_cache(keras_home, fn, kwargs, fname):
    with pytest.raises(Exception, match="Could not download") as info:
        getattr(fkeras.applications, fn)(weights="imagenet", **kwargs)
    message = str(info.value)
    assert "https://storage.googleapis.com/tensorflow/keras-applications/" in message
    assert fname in message and str(keras_home / "models" / fname) in message


def test_load_weights_by_name_skips_absent_layers(tmp_path):
    model = fkeras.applications.MobileNetV2(weights=None, alpha=0.35, input_shape=(32, 32, 3),
                                            classes=3)
    other = fkeras.applications.MobileNetV2(weights=None, alpha=0.35, input_shape=(32, 32, 3),
                                            classes=4)
    _write_legacy(model, tmp_path / "w.h5")
    head_before = np.asarray(other.get_layer("predictions").kernel.numpy()).copy()
    with pytest.raises(ValueError, match="Shape mismatch in layer 'predictions'"):
        other.load_weights(tmp_path / "w.h5", by_name=True)
    with pytest.warns(UserWarning, match="predictions"):
        other.load_weights(tmp_path / "w.h5", by_name=True, skip_mismatch=True)
    np.testing.assert_array_equal(other.get_layer("Conv1").kernel.numpy(),
                                  model.get_layer("Conv1").kernel.numpy())
    np.testing.assert_array_equal(other.get_layer("predictions").kernel.numpy(), head_before)


@pytest.mark.parametrize("fn,kwargs,message", [
    ("ResNet50", dict(weights="imagenet", classes=10), "classes` should be 1000"),
    ("VGG16", dict(weights="/no/such/file.h5"), "`weights` argument should be"),
    ("Xception", dict(weights="imagenet", input_shape=(100, 100, 3)), r"\(299, 299, 3\)"),
    ("InceptionV3", dict(weights=None, include_top=False, input_shape=(60, 60, 3)),
     "at least 75x75"),
    ("MobileNetV2", dict(weights="imagenet", alpha=0.6), "alpha must be one of"),
    ("MobileNet", dict(weights="imagenet", depth_multiplier=2), "depth multiplier must be 1"),
    ("DenseNet121", dict(weights=None, input_shape=(None, None, 3)), "static `input_shape`"),
])
def test_argument_errors_like_keras(keras_home, fn, kwargs, message):
    with pytest.raises(ValueError, match=message):
        getattr(fkeras.applications, fn)(**kwargs)
    keras = pytest.importorskip("keras")
    with pytest.raises(ValueError, match=message):
        getattr(keras.applications, fn)(**kwargs)


def test_classifier_activation_with_weights_must_be_softmax_or_none(tmp_path):
    model = fkeras.applications.MobileNetV2(weights=None, alpha=0.35, input_shape=(32, 32, 3))
    model.save_weights(tmp_path / "w.weights.h5")
    with pytest.raises(ValueError, match="Only `None` and `softmax`"):
        fkeras.applications.MobileNetV2(weights=str(tmp_path / "w.weights.h5"), alpha=0.35,
                                        input_shape=(32, 32, 3), classifier_activation="relu")
