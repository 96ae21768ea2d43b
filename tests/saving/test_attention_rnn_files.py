"""`.keras` files with the attention family and RNN cells: fkeras round trips (same
predictions, configs, weights), files written by real Keras 3 loaded by fkeras and files
written by fkeras loaded by Keras 3 (skipped without keras), a registered user cell."""

import importlib.util
import os

import numpy as np
import pytest

import fkeras
from fkeras import layers, ops

pytest.importorskip("h5py")


def transformer(lib):
    L = lib.layers
    inp = lib.Input((6, 8), name="x")
    att = L.MultiHeadAttention(2, 4, name="mha")(inp, inp, use_causal_mask=True)
    h = L.LayerNormalization(name="ln1")(L.Add()([inp, att]))
    f = L.Dense(8, name="ff")(L.Dense(16, activation="relu", name="ff_in")(h))
    h = L.RMSNormalization(name="rms")(L.Add()([h, f]))
    g = L.GroupQueryAttention(head_dim=2, num_query_heads=4, num_key_value_heads=2,
                              name="gqa")(h, h)
    e = L.EinsumDense("abc,cd->abd", (None, 5), bias_axes="d", name="ein")(g)
    a = L.Attention(use_scale=True, name="att")([e, e])
    b = L.AdditiveAttention(name="add_att")([a, e])
    return lib.Model(inp, L.Identity(name="id")(b))


def recurrent(lib):
    L = lib.layers
    inp = lib.Input((5, 3), name="x")
    h = L.RNN(L.LSTMCell(4), return_sequences=True, name="rnn_lstm")(inp)
    h = L.RNN([L.GRUCell(3), L.SimpleRNNCell(2)], name="rnn_stack")(h)
    return lib.Model(inp, L.Dense(1, name="out")(h))


def with_initial_state(lib):
    """A call with tensors in its keyword arguments: Keras 3's {args, kwargs} node form."""
    L = lib.layers
    inp, h0, c0 = lib.Input((5, 3), name="x"), lib.Input((4,), name="h0"), \
        lib.Input((4,), name="c0")
    h = L.RNN(L.LSTMCell(4), name="rnn_init")(inp, initial_state=[h0, c0])
    return lib.Model([inp, h0, c0], h)


def nested_states(lib):
    """return_state with StackedRNNCells: nested state outputs, flat tensor indices."""
    L = lib.layers
    inp = lib.Input((5, 3), name="x")
    y, (h1, c1), h2 = L.RNN([L.LSTMCell(3), L.GRUCell(2)], return_state=True,
                            name="stack")(inp)
    return lib.Model(inp, [y, c1, h2])


def keywords(lib):
    """MultiHeadAttention called with keywords only."""
    q, v = lib.Input((4, 6), name="q"), lib.Input((5, 6), name="v")
    y = lib.layers.MultiHeadAttention(2, 3, name="mha")(query=q, value=v, key=v)
    return lib.Model([q, v], y)


MODELS = {"transformer": (transformer, (2, 6, 8)), "recurrent": (recurrent, (2, 5, 3)),
          "initial_state": (with_initial_state, [(2, 5, 3), (2, 4), (2, 4)]),
          "nested_states": (nested_states, (2, 5, 3)),
          "keywords": (keywords, [(2, 4, 6), (2, 5, 6)])}


def _assert_close(got, want, rtol, atol):
    got = list(got) if isinstance(got, (list, tuple)) else [got]
    want = list(want) if isinstance(want, (list, tuple)) else [want]
    assert len(got) == len(want)
    for a, b in zip(got, want):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol)


def _data(shape, seed):
    rng = np.random.default_rng(seed)
    if isinstance(shape, list):
        return [rng.standard_normal(s).astype(np.float32) for s in shape]
    return rng.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_fkeras_round_trip(tmp_path, name):
    build, shape = MODELS[name]
    model = build(fkeras)
    x = _data(shape, 0)
    model.save(tmp_path / "m.keras")
    loaded = fkeras.models.load_model(tmp_path / "m.keras")
    _assert_close(loaded.predict(x, verbose=0), model.predict(x, verbose=0), 1e-6, 1e-6)
    assert [type(layer).__name__ for layer in loaded.layers] == \
        [type(layer).__name__ for layer in model.layers]
    nodes = [n for e in model.get_config()["layers"] for n in e["inbound_nodes"]]
    multi = {"transformer": True, "recurrent": False, "initial_state": True,
             "nested_states": False, "keywords": True}[name]
    assert any(isinstance(n, dict) for n in nodes) == multi  # simple calls keep the list form
    for a, b in zip(model.weights, loaded.weights):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


@fkeras.saving.register_keras_serializable(package="test_files")
class CounterCell(layers.Layer):
    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.units, self.state_size = units, units

    def build(self, input_shape):
        self.w = self.add_weight(shape=(input_shape[-1], self.units), name="w")

    def call(self, inputs, states):
        h = ops.tanh(inputs @ self.w) + 0.5 * states[0]
        return h, [h]

    def get_config(self):
        return {**super().get_config(), "units": self.units}


def test_registered_user_cell_round_trips(tmp_path):
    inp = fkeras.Input((4, 3))
    model = fkeras.Model(inp, layers.RNN(CounterCell(2))(inp))
    x = np.random.default_rng(1).standard_normal((2, 4, 3)).astype(np.float32)
    model.save(tmp_path / "c.keras")
    loaded = fkeras.models.load_model(tmp_path / "c.keras")
    assert type(loaded.layers[1].cell) is CounterCell
    np.testing.assert_allclose(loaded.predict(x, verbose=0), model.predict(x, verbose=0),
                               rtol=1e-6)


def _keras():
    if "KERAS_BACKEND" not in os.environ and importlib.util.find_spec("torch") is not None:
        os.environ["KERAS_BACKEND"] = "torch"
    return pytest.importorskip("keras")


@pytest.mark.parametrize("name", sorted(MODELS))
def test_keras_files_load_in_fkeras(tmp_path, name):
    keras = _keras()
    build, shape = MODELS[name]
    x = _data(shape, 2)
    model = build(keras)
    model.save(tmp_path / "k.keras")
    loaded = fkeras.models.load_model(tmp_path / "k.keras")
    _assert_close(loaded.predict(x, verbose=0), model.predict(x, verbose=0), 1e-5, 2e-6)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_fkeras_files_load_in_keras(tmp_path, name):
    keras = _keras()
    build, shape = MODELS[name]
    x = _data(shape, 3)
    model = build(fkeras)
    model.save(tmp_path / "f.keras")
    loaded = keras.models.load_model(tmp_path / "f.keras")
    _assert_close(loaded.predict(x, verbose=0), model.predict(x, verbose=0), 1e-5, 2e-6)
