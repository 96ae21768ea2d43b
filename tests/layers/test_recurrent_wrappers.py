"""Bidirectional (merge modes, return_state, backward_layer, masks, stateful, config, errors)
and TimeDistributed (Dense, Conv2D, masks, config) against NumPy float64 formulations."""

import functools

import numpy as np
import pytest
from layer_refs import conv2d_nhwc, lstm, lstm_cell, run_rnn
from layer_testing import run_layer_test

import fkeras
from fkeras import layers
from fkeras.engine.masking import get_keras_mask

N, T, F, U = 3, 5, 4, 3


def _randomize(layer, rng):
    ws = [rng.standard_normal(w.shape).astype(np.float32) * 0.5 for w in layer.weights]
    layer.set_weights(ws)
    return [w.astype(np.float64) for w in ws]


MERGE = {"concat": lambda a, b: np.concatenate([a, b], -1), "sum": np.add,
         "mul": np.multiply, "ave": lambda a, b: (a + b) / 2}


@pytest.mark.parametrize("mode", ["concat", "sum", "mul", "ave", None])
@pytest.mark.parametrize("seq", [False, True])
def test_bidirectional_lstm_matches_numpy(mode, seq):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((N, T, F)).astype(np.float32)
    layer = layers.Bidirectional(layers.LSTM(U, return_sequences=seq), merge_mode=mode)
    layer.build((None, T, F))
    assert [lyr.name for lyr in layer.layers] == [layer.forward_layer.name,
                                                   layer.backward_layer.name]
    assert layer.forward_layer.name.startswith("forward_")
    ws = _randomize(layer, rng)
    fs, fh, _ = lstm(x, *ws[:3])
    bs, bh, _ = lstm(x, *ws[3:], go_backwards=True)
    a, b = (fs, bs[:, ::-1]) if seq else (fh, bh)
    got = layer(x)
    if mode is None:
        np.testing.assert_allclose(got[0], a, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(got[1], b, rtol=1e-5, atol=1e-5)
    else:
        np.testing.assert_allclose(got, MERGE[mode](a, b), rtol=1e-5, atol=1e-5)
    sym = layers.Bidirectional(layers.LSTM(U, return_sequences=seq), merge_mode=mode)(
        layers.Input(shape=(T, F)))
    want = (None, T, U) if seq else (None, U)
    if mode == "concat":
        want = want[:-1] + (2 * U,)
    shapes = [t.shape for t in sym] if mode is None else [sym.shape]
    assert shapes == ([want, want] if mode is None else [want])


def test_bidirectional_return_state_and_initial_state():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((N, T, F)).astype(np.float32)
    layer = layers.Bidirectional(layers.GRU(U, return_state=True))
    layer.build((None, T, F))
    states = [rng.standard_normal((N, U)).astype(np.float32) for _ in range(2)]
    out, fh, bh = layer(x, initial_state=states)
    fwd, bwd = layer.forward_layer, layer.backward_layer
    np.testing.assert_allclose(fh, fwd(x, initial_state=[states[0]])[1], rtol=1e-6)
    np.testing.assert_allclose(bh, bwd(x, initial_state=[states[1]])[1], rtol=1e-6)
    np.testing.assert_allclose(out, np.concatenate([fh, bh], -1), rtol=1e-6)
    sym = layers.Bidirectional(layers.LSTM(U, return_state=True))(layers.Input(shape=(T, F)))
    assert [t.shape for t in sym] == [(None, 2 * U)] + [(None, U)] * 4


def test_bidirectional_backward_layer_and_errors():
    fwd, bwd = layers.LSTM(U), layers.SimpleRNN(U, go_backwards=True)
    layer = layers.Bidirectional(fwd, backward_layer=bwd, merge_mode="sum")
    assert layer.backward_layer is bwd
    x = np.ones((2, T, F), np.float32)
    assert layer(x).shape == (2, U)
    with pytest.raises(ValueError, match="should have different `go_backwards` value"):
        layers.Bidirectional(layers.LSTM(U), backward_layer=layers.LSTM(U))
    with pytest.raises(ValueError, match='same value for attribute "return_sequences"'):
        layers.Bidirectional(layers.LSTM(U), backward_layer=layers.LSTM(
            U, go_backwards=True, return_sequences=True))
    with pytest.raises(ValueError, match="Invalid merge mode. Received: max"):
        layers.Bidirectional(layers.LSTM(U), merge_mode="max")
    with pytest.raises(ValueError, match="Please initialize `Bidirectional` layer"):
        layers.Bidirectional("lstm")


def test_bidirectional_mask_zero_output_for_masked_steps():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((N, T, F)).astype(np.float32)
    mask = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1], [1, 0, 0, 0, 0]], bool)
    layer = layers.Bidirectional(layers.LSTM(U, return_sequences=True))
    layer.build((None, T, F))
    assert layer.forward_layer.zero_output_for_mask
    ws = _randomize(layer, rng)
    zeros = [np.zeros((N, U))] * 2
    f_cell = functools.partial(lstm_cell, kernel=ws[0], rkernel=ws[1], bias=ws[2])
    b_cell = functools.partial(lstm_cell, kernel=ws[3], rkernel=ws[4], bias=ws[5])
    fs, _, _ = run_rnn(f_cell, x, zeros, mask, zero_output_for_mask=True)
    bs, _, _ = run_rnn(b_cell, x, zeros, mask, go_backwards=True, zero_output_for_mask=True)
    got = layer(layers.Masking()(x * mask[..., None]))
    np.testing.assert_allclose(got, np.concatenate([fs, bs[:, ::-1]], -1), rtol=1e-5,
                               atol=1e-5)
    np.testing.assert_array_equal(get_keras_mask(got), mask)
    # Without return_sequences the forward layer keeps repeating outputs (not zeros).
    last = layers.Bidirectional(layers.LSTM(U))
    assert not last.forward_layer.zero_output_for_mask


def test_bidirectional_stateful_and_config():
    layer = layers.Bidirectional(layers.SimpleRNN(U, stateful=True, return_sequences=True),
                                 merge_mode="ave")
    x = np.random.default_rng(3).standard_normal((2, T, F)).astype(np.float32)
    y1 = layer(x)
    assert len(layer.states) == 2
    assert not np.allclose(layer(x), y1)
    layer.reset_states()
    np.testing.assert_allclose(layer(x), y1, rtol=1e-6)
    config = layer.get_config()
    assert config["merge_mode"] == "ave" and config["layer"]["class_name"] == "SimpleRNN"
    assert config["backward_layer"]["config"]["go_backwards"] is True
    with pytest.raises(AttributeError, match="Layer must be stateful"):
        layers.Bidirectional(layers.LSTM(2)).reset_states()


@pytest.mark.parametrize("inner,mode", [(lambda: layers.LSTM(3, return_sequences=True),
                                         "concat"),
                                        (lambda: layers.GRU(3, return_state=True), "sum"),
                                        (lambda: layers.SimpleRNN(3), None)])
def test_bidirectional_run_layer_test(inner, mode):
    layer = inner()
    seq, state = layer.return_sequences, layer.return_state
    out = (2, 4, 3 * (2 if mode == "concat" else 1)) if seq else (2, 3)
    expected = [out, out] if mode is None else out
    if state:
        expected = [out, (2, 3), (2, 3)]
    run_layer_test(layers.Bidirectional, {"layer": layer, "merge_mode": mode},
                   input_shape=(2, 4, 5), expected_output_shape=expected,
                   expected_num_trainable_weights=6, supports_masking=True)


def test_time_distributed_dense_and_conv2d():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    layer = layers.TimeDistributed(layers.Dense(5, activation="relu"))
    y = layer(x)
    k, b = (w.astype(np.float64) for w in layer.get_weights())
    np.testing.assert_allclose(y, np.maximum(x @ k + b, 0), rtol=1e-5, atol=1e-6)
    imgs = rng.standard_normal((2, 3, 6, 6, 2)).astype(np.float32)
    conv = layers.TimeDistributed(layers.Conv2D(4, 3, padding="same"))
    y = conv(imgs)
    assert y.shape == (2, 3, 6, 6, 4)
    k, b = conv.get_weights()
    for t in range(3):
        np.testing.assert_allclose(y[:, t], conv2d_nhwc(imgs[:, t], k, b, padding="same"),
                                   rtol=1e-4, atol=1e-5)
    sym = layers.TimeDistributed(layers.Conv2D(4, 3))(layers.Input(shape=(None, 6, 6, 2)))
    assert sym.shape == (None, None, 4, 4, 4)


def test_time_distributed_mask_and_errors():
    x = np.ones((2, 3, 4), np.float32)
    x[0, 2] = 0
    y = layers.TimeDistributed(layers.Dense(2))(layers.Masking()(x))
    np.testing.assert_array_equal(get_keras_mask(y), [[True, True, False], [True] * 3])
    with pytest.raises(ValueError, match="at least 3 dimensions"):
        layers.TimeDistributed(layers.Dense(2))(layers.Input(shape=(4,)))
    with pytest.raises(ValueError, match="Please initialize `TimeDistributed` layer"):
        layers.TimeDistributed(3)
    with pytest.raises(ValueError, match="incompatible with the input shape"):
        layers.TimeDistributed(layers.Dense(2))(x, mask=np.ones((2, 4), bool))


@pytest.mark.parametrize("inner,shape,out", [
    (lambda: layers.Dense(3), (2, 4, 5), (2, 4, 3)),
    (lambda: layers.Conv2D(2, 3), (2, 3, 5, 5, 1), (2, 3, 3, 3, 2)),
])
def test_time_distributed_run_layer_test(inner, shape, out):
    run_layer_test(layers.TimeDistributed, {"layer": inner()}, input_shape=shape,
                   expected_output_shape=out, expected_num_trainable_weights=2,
                   supports_masking=True)


def test_time_distributed_in_a_trained_model():
    rng = np.random.default_rng(5)
    inp = layers.Input(shape=(4, 3))
    out = layers.TimeDistributed(layers.Dense(2))(layers.LSTM(5, return_sequences=True)(inp))
    model = fkeras.Model(inp, out)
    model.compile(optimizer="sgd", loss="mse")
    hist = model.fit(rng.standard_normal((8, 4, 3)).astype(np.float32),
                     rng.standard_normal((8, 4, 2)).astype(np.float32), epochs=2, verbose=0)
    assert np.all(np.isfinite(hist.history["loss"]))
