"""An empty batch through the public paths: never a crash (the kernels once divided by N),
and either a clear ValueError or the correct empty results: zero-row outputs, and exact zero
gradients for a loss summed over no samples."""

import numpy as np
import pytest

import fkeras
from fkeras import layers


def pooling_cnn(channels=20):
    # More than 16 channels: the pooling backward splits channels into blocks by batch size.
    model = fkeras.Sequential([
        fkeras.Input((8, 8, channels)),
        layers.Conv2D(24, 3, padding="same", activation="relu"),
        layers.BatchNormalization(),
        layers.MaxPooling2D(),
        layers.AveragePooling2D(),
        layers.Flatten(),
        layers.Dense(3, activation="softmax"),
    ])
    model.compile("adam", "sparse_categorical_crossentropy")
    return model


def recurrent_model():
    model = fkeras.Sequential([
        fkeras.Input((5, 4)),
        layers.LSTM(6, return_sequences=True),
        layers.GRU(5, return_sequences=True),
        layers.SimpleRNN(3),
        layers.Dense(2),
    ])
    model.compile("sgd", "mse")
    return model


@pytest.mark.parametrize("make", [pooling_cnn, recurrent_model])
def test_gradient_tape_on_an_empty_batch(make):
    model = make()
    x = np.zeros((0,) + tuple(model.inputs[0].shape[1:]), np.float32)
    with fkeras.GradientTape() as tape:
        out = model(x, training=True)
        loss = fkeras.ops.sum(out)
    assert tuple(out.shape) == (0,) + tuple(model.outputs[0].shape[1:])
    grads = tape.gradient(loss, model.trainable_weights)
    assert len(grads) == len(model.trainable_weights)
    for g, w in zip(grads, model.trainable_weights):
        g = np.zeros(w.shape) if g is None else np.asarray(g)
        assert g.shape == tuple(w.shape)
        np.testing.assert_array_equal(g, 0.0)  # the sum over no samples does not depend on w


@pytest.mark.parametrize("make", [pooling_cnn, recurrent_model])
def test_batch_methods_on_an_empty_batch(make):
    model = make()
    x = np.zeros((0,) + tuple(model.inputs[0].shape[1:]), np.float32)
    y = np.zeros((0,), np.int64) if make is pooling_cnn else np.zeros((0, 2), np.float32)
    assert model.predict_on_batch(x).shape == (0,) + tuple(model.outputs[0].shape[1:])
    for call in (model.test_on_batch, model.train_on_batch):
        try:
            loss = call(x, y)
        except ValueError as e:  # a clear refusal is fine; a crash or a made-up NaN is not
            assert "empty" in str(e) or "0 samples" in str(e), str(e)
            continue
        assert np.isfinite(loss)
    after = model.predict_on_batch(np.ones((2,) + x.shape[1:], np.float32))
    assert np.isfinite(after).all()
