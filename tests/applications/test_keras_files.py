"""Application models in `.keras` files: fkeras to fkeras (including the application-defined
layers LayerScale, StochasticDepth, CustomScaleLayer, resolved through the allow-list) and,
for models of catalogue layers, both ways with Keras 3."""

import numpy as np
import pytest

import fkeras
from fkeras.applications import convnext, inception_resnet_v2

X32 = np.random.default_rng(0).uniform(0, 255, (2, 32, 32, 3)).astype("float32")


def _same(a, b, x):
    np.testing.assert_allclose(np.asarray(a.predict(x, verbose=0)),
                               np.asarray(b.predict(x, verbose=0)), rtol=1e-5, atol=1e-5)


def test_convnext_with_its_own_layers_round_trips(tmp_path):
    model = convnext.ConvNeXt(depths=[1, 1, 1, 1], projection_dims=[8, 16, 24, 32],
                              input_shape=(32, 32, 3), classes=3, name="convnext_mini",
                              drop_path_rate=0.1, weights=None)
    model.save(tmp_path / "m.keras")
    loaded = fkeras.saving.load_model(tmp_path / "m.keras")
    assert isinstance(loaded.get_layer("convnext_mini_stage_0_block_0_layer_scale"),
                      convnext.LayerScale)
    assert isinstance(loaded.get_layer("convnext_mini_stage_3_block_0_stochastic_depth"),
                      convnext.StochasticDepth)
    _same(model, loaded, X32)


def test_mobilenet_v2_keras_file_both_ways(tmp_path):
    keras = pytest.importorskip("keras")
    ours = fkeras.applications.MobileNetV2(weights=None, alpha=0.35, input_shape=(32, 32, 3),
                                           classes=4)
    ours.save(tmp_path / "ours.keras")
    theirs = keras.saving.load_model(tmp_path / "ours.keras")
    _same(ours, theirs, X32)
    theirs.save(tmp_path / "theirs.keras")
    _same(fkeras.saving.load_model(tmp_path / "theirs.keras"), theirs, X32)


def test_custom_scale_layer_keras_file_both_ways(tmp_path):
    keras = pytest.importorskip("keras")
    from keras.src.applications.inception_resnet_v2 import CustomScaleLayer

    inputs = keras.Input((8,))
    theirs = keras.Model(inputs, CustomScaleLayer(0.3)([inputs, keras.layers.Dense(8)(inputs)]))
    theirs.save(tmp_path / "theirs.keras")
    ours = fkeras.saving.load_model(tmp_path / "theirs.keras")
    assert isinstance(ours.layers[-1], inception_resnet_v2.CustomScaleLayer)
    x = np.random.default_rng(1).normal(size=(3, 8)).astype("float32")
    _same(ours, theirs, x)
    ours.save(tmp_path / "ours.keras")
    _same(ours, keras.saving.load_model(tmp_path / "ours.keras"), x)
