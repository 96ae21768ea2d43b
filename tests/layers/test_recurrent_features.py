"""LSTM / GRU / SimpleRNN features beyond the fused sequence kernels: masks, dropout and
recurrent dropout (per-gate masks), stateful layers, unroll, against NumPy float64 loops
(layer_refs.run_rnn), and the per-step path's gradients against finite differences."""

import functools
import pathlib
import sys
import types

import numpy as np
import pytest
from layer_refs import gru_cell, lstm_cell, run_rnn, simple_rnn_cell
from layer_testing import run_layer_test

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "ops"))
from op_testing import fd_check  # noqa: E402

import fkeras  # noqa: E402
from fkeras import layers  # noqa: E402
from fkeras.layers.rnn import rnn_steps  # noqa: E402

N, T, F, U = 3, 5, 4, 3
MASK = np.array([[1, 1, 1, 0, 0], [0, 1, 1, 0, 1], [0, 0, 0, 0, 0]], bool)


def _build(layer, rng):
    layer.build((None, T, F))
    ws = [rng.standard_normal(w.shape).astype(np.float32) * 0.5 for w in layer.weights]
    layer.set_weights(ws)
    return [w.astype(np.float64) for w in ws]


def _cell(cls, ws, layer, xm=None, hm=None):
    k, rk = ws[0], ws[1]
    b = ws[2] if len(ws) > 2 else None
    if cls is layers.LSTM:
        return functools.partial(lstm_cell, kernel=k, rkernel=rk, bias=b, xm=xm, hm=hm)
    if cls is layers.GRU:
        return functools.partial(gru_cell, kernel=k, rkernel=rk, bias=b, xm=xm, hm=hm,
                                 reset_after=layer.reset_after)
    return functools.partial(simple_rnn_cell, kernel=k, rkernel=rk, bias=b, xm=xm, hm=hm)


CASES = [(layers.LSTM, {}), (layers.GRU, {}), (layers.GRU, {"reset_after": False}),
         (layers.SimpleRNN, {})]


@pytest.mark.parametrize("cls,extra", CASES)
@pytest.mark.parametrize("go_backwards,zero_out", [(False, False), (True, False), (False, True)])
def test_mask_matches_numpy(cls, extra, go_backwards, zero_out):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((N, T, F)).astype(np.float32)
    layer = cls(U, return_sequences=True, return_state=True, go_backwards=go_backwards,
                zero_output_for_mask=zero_out, **extra)
    ws = _build(layer, rng)
    n_states = 2 if cls is layers.LSTM else 1
    h0 = [rng.standard_normal((N, U)).astype(np.float32) for _ in range(n_states)]
    got = layer(x, mask=MASK, initial_state=h0)
    want_seq, _, want_states = run_rnn(_cell(cls, ws, layer), x, h0, MASK,
                                       go_backwards=go_backwards,
                                       zero_output_for_mask=zero_out)
    np.testing.assert_allclose(got[0], want_seq, rtol=1e-5, atol=1e-5)
    for g, w in zip(got[1:], want_states):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)
    # A fully masked sample keeps its initial state; its outputs are zeros.
    np.testing.assert_allclose(got[1][2], h0[0][2], rtol=1e-6)
    np.testing.assert_array_equal(got[0][2], 0.0)
    last = cls(U, go_backwards=go_backwards, zero_output_for_mask=zero_out, **extra)
    last.build((None, T, F))
    last.set_weights(layer.get_weights())
    np.testing.assert_allclose(last(x, mask=MASK, initial_state=h0), want_seq[:, -1],
                               rtol=1e-5, atol=1e-5)


def test_all_true_mask_equals_the_fused_path():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((N, T, F)).astype(np.float32)
    for cls in (layers.LSTM, layers.GRU, layers.SimpleRNN):
        layer = cls(U, return_sequences=True)
        layer.build((None, T, F))
        np.testing.assert_allclose(layer(x, mask=np.ones((N, T), bool)), layer(x),
                                   rtol=1e-5, atol=1e-6)


def _fixed_masks(layer, seq):
    """Replaces the layer's mask drawing by a fixed sequence of masks (recorded)."""
    drawn = []

    def draw(shape, rate, count):
        out = [seq.pop(0).reshape(shape) for _ in range(count)]
        drawn.append(out)
        return out

    layer._dropout_masks = draw
    return drawn


def _dmask(rng, shape, rate):
    return ((rng.random(shape) >= rate) / (1 - rate)).astype(np.float32)


@pytest.mark.parametrize("cls,extra", CASES)
def test_recurrent_dropout_per_gate_matches_numpy(cls, extra):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((N, T, F)).astype(np.float32)
    layer = cls(U, dropout=0.3, recurrent_dropout=0.4, return_sequences=True, **extra)
    assert layer.implementation == 1  # Keras: recurrent dropout forces implementation 1
    ws = _build(layer, rng)
    G = {layers.LSTM: 4, layers.GRU: 3, layers.SimpleRNN: 1}[cls]
    xm = [_dmask(rng, (N, 1, F), 0.3) for _ in range(G)]
    hm = [_dmask(rng, (N, U), 0.4) for _ in range(G)]
    _fixed_masks(layer, list(xm) + list(hm))
    got = layer(x, training=True)
    cell = _cell(cls, ws, layer, xm=[m[:, 0] for m in xm], hm=hm)
    want, _, _ = run_rnn(cell, x, [np.zeros((N, U))] * (2 if cls is layers.LSTM else 1))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(layer(x), layer(x, training=False))  # inference: no dropout


def test_dropout_is_random_per_call_and_off_in_inference():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 5, 3)).astype(np.float32)
    layer = layers.LSTM(2, recurrent_dropout=0.5, seed=1, return_sequences=True)
    y1, y2 = layer(x, training=True), layer(x, training=True)
    assert not np.allclose(y1, y2) and not np.allclose(y1, layer(x))
    # implementation=1 with input dropout only: one input mask per gate, no recurrent masks.
    layer = layers.GRU(U, dropout=0.5, implementation=1)
    ws = _build(layer, rng)
    xm = [_dmask(rng, (N, 1, F), 0.5) for _ in range(3)]
    drawn = _fixed_masks(layer, list(xm))
    x = rng.standard_normal((N, T, F)).astype(np.float32)
    got = layer(x, training=True)
    assert len(drawn) == 1 and len(drawn[0]) == 3
    _, want, _ = run_rnn(_cell(layers.GRU, ws, layer, xm=[m[:, 0] for m in xm]), x,
                         [np.zeros((N, U))])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("cls", [layers.LSTM, layers.GRU, layers.SimpleRNN])
def test_stateful_carries_states_across_calls(cls):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 6, F)).astype(np.float32)
    layer = cls(U, stateful=True, return_sequences=True)
    layer.build((2, 6, F))
    full = cls(U, return_sequences=True)
    full.build((None, 6, F))
    full.set_weights(layer.get_weights())
    assert len(layer.weights) == len(full.weights)  # states are not weights
    y1, y2 = layer(x[:, :3]), layer(x[:, 3:])
    np.testing.assert_allclose(np.concatenate([y1, y2], axis=1), full(x), rtol=1e-5,
                               atol=1e-6)
    layer.reset_states()
    np.testing.assert_allclose(layer(x[:, :3]), y1, rtol=1e-6)
    layer.reset_state()
    np.testing.assert_allclose(layer(x[:, :3]), y1, rtol=1e-6)
    with pytest.raises(ValueError, match="- Expected batch size: 2\n- Received batch size: 3"):
        layer(np.zeros((3, 3, F), np.float32))
    with pytest.raises(ValueError, match="the batch size must be static. Found dynamic batch "
                                         r"size: sequence.shape=\(None, 6, 4\)"):
        cls(U, stateful=True)(fkeras.Input(shape=(6, F)))
    with pytest.raises(AttributeError, match="Layer must be stateful"):
        full.reset_states()


def test_stateful_model_predict_carries_state():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 4, F)).astype(np.float32)
    inp = layers.Input(batch_shape=(2, 4, F))
    lstm = layers.LSTM(U, stateful=True)
    model = fkeras.Model(inp, lstm(inp))
    a = model.predict(x, verbose=0)
    b = model.predict(x, verbose=0)
    assert not np.allclose(a, b)
    lstm.reset_states()
    np.testing.assert_allclose(model.predict(x, verbose=0), a, rtol=1e-6)
    model.predict(x, verbose=0)
    model.reset_states()  # Keras 2's model-level reset
    np.testing.assert_allclose(model.predict(x, verbose=0), a, rtol=1e-6)


def test_unroll_is_accepted_and_needs_timesteps():
    rng = np.random.default_rng(6)
    x = rng.standard_normal((N, T, F)).astype(np.float32)
    a, b = layers.GRU(U, unroll=True), layers.GRU(U)
    a.build((None, T, F))
    b.build((None, T, F))
    b.set_weights(a.get_weights())
    np.testing.assert_allclose(a(x), b(x), rtol=1e-6)
    assert a(layers.Input(shape=(T, F))).shape == (None, U)
    with pytest.raises(ValueError, match="Cannot unroll a RNN if the time dimension is "
                                         "undefined"):
        layers.GRU(U, unroll=True)(layers.Input(shape=(None, F)))


@pytest.mark.parametrize("G,extra", [(4, {}), (3, {"reset_after": True}),
                                     (3, {"reset_after": False}), (1, {})])
def test_step_path_gradients_match_finite_differences(G, extra):
    rng = np.random.default_rng(7)
    n, t, f, u = 2, 3, 3, 2
    x = rng.standard_normal((n, t, f))
    k, rk = rng.standard_normal((f, G * u)) * 0.5, rng.standard_normal((u, G * u)) * 0.5
    b = rng.standard_normal((2, G * u) if extra.get("reset_after") else (G * u,)) * 0.5
    h0 = [rng.standard_normal((n, u)) for _ in range(2 if G == 4 else 1)]
    mask = np.array([[1, 0, 1], [0, 1, 1]], bool)
    xm = [_dmask(rng, (n, 1, f), 0.3).astype(np.float64) for _ in range(G)]
    hm = [_dmask(rng, (n, u), 0.3).astype(np.float64) for _ in range(G)]

    def fn(x, k, rk, b, *states):
        layer = types.SimpleNamespace(
            units=u, gates=G, kernel=k, recurrent_kernel=rk, bias=b, go_backwards=False,
            return_sequences=True, zero_output_for_mask=False,
            activation=fkeras.activations.get("tanh"),
            recurrent_activation=fkeras.activations.get("sigmoid"), **extra)
        hs, last, finals = rnn_steps.run_steps(layer, x, list(states), mask, xm, hm)
        return [hs] + list(finals)

    fd_check(fn, [x, k, rk, b] + h0, wrt=list(range(4 + len(h0))), rng=rng)


@pytest.mark.parametrize("cls,init", [
    (layers.LSTM, dict(units=3, dropout=0.2, recurrent_dropout=0.2, return_sequences=True)),
    (layers.GRU, dict(units=3, reset_after=False, return_state=True, go_backwards=True)),
    (layers.SimpleRNN, dict(units=3, stateful=True, unroll=True)),
])
def test_run_layer_test(cls, init):
    seq, state = init.get("return_sequences"), init.get("return_state")
    main = (2, 4, 3) if seq else (2, 3)
    n_states = 2 if cls is layers.LSTM else 1
    expected = [main] + [(2, 3)] * n_states if state else main
    run_layer_test(cls, init, input_shape=(2, 4, 5), expected_output_shape=expected,
                   expected_num_trainable_weights=3, expected_num_non_trainable_weights=0,
                   supports_masking=True)
