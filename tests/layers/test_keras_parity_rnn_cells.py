"""RNN with cells against Keras 3 (torch backend) with the same weights: SimpleRNNCell,
LSTMCell, GRUCell, StackedRNNCells, options (return_sequences/state, go_backwards, masks,
zero_output_for_mask, initial states), configs, and an RNN(LSTMCell) model trained with fit."""

import numpy as np
import pytest
from keras_parity import keras, randn, to_np

import fkeras
from fkeras import layers

TOL = dict(rtol=1e-5, atol=2e-6)
MASK = np.array([[1, 1, 1, 0, 0], [0, 1, 1, 0, 1], [1, 1, 1, 1, 1]], bool)

CELLS = [
    ("SimpleRNNCell", dict(units=3)),
    ("SimpleRNNCell", dict(units=3, activation="relu", use_bias=False)),
    ("LSTMCell", dict(units=3)),
    ("LSTMCell", dict(units=2, unit_forget_bias=False, recurrent_activation="hard_sigmoid")),
    ("GRUCell", dict(units=3)),
    ("GRUCell", dict(units=3, reset_after=False)),
]


def _cell(lib, name, kwargs):
    return getattr(lib.layers, name)(**kwargs)


def _pair(k_layer, f_layer, shape):
    k_layer.build(shape)
    f_layer.build(shape)
    weights = [w + 0.05 * np.sign(w + 1e-3) for w in k_layer.get_weights()]
    k_layer.set_weights(weights)
    f_layer.set_weights(weights)
    return k_layer, f_layer


def _outs(out):
    return [np.asarray(o) if not hasattr(o, "detach") else to_np(o)
            for o in (out if isinstance(out, (list, tuple)) else [out])]


@pytest.mark.parametrize("name,kwargs", CELLS)
@pytest.mark.parametrize("opts", [
    dict(), dict(return_sequences=True), dict(return_state=True, go_backwards=True),
    dict(return_sequences=True, mask=True), dict(mask=True, zero_output_for_mask=True,
                                                 return_sequences=True),
])
def test_rnn_with_cell_matches_keras(name, kwargs, opts):
    opts = dict(opts)
    use_mask = opts.pop("mask", False)
    x = randn(3, 5, 4, seed=1)
    kl = keras.layers.RNN(_cell(keras, name, kwargs), **opts)
    fl = layers.RNN(_cell(fkeras, name, kwargs), **opts)
    kl, fl = _pair(kl, fl, x.shape)
    call = dict(mask=MASK) if use_mask else {}
    want, got = _outs(kl(x, **call)), _outs(fl(x, **call))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, to_np(w) if not isinstance(w, np.ndarray) else w, **TOL)


@pytest.mark.parametrize("name,kwargs", CELLS[::2])
def test_cell_alone_matches_keras(name, kwargs):
    x = randn(3, 4, seed=2)
    kc, fc = _cell(keras, name, kwargs), _cell(fkeras, name, kwargs)
    kc, fc = _pair(kc, fc, x.shape)
    n_states = 2 if name == "LSTMCell" else 1
    states = [randn(3, kwargs["units"], seed=3 + i) for i in range(n_states)]
    k_out, k_states = kc(x, states)
    f_out, f_states = fc(x, states)
    np.testing.assert_allclose(np.asarray(f_out), to_np(k_out), **TOL)
    for f, k in zip(f_states, k_states):
        np.testing.assert_allclose(np.asarray(f), to_np(k), **TOL)
    f_cfg, k_cfg = fc.get_config(), kc.get_config()
    assert set(f_cfg) == set(k_cfg)
    for key in f_cfg:
        if key.endswith("_initializer"):
            assert f_cfg[key]["class_name"] == k_cfg[key]["class_name"], key
        elif key not in ("name", "dtype"):
            assert f_cfg[key] == k_cfg[key], key


def test_stacked_cells_and_initial_state_match_keras():
    x = randn(2, 4, 3, seed=4)
    make = [lambda lib: lib.layers.LSTMCell(3), lambda lib: lib.layers.GRUCell(2),
            lambda lib: lib.layers.SimpleRNNCell(4)]
    kl = keras.layers.RNN([m(keras) for m in make], return_sequences=True, return_state=True)
    fl = layers.RNN([m(fkeras) for m in make], return_sequences=True, return_state=True)
    kl, fl = _pair(kl, fl, x.shape)
    init = [[randn(2, 3, seed=5), randn(2, 3, seed=6)], randn(2, 2, seed=7),
            randn(2, 4, seed=8)]
    want = kl(x, initial_state=init)
    got = fl(x, initial_state=init)
    np.testing.assert_allclose(np.asarray(got[0]), to_np(want[0]), **TOL)
    flat_w = [to_np(t) for t in fkeras.utils.nest.flatten(list(want[1:]))]
    flat_g = [np.asarray(t) for t in fkeras.utils.nest.flatten(list(got[1:]))]
    assert len(flat_g) == len(flat_w) == 4
    for g, w in zip(flat_g, flat_w):
        np.testing.assert_allclose(g, w, **TOL)
    assert fl.compute_output_shape((2, 4, 3))[0] == (2, 4, 4)


def test_rnn_lstm_cell_fit_matches_keras():
    x, y = randn(24, 6, 4, seed=9), randn(24, 2, seed=10)
    models = []
    for lib in (keras, fkeras):
        inp = lib.Input((6, 4))
        h = lib.layers.RNN(lib.layers.LSTMCell(5), return_sequences=True)(inp)
        h = lib.layers.RNN(lib.layers.GRUCell(3))(h)
        m = lib.Model(inp, lib.layers.Dense(2)(h))
        m.compile(optimizer=lib.optimizers.Adam(1e-2), loss="mse")
        models.append(m)
    models[1].set_weights(models[0].get_weights())
    hist = [m.fit(x, y, batch_size=6, epochs=3, shuffle=False, verbose=0).history["loss"]
            for m in models]
    np.testing.assert_allclose(hist[1], hist[0], rtol=1e-4, atol=1e-4)
    assert hist[1][-1] < hist[1][0]


def test_rnn_config_reads_in_keras_and_back():
    fl = layers.RNN(layers.StackedRNNCells([layers.LSTMCell(3), layers.GRUCell(2)]),
                    return_sequences=True, go_backwards=True)
    cfg = fl.get_config()
    cfg.pop("dtype")
    kl = keras.layers.RNN.from_config(cfg)
    assert [type(c).__name__ for c in kl.cell.cells] == ["LSTMCell", "GRUCell"]
    assert kl.return_sequences and kl.go_backwards
    from fkeras.saving.config_convert import normalize_layer_entry

    back = layers.deserialize_layer(normalize_layer_entry(
        {"class_name": "RNN", "config": kl.get_config()}))
    assert [type(c).__name__ for c in back.cell.cells] == ["LSTMCell", "GRUCell"]
    assert back.cell.cells[1].units == 2


@pytest.mark.parametrize("merge_mode", ["concat", "sum"])
def test_bidirectional_rnn_with_cell_matches_keras(merge_mode):
    x = randn(2, 5, 3, seed=11)
    kb = keras.layers.Bidirectional(keras.layers.RNN(keras.layers.GRUCell(4),
                                                     return_sequences=True),
                                    merge_mode=merge_mode)
    fb = layers.Bidirectional(layers.RNN(layers.GRUCell(4), return_sequences=True),
                              merge_mode=merge_mode)
    kb, fb = _pair(kb, fb, x.shape)
    np.testing.assert_allclose(np.asarray(fb(x, mask=MASK[:2])), to_np(kb(x, mask=MASK[:2])),
                               **TOL)
