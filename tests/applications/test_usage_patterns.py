"""The ways Keras's guides use applications: feature extraction from `vgg19.layers`
(Functional API guide), a base model with `input_tensor`, a frozen base under a new head
(transfer learning guide)."""

import numpy as np
import pytest

import fkeras
from app_table import large_enabled
from fkeras import layers


def _guide_feature_extraction(**kwargs):
    # "Extract and reuse nodes in the graph of layers", with weights=None as in issue 16.
    vgg19 = fkeras.applications.VGG19(weights=None, **kwargs)
    features_list = [layer.output for layer in vgg19.layers]
    feat_extraction_model = fkeras.Model(inputs=vgg19.input, outputs=features_list)
    size = kwargs.get("input_shape", (224, 224, 3))[0]
    img = np.random.random((1, size, size, 3)).astype("float32")
    extracted_features = feat_extraction_model(img)
    assert len(extracted_features) == len(vgg19.layers) == 26
    assert tuple(extracted_features[1].shape) == (1, size, size, 64)  # block1_conv1
    assert tuple(extracted_features[-1].shape) == (1, 1000)
    np.testing.assert_allclose(np.asarray(extracted_features[-1]), np.asarray(vgg19(img)),
                               rtol=1e-5, atol=1e-7)


def test_functional_api_guide_feature_extraction_small_input():
    _guide_feature_extraction(input_shape=(32, 32, 3))


@pytest.mark.skipif(not large_enabled(), reason="143M parameters: set FKERAS_TEST_LARGE_APPS=1")
def test_functional_api_guide_feature_extraction_verbatim():
    _guide_feature_extraction()


def test_input_tensor_and_source_inputs():
    inputs = fkeras.Input((64, 64, 3), name="image")
    scaled = layers.Lambda(lambda t: t / 255.0)(inputs)
    model = fkeras.applications.ResNet50V2(weights=None, input_tensor=scaled,
                                           include_top=False, pooling="max")
    assert model.inputs[0] is inputs and model.layers[0].name == "image"
    assert tuple(model.output.shape) == (None, 2048)
    out = model.predict(np.random.default_rng(0).uniform(0, 255, (2, 64, 64, 3)), verbose=0)
    assert out.shape == (2, 2048)


def test_transfer_learning_frozen_base_trains_the_head():
    base = fkeras.applications.MobileNetV2(weights=None, alpha=0.35, include_top=False,
                                           input_shape=(32, 32, 3))
    base.trainable = False
    inputs = fkeras.Input((32, 32, 3))
    x = base(inputs, training=False)
    x = layers.GlobalAveragePooling2D()(x)
    outputs = layers.Dense(1)(x)
    model = fkeras.Model(inputs, outputs)
    frozen = [np.asarray(w.numpy()).copy() for w in base.weights]
    model.compile(optimizer="adam", loss="mse")
    rng = np.random.default_rng(0)
    model.fit(rng.uniform(-1, 1, (8, 32, 32, 3)), rng.normal(size=(8, 1)), epochs=1,
              batch_size=4, verbose=0)
    assert len(model.trainable_weights) == 2
    for before, w in zip(frozen, base.weights):
        np.testing.assert_array_equal(before, np.asarray(w.numpy()))
