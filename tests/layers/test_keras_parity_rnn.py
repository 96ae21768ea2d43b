"""Recurrent parity with real Keras 3 (skipped without keras): with Keras's weights, fkeras's
LSTM / GRU / SimpleRNN, masked inputs (Masking, Embedding(mask_zero=True)), Bidirectional,
TimeDistributed and stateful layers give Keras's outputs to 1e-5, and one SGD step gives
Keras's weights to 1e-5."""

import numpy as np
import pytest
from keras_parity import flat, keras, randn, to_np

import fkeras
from fkeras import layers

TOL = 1e-5
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")


def _padded(seed=0):
    x = randn(3, 6, 4, seed=seed)
    x[0, 4:] = 0.0
    x[1, :2] = 0.0
    x[2, 2:4] = 0.0
    return x


def _pair(build, x):
    """Keras and fkeras models from the same builder (a function of the layers module), with
    Keras's weights copied into fkeras."""
    k_in = keras.Input(batch_shape=x.shape, dtype=str(x.dtype))
    f_in = layers.Input(batch_shape=x.shape, dtype=str(x.dtype))
    k_model = keras.Model(k_in, build(keras.layers)(k_in))
    f_model = fkeras.Model(f_in, build(layers)(f_in))
    f_model.set_weights(k_model.get_weights())
    return k_model, f_model


def _check(k_model, f_model, x, training=False):
    k_out, f_out = flat(k_model(x, training=training)), flat(f_model(x, training=training))
    assert len(k_out) == len(f_out)
    for k, f in zip(k_out, f_out):
        np.testing.assert_allclose(np.asarray(f), to_np(k), rtol=TOL, atol=TOL)


def _rnn(name, **kw):
    def build(L):
        return lambda t: getattr(L, name)(3, **kw)(L.Masking()(t))
    return build


CASES = [("LSTM", {}), ("LSTM", {"go_backwards": True, "return_state": True}),
         ("GRU", {}), ("GRU", {"reset_after": False, "return_state": True}),
         ("GRU", {"go_backwards": True, "activation": "relu"}),
         ("SimpleRNN", {"use_bias": False}),
         ("LSTM", {"recurrent_activation": "hard_sigmoid", "unit_forget_bias": False})]


@pytest.mark.parametrize("name,kw", CASES)
@pytest.mark.parametrize("seq", [False, True])
def test_masked_rnn_outputs(name, kw, seq):
    x = _padded()
    k_model, f_model = _pair(_rnn(name, return_sequences=seq, **kw), x)
    _check(k_model, f_model, x)
    _check(k_model, f_model, x, training=True)


@pytest.mark.parametrize("name", ["LSTM", "GRU"])
def test_zero_output_for_mask(name):
    x = _padded(1)
    _check(*_pair(_rnn(name, return_sequences=True, zero_output_for_mask=True), x), x)


def test_embedding_mask_zero_into_lstm():
    ids = np.array([[3, 1, 4, 0, 0], [0, 6, 5, 1, 2], [0, 0, 0, 0, 0]], np.int32)

    def build(L):
        return lambda t: L.LSTM(4, return_sequences=True)(L.Embedding(7, 3, mask_zero=True)(t))

    _check(*_pair(build, ids), ids)


@pytest.mark.parametrize("mode", ["concat", "sum", "mul", "ave", None])
def test_bidirectional_masked(mode):
    x = _padded(2)

    def build(L):
        return lambda t: L.Bidirectional(L.GRU(3, return_sequences=True),
                                         merge_mode=mode)(L.Masking()(t))

    _check(*_pair(build, x), x)


def test_bidirectional_return_state_lstm():
    x = randn(2, 5, 4)

    def build(L):
        return lambda t: L.Bidirectional(L.LSTM(3, return_state=True))(t)

    _check(*_pair(build, x), x)


def test_time_distributed():
    x = randn(2, 3, 5, 5, 2)

    def build(L):
        return lambda t: L.TimeDistributed(L.Dense(3))(
            L.TimeDistributed(L.Conv2D(2, 3, activation="relu"))(t))

    _check(*_pair(build, x), x)


def test_stateful_across_two_calls_and_reset():
    x = randn(2, 4, 3, seed=3)
    k_layer = keras.layers.LSTM(3, stateful=True, return_sequences=True)
    f_layer = layers.LSTM(3, stateful=True, return_sequences=True)
    k_layer(x)
    f_layer.build(x.shape)
    f_layer.set_weights(k_layer.get_weights())
    k_layer.reset_state()
    for _ in range(2):
        np.testing.assert_allclose(f_layer(x), to_np(k_layer(x)), rtol=TOL, atol=TOL)
    k_layer.reset_state()
    f_layer.reset_states()
    np.testing.assert_allclose(f_layer(x), to_np(k_layer(x)), rtol=TOL, atol=TOL)
    np.testing.assert_allclose(f_layer(x), to_np(k_layer(x)), rtol=TOL, atol=TOL)


@pytest.mark.parametrize("build", [
    _rnn("LSTM"),
    _rnn("GRU", reset_after=False, go_backwards=True),
    lambda L: (lambda t: L.Bidirectional(L.SimpleRNN(3))(L.Masking()(t))),
    lambda L: (lambda t: L.Bidirectional(L.LSTM(3, return_sequences=True), merge_mode="sum")(t)),
    _rnn("LSTM", return_sequences=True),  # the loss is weighted by the output mask
])
def test_one_sgd_step_gives_keras_weights(build):
    x = _padded(4)
    k_model, f_model = _pair(build, x)
    y = np.random.default_rng(5).standard_normal(
        tuple(k_model.outputs[0].shape)).astype(np.float32)
    k_model.compile(optimizer=keras.optimizers.SGD(0.5), loss="mse")
    f_model.compile(optimizer=fkeras.optimizers.SGD(0.5), loss="mse")
    k_model.train_on_batch(x, y)
    f_model.train_on_batch(x, y)
    for k, f in zip(k_model.get_weights(), f_model.get_weights()):
        np.testing.assert_allclose(f, k, rtol=TOL, atol=TOL)
