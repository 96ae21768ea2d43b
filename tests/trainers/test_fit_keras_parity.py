"""One training step and one epoch equal Keras 3's (same weights, SGD) when `keras` is
installed (torch backend unless KERAS_BACKEND says otherwise); skipped otherwise. An MLP for
three losses, and a CNN with BatchNormalization (moving statistics included)."""

import importlib.util
import os

import numpy as np
import pytest

if "KERAS_BACKEND" not in os.environ and importlib.util.find_spec("torch") is not None:
    os.environ["KERAS_BACKEND"] = "torch"  # Keras 3 defaults to TensorFlow
keras = pytest.importorskip("keras")

import fkeras  # noqa: E402


def _pair(loss, activation, units):
    def build(lib):
        inp = lib.Input((6,))
        h = lib.layers.Dense(8, activation="tanh")(inp)
        return lib.Model(inp, lib.layers.Dense(units, activation=activation)(h))

    theirs, ours = build(keras), build(fkeras)
    ours.set_weights([keras.ops.convert_to_numpy(w) for w in theirs.weights])
    theirs.compile(keras.optimizers.SGD(0.1, momentum=0.5), loss, metrics=["accuracy"])
    ours.compile(fkeras.optimizers.SGD(0.1, momentum=0.5), loss, metrics=["accuracy"])
    return theirs, ours


@pytest.mark.parametrize("loss,activation,units", [
    ("sparse_categorical_crossentropy", "softmax", 3),
    ("binary_crossentropy", "sigmoid", 1),
    ("mse", None, 3),
])
def test_training_matches_keras(loss, activation, units):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((48, 6)).astype("float32")
    if loss == "sparse_categorical_crossentropy":
        y = rng.integers(0, 3, 48)
    elif loss == "binary_crossentropy":
        y = (rng.uniform(size=(48, 1)) > 0.5).astype("float32")
    else:
        y = rng.standard_normal((48, 3)).astype("float32")
    theirs, ours = _pair(loss, activation, units)
    k = theirs.train_on_batch(x[:16], y[:16], return_dict=True)
    f = ours.train_on_batch(x[:16], y[:16], return_dict=True)
    assert np.isclose(k["loss"], f["loss"], rtol=1e-5)
    for a, b in zip(theirs.weights, ours.get_weights()):
        np.testing.assert_allclose(keras.ops.convert_to_numpy(a), b, rtol=1e-5, atol=1e-6)
    hk = theirs.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0)
    hf = ours.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0)
    np.testing.assert_allclose(hk.history["loss"], hf.history["loss"], rtol=1e-4)
    np.testing.assert_allclose(hk.history["accuracy"], hf.history["accuracy"])
    for a, b in zip(theirs.weights, ours.get_weights()):
        np.testing.assert_allclose(keras.ops.convert_to_numpy(a), b, rtol=1e-4, atol=1e-5)


def test_cnn_with_batch_normalization_matches_keras():
    def build(lib):
        inp = lib.Input((8, 8, 1))
        h = lib.layers.Conv2D(4, 3, padding="same", use_bias=False)(inp)
        h = lib.layers.BatchNormalization()(h)
        h = lib.layers.Activation("relu")(h)
        h = lib.layers.MaxPooling2D(2)(h)
        h = lib.layers.Flatten()(h)
        return lib.Model(inp, lib.layers.Dense(10, activation="softmax")(h))

    theirs, ours = build(keras), build(fkeras)
    ours.set_weights([keras.ops.convert_to_numpy(w) for w in theirs.weights])
    for model, lib in ((theirs, keras), (ours, fkeras)):
        model.compile(lib.optimizers.SGD(0.1), "sparse_categorical_crossentropy",
                      metrics=["accuracy"])
    rng = np.random.default_rng(1)
    x = rng.uniform(size=(32, 8, 8, 1)).astype("float32")
    y = rng.integers(0, 10, 32)
    k = theirs.train_on_batch(x[:16], y[:16], return_dict=True)
    f = ours.train_on_batch(x[:16], y[:16], return_dict=True)
    assert np.isclose(k["loss"], f["loss"], rtol=1e-5)
    for a, b in zip(theirs.weights, ours.get_weights()):  # moving mean/variance included
        np.testing.assert_allclose(keras.ops.convert_to_numpy(a), b, rtol=1e-4, atol=1e-6)
    hk = theirs.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0)
    hf = ours.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0)
    np.testing.assert_allclose(hk.history["loss"], hf.history["loss"], rtol=1e-4)
    for a, b in zip(theirs.weights, ours.get_weights()):
        np.testing.assert_allclose(keras.ops.convert_to_numpy(a), b, rtol=1e-3, atol=1e-5)
    np.testing.assert_allclose(keras.ops.convert_to_numpy(theirs.predict(x, verbose=0)),
                               ours.predict(x, verbose=0), rtol=1e-3, atol=1e-5)
