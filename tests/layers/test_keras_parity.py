"""Parity with real Keras 3 where it is installed (skipped otherwise): the same weights (Keras's
get_weights into fkeras's set_weights) must give the same outputs to 1e-5.

Keras needs a backend: with KERAS_BACKEND unset this picks torch when torch is importable.
"""

import numpy as np
import pytest
from keras_parity import ATOL, RTOL, flat, keras, randn, to_np

import fkeras
from fkeras import layers

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # inside Keras


def _compare(k_layer, f_layer, inputs, **call_kwargs):
    """Calls the Keras layer (building it), copies its weights into fkeras, compares."""
    k_out = flat(k_layer(inputs, **call_kwargs))
    shapes = [np.shape(x) for x in inputs] if isinstance(inputs, list) else np.shape(inputs)
    if k_layer.weights:
        f_layer.build(shapes)
        f_layer.set_weights(k_layer.get_weights())
    f_out = flat(f_layer(inputs, **call_kwargs))
    assert len(k_out) == len(f_out)
    for k, f in zip(k_out, f_out):
        np.testing.assert_allclose(np.asarray(f), to_np(k), rtol=RTOL, atol=ATOL)


def test_dense():
    _compare(keras.layers.Dense(5, activation="tanh"), layers.Dense(5, activation="tanh"),
             randn(3, 4))


@pytest.mark.parametrize("fmt", ["channels_last", "channels_first"])
@pytest.mark.parametrize("kw", [dict(kernel_size=3, padding="valid"),
                                dict(kernel_size=(3, 2), strides=(2, 1), padding="same"),
                                dict(kernel_size=2, dilation_rate=2, padding="same", groups=2)])
def test_conv2d(fmt, kw):
    x = randn(2, 7, 8, 4) if fmt == "channels_last" else randn(2, 4, 7, 8)
    _compare(keras.layers.Conv2D(6, data_format=fmt, activation="relu", **kw),
             layers.Conv2D(6, data_format=fmt, activation="relu", **kw), x)


@pytest.mark.parametrize("kind", ["MaxPooling2D", "AveragePooling2D"])
@pytest.mark.parametrize("fmt", ["channels_last", "channels_first"])
@pytest.mark.parametrize("kw,hw", [(dict(pool_size=2), (7, 8)),
                                   (dict(pool_size=3, strides=2, padding="same"), (7, 7)),
                                   (dict(pool_size=3, strides=2, padding="same"), (7, 8)),
                                   (dict(pool_size=(2, 3), strides=(1, 2), padding="same"),
                                    (7, 8))])
def test_pooling(kind, fmt, kw, hw):
    asymmetric = kw.get("padding") == "same" and hw != (7, 7)
    if kind == "AveragePooling2D" and asymmetric and keras.backend.backend() == "torch":
        pytest.skip("Keras's torch backend fills asymmetric 'same' padding of average pooling "
                    "by replicating edge values; TensorFlow and JAX exclude padded cells, as "
                    "fkeras does (checked against NumPy in test_pooling.py)")
    x = randn(2, *hw, 3) if fmt == "channels_last" else randn(2, 3, *hw)
    _compare(getattr(keras.layers, kind)(data_format=fmt, **kw),
             getattr(layers, kind)(data_format=fmt, **kw), x)


@pytest.mark.parametrize("seq,state,back", [(False, False, False), (True, True, False),
                                            (False, True, True), (True, False, True)])
def test_lstm(seq, state, back):
    kw = dict(return_sequences=seq, return_state=state, go_backwards=back)
    _compare(keras.layers.LSTM(5, **kw), layers.LSTM(5, **kw), randn(3, 6, 4))


@pytest.mark.parametrize("reset_after", [True, False])
@pytest.mark.parametrize("back", [False, True])
def test_gru(reset_after, back):
    kw = dict(reset_after=reset_after, go_backwards=back, return_sequences=True,
              return_state=True)
    _compare(keras.layers.GRU(5, **kw), layers.GRU(5, **kw), randn(3, 6, 4))


def test_simple_rnn():
    kw = dict(return_sequences=True, return_state=True)
    _compare(keras.layers.SimpleRNN(5, **kw), layers.SimpleRNN(5, **kw), randn(3, 6, 4))


def test_lstm_non_default_activations():
    kw = dict(activation="relu", recurrent_activation="hard_sigmoid")
    _compare(keras.layers.LSTM(4, **kw), layers.LSTM(4, **kw), randn(2, 5, 3))


@pytest.mark.parametrize("axis,shape", [(-1, (6, 5)), (1, (3, 4, 2, 5)), (-1, (3, 4, 2, 5))])
def test_batch_normalization(axis, shape):
    rng = np.random.default_rng(1)
    x = (rng.standard_normal(shape) * 2 + 1).astype(np.float32)
    k_layer = keras.layers.BatchNormalization(axis=axis, momentum=0.7)
    f_layer = layers.BatchNormalization(axis=axis, momentum=0.7)
    k_layer.build(shape)
    f_layer.build(shape)
    C = shape[axis]
    weights = [rng.standard_normal(C), rng.standard_normal(C), rng.standard_normal(C),
               rng.uniform(0.5, 2, C)]
    k_layer.set_weights(weights)
    f_layer.set_weights(weights)
    # inference
    np.testing.assert_allclose(f_layer(x), to_np(k_layer(x)), rtol=RTOL, atol=ATOL)
    # training: output and the moving-statistics update
    np.testing.assert_allclose(f_layer(x, training=True), to_np(k_layer(x, training=True)),
                               rtol=RTOL, atol=ATOL)
    for k, f in zip(k_layer.get_weights(), f_layer.get_weights()):
        np.testing.assert_allclose(f, k, rtol=RTOL, atol=ATOL)


def test_embedding():
    idx = np.random.default_rng(2).integers(0, 10, (3, 7))
    _compare(keras.layers.Embedding(10, 4), layers.Embedding(10, 4), idx)


def test_concatenate_and_add():
    a, b = randn(2, 3, 4, seed=1), randn(2, 3, 2, seed=2)
    _compare(keras.layers.Concatenate(), layers.Concatenate(), [a, b])
    _compare(keras.layers.Concatenate(axis=1), layers.Concatenate(axis=1), [a, a])
    _compare(keras.layers.Add(), layers.Add(), [a, randn(2, 3, 4, seed=3), randn(2, 1, 4, seed=4)])


def test_flatten_channels_first():
    x = randn(2, 3, 2, 2)
    _compare(keras.layers.Flatten(data_format="channels_first"),
             layers.Flatten(data_format="channels_first"), x)


def test_model_weights_transfer():
    """A whole small CNN + LSTM model: Keras weights load into the same fkeras architecture."""
    def build(lib):
        inp = lib.Input(shape=(8, 8, 3))
        y = lib.layers.Conv2D(4, 3, padding="same", activation="relu")(inp)
        y = lib.layers.BatchNormalization()(y)
        y = lib.layers.MaxPooling2D()(y)
        y = lib.layers.Reshape((4, 16))(y)
        y = lib.layers.LSTM(6)(y)
        return lib.Model(inp, lib.layers.Dense(2)(y))

    k_model, f_model = build(keras), build(fkeras)
    f_model.set_weights(k_model.get_weights())
    x = randn(3, 8, 8, 3)
    np.testing.assert_allclose(f_model.predict(x, verbose=0), to_np(k_model(x)), rtol=RTOL,
                               atol=ATOL)
