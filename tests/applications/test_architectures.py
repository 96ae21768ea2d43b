"""fkeras.applications against Keras 3.15: the same layer names in the same order, the same
weight shapes in the same order, the same parameter counts and output shapes, built with
`weights=None` in fresh sessions (auto-named layers then get the same names)."""

import importlib

import numpy as np
import pytest

import fkeras
from fkeras.layers import OpLayer
from app_structure import structure
from app_table import LARGE, SMALL, config_id, large_enabled

keras = pytest.importorskip("keras")


def _structure(model):
    # Raw ops on symbolic tensors (MobileNetV3's hard sigmoid: `x + 3.0`) are OpLayers in
    # fkeras's `model.layers`; Keras 3 keeps such operations out of `model.layers`.
    return structure(model, skip=(OpLayer,))


def _build(package, module, fn, kwargs):
    mod = importlib.import_module(f"{package}.applications.{module}")
    if not hasattr(mod, fn):  # builders Keras keeps private (densenet.DenseNet)
        mod = importlib.import_module(f"{package}.src.applications.{module}")
    return getattr(mod, fn)(weights=None, **kwargs)


def _compare(module, fn, kwargs):
    fkeras.utils.clear_session()
    ours = _structure(_build("fkeras", module, fn, kwargs))
    keras.backend.clear_session()
    theirs = _structure(_build("keras", module, fn, kwargs))
    # CustomScaleLayer and the like are application-private classes in both libraries.
    assert ours.pop("classes") == theirs.pop("classes")
    assert ours == theirs


@pytest.mark.parametrize("entry", SMALL, ids=config_id)
def test_same_structure_as_keras(entry):
    _compare(*entry)


@pytest.mark.skipif(not large_enabled(), reason="large models: set FKERAS_TEST_LARGE_APPS=1")
@pytest.mark.parametrize("entry", LARGE, ids=config_id)
def test_same_structure_as_keras_large(entry):
    _compare(*entry)


TOP_LEVEL = ["VGG16", "VGG19", "ResNet50", "ResNet101", "ResNet152", "ResNet50V2",
             "ResNet101V2", "ResNet152V2", "DenseNet121", "DenseNet169", "DenseNet201",
             "Xception", "InceptionV3", "InceptionResNetV2", "MobileNet", "MobileNetV2",
             "MobileNetV3Small", "MobileNetV3Large", "ConvNeXtTiny", "ConvNeXtSmall",
             "ConvNeXtBase", "ConvNeXtLarge", "ConvNeXtXLarge", "NASNetMobile", "NASNetLarge"]
TOP_LEVEL += [f"EfficientNetB{i}" for i in range(8)]
TOP_LEVEL += [f"EfficientNetV2{v}" for v in ("B0", "B1", "B2", "B3", "S", "M", "L")]


@pytest.mark.parametrize("name", TOP_LEVEL)
def test_exported_where_keras_exports(name):
    assert hasattr(keras.applications, name)
    assert callable(getattr(fkeras.applications, name))


def test_count_params_of_standard_sizes():
    # Figures of the Keras documentation's table (include_top=True, 224x224 or 299x299).
    expected = {"ResNet50": 25_636_712, "MobileNetV2": 3_538_984, "DenseNet121": 8_062_504,
                "Xception": 22_910_480}
    for name, count in expected.items():
        assert getattr(fkeras.applications, name)(weights=None).count_params() == count


def test_small_model_predicts_like_its_functional_graph():
    model = fkeras.applications.MobileNetV2(weights=None, alpha=0.35, input_shape=(32, 32, 3),
                                            include_top=False, pooling="avg")
    x = np.random.default_rng(0).uniform(0, 255, (2, 32, 32, 3)).astype("float32")
    out = model.predict(fkeras.applications.mobilenet_v2.preprocess_input(x), verbose=0)
    assert out.shape == (2, 1280) and np.all(np.isfinite(out))
