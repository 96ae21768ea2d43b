"""LSTM / GRU / SimpleRNN: output structure for every return_sequences x return_state, eager
values against NumPy step loops, initial states, go_backwards, weights, config, errors."""

import itertools

import numpy as np
import pytest
from layer_refs import gru, lstm, simple_rnn

import fkeras
from fkeras import layers

N, T, F, U = 3, 5, 4, 6
RNNS = [(layers.LSTM, 2), (layers.GRU, 1), (layers.SimpleRNN, 1)]


@pytest.mark.parametrize("cls,n_states", RNNS)
@pytest.mark.parametrize("seq,state", list(itertools.product([False, True], repeat=2)))
def test_output_shapes(cls, n_states, seq, state):
    layer = cls(U, return_sequences=seq, return_state=state)
    out = layer(fkeras.Input(shape=(None, F)))
    main = (None, None, U) if seq else (None, U)
    if state:
        assert isinstance(out, list) and len(out) == 1 + n_states
        assert [t.shape for t in out] == [main] + [(None, U)] * n_states
    else:
        assert out.shape == main
    expect = [main] + [(None, U)] * n_states if state else main
    assert layer.compute_output_shape((None, None, F)) == expect


def _set_random(layer, rng):
    ws = [rng.standard_normal(w.shape).astype(np.float32) * 0.5 for w in layer.weights]
    layer.set_weights(ws)
    return [w.astype(np.float64) for w in ws]


@pytest.mark.parametrize("go_backwards", [False, True])
@pytest.mark.parametrize("acts", [("tanh", "sigmoid"), ("relu", "hard_sigmoid")])
def test_lstm_matches_numpy(go_backwards, acts):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((N, T, F)).astype(np.float32)
    layer = layers.LSTM(U, activation=acts[0], recurrent_activation=acts[1],
                        return_sequences=True, return_state=True, go_backwards=go_backwards)
    layer.build((None, T, F))
    k, rk, b = _set_random(layer, rng)
    hs, h, c = layer(x)
    want_hs, want_h, want_c = lstm(x, k, rk, b, go_backwards=go_backwards, act=acts[0],
                                   rec=acts[1])
    for got, want in ((hs, want_hs), (h, want_h), (c, want_c)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(h, hs[:, -1], rtol=1e-6)  # reversed order is not flipped back


@pytest.mark.parametrize("reset_after", [True, False])
@pytest.mark.parametrize("go_backwards", [False, True])
def test_gru_matches_numpy(reset_after, go_backwards):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((N, T, F)).astype(np.float32)
    layer = layers.GRU(U, reset_after=reset_after, return_sequences=True,
                       go_backwards=go_backwards)
    layer.build((None, T, F))
    assert layer.bias.shape == ((2, 3 * U) if reset_after else (3 * U,))
    k, rk, b = _set_random(layer, rng)
    want_hs, _ = gru(x, k, rk, b, reset_after=reset_after, go_backwards=go_backwards)
    np.testing.assert_allclose(layer(x), want_hs, rtol=1e-5, atol=1e-5)


def test_simple_rnn_matches_numpy_with_initial_state():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((N, T, F)).astype(np.float32)
    h0 = rng.standard_normal((N, U)).astype(np.float32)
    layer = layers.SimpleRNN(U, activation="relu", return_state=True)
    layer.build((None, T, F))
    k, rk, b = _set_random(layer, rng)
    out, h = layer(x, initial_state=[h0])
    _, want = simple_rnn(x, k, rk, b, h=h0.astype(np.float64), act="relu")
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(h, want, rtol=1e-5, atol=1e-5)


def test_lstm_initial_state_and_no_bias():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((N, T, F)).astype(np.float32)
    h0, c0 = (rng.standard_normal((N, U)).astype(np.float32) for _ in range(2))
    layer = layers.LSTM(U, use_bias=False)
    layer.build((None, T, F))
    k, rk = _set_random(layer, rng)
    _, want, _ = lstm(x, k, rk, None, h=h0.astype(np.float64), c=c0.astype(np.float64))
    np.testing.assert_allclose(layer(x, initial_state=[h0, c0]), want, rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="expects 2 initial state"):
        layer(x, initial_state=[h0])


def test_weights_layout_and_initialization():
    layer = layers.LSTM(U)
    layer.build((None, T, F))
    assert [w.name for w in layer.weights] == ["kernel", "recurrent_kernel", "bias"]
    assert [w.shape for w in layer.weights] == [(F, 4 * U), (U, 4 * U), (4 * U,)]
    bias = layer.bias.numpy()
    np.testing.assert_array_equal(bias[U:2 * U], 1.0)  # unit_forget_bias
    np.testing.assert_array_equal(np.delete(bias, np.s_[U:2 * U]), 0.0)
    rk = layer.recurrent_kernel.numpy()  # orthogonal: rows orthonormal
    np.testing.assert_allclose(rk @ rk.T, np.eye(U), atol=1e-5)
    assert layer.count_params() == 4 * (U * (F + U) + U)
    layer = layers.LSTM(U, unit_forget_bias=False, bias_initializer="ones")
    layer.build((None, T, F))
    np.testing.assert_array_equal(layer.bias.numpy(), 1.0)
    gru_layer = layers.GRU(U)
    gru_layer.build((None, T, F))
    assert gru_layer.count_params() == 3 * (U * (F + U) + 2 * U)


@pytest.mark.parametrize("cls,extra", [(layers.LSTM, dict(recurrent_activation="hard_sigmoid",
                                                          unit_forget_bias=False)),
                                       (layers.GRU, dict(reset_after=False)),
                                       (layers.SimpleRNN, {})])
def test_config_round_trip(cls, extra):
    layer = cls(U, activation="relu", return_sequences=True, return_state=True,
                go_backwards=True, dropout=0.25, recurrent_dropout=0.5, stateful=True,
                unroll=True, seed=3, kernel_regularizer="l2", name="rnn", **extra)
    config = layer.get_config()
    for key in ("units", "activation", "dropout", "recurrent_dropout", "stateful", "unroll",
                "return_sequences", "return_state", "go_backwards", "seed"):
        assert key in config
    assert cls.from_config(config).get_config() == config


def test_rank_error_text():
    with pytest.raises(ValueError) as info:
        layers.LSTM(4)(fkeras.Input(shape=(5,)))
    assert str(info.value) == ('Input 0 of layer "lstm" is incompatible with the layer: '
                               "expected ndim=3, found ndim=2. Full shape received: (None, 5)")
    with pytest.raises(ValueError, match="expected ndim=3, found ndim=4"):
        layers.GRU(4)(fkeras.Input(shape=(5, 2, 3)))


@pytest.mark.parametrize("kwargs,match", [
    (dict(units=0), "Received an invalid value for argument `units`, expected a positive "
                    "integer, got 0."),
    (dict(units=4, activation="gelu"), "Unsupported recurrent `activation`"),
    (dict(units=4, dropout=1.5), "Invalid value received for argument `dropout`"),
])
def test_argument_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        layers.SimpleRNN(**kwargs)


def test_argument_values_checked_at_construction():
    with pytest.raises(ValueError, match="Invalid valid received for argument `use_cudnn`"):
        layers.LSTM(3, use_cudnn="yes")
    with pytest.raises(ValueError, match="`implementation` must be 1 or 2"):
        layers.GRU(3, implementation=3)


def test_input_dropout_in_training_only():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((4, 5, 3)).astype(np.float32)
    layer = layers.GRU(2, dropout=0.5, seed=1, return_sequences=True)
    np.testing.assert_array_equal(layer(x), layer(x, training=False))
    y1, y2 = layer(x, training=True), layer(x, training=True)
    assert not np.allclose(y1, y2) and not np.allclose(y1, layer(x))


def test_gradients_reach_every_weight():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 4, 3)).astype(np.float32)
    for layer in (layers.LSTM(3), layers.GRU(3), layers.SimpleRNN(3)):
        with fkeras.GradientTape() as tape:
            loss = fkeras.ops.sum(fkeras.ops.square(layer(x)))
        grads = tape.gradient(loss, layer.trainable_weights)
        assert [g.shape for g in grads] == [w.shape for w in layer.trainable_weights]
        assert all(np.abs(g).sum() > 0 for g in grads)


@pytest.mark.parametrize("reset_after", [True, False])
def test_gru_and_simple_rnn_without_bias(reset_after):
    rng = np.random.default_rng(6)
    x = rng.standard_normal((N, T, F)).astype(np.float32)
    layer = layers.GRU(U, use_bias=False, reset_after=reset_after)
    layer.build((None, T, F))
    k, rk = _set_random(layer, rng)
    _, want = gru(x, k, rk, None, reset_after=reset_after)
    np.testing.assert_allclose(layer(x), want, rtol=1e-5, atol=1e-5)
    layer = layers.SimpleRNN(U, use_bias=False, activation="sigmoid")
    layer.build((None, T, F))
    k, rk = _set_random(layer, rng)
    _, want = simple_rnn(x, k, rk, None, act="sigmoid")
    np.testing.assert_allclose(layer(x), want, rtol=1e-5, atol=1e-5)
