"""RNN with cells without Keras: built-in cells against the NumPy float64 references of
layer_refs (masks, go_backwards, dropout masks), gradients against finite differences, the
fused path against the step loop, stacked cells, stateful RNN, and user-written cells (Layer
subclasses whose `call` uses Python operators) that train with fit."""

import pathlib
import sys

import numpy as np
import pytest
from layer_refs import gru_cell, lstm_cell, run_rnn, simple_rnn_cell

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "ops"))
from op_testing import fd_check  # noqa: E402

import fkeras  # noqa: E402
from fkeras import layers, ops  # noqa: E402

N, T, F, U = 3, 5, 4, 3
MASK = np.array([[1, 1, 1, 0, 0], [0, 1, 1, 0, 1], [0, 0, 0, 0, 0]], bool)


def _rand(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def _ref_cell(cell):
    k, rk = np.asarray(cell.kernel, np.float64), np.asarray(cell.recurrent_kernel, np.float64)
    b = None if cell.bias is None else np.asarray(cell.bias, np.float64)
    if isinstance(cell, layers.LSTMCell):
        return lambda x, s: lstm_cell(x, s, k, rk, b)
    if isinstance(cell, layers.GRUCell):
        return lambda x, s: gru_cell(x, s, k, rk, b, reset_after=cell.reset_after)
    return lambda x, s: simple_rnn_cell(x, s, k, rk, b)


CELLS = [lambda: layers.SimpleRNNCell(U), lambda: layers.LSTMCell(U),
         lambda: layers.GRUCell(U), lambda: layers.GRUCell(U, reset_after=False)]


@pytest.mark.parametrize("make", CELLS)
@pytest.mark.parametrize("opts", [dict(), dict(go_backwards=True), dict(mask=True),
                                  dict(mask=True, zero_output_for_mask=True)])
def test_rnn_matches_numpy_reference(make, opts):
    rng = np.random.default_rng(0)
    opts = dict(opts)
    mask = MASK if opts.pop("mask", False) else None
    x = _rand(rng, N, T, F)
    layer = layers.RNN(make(), return_sequences=True, return_state=True, **opts)
    layer.build(x.shape)
    for w in layer.weights:
        w.assign(_rand(rng, *w.shape) * 0.5)
    outs = layer(x, mask=mask)
    n_states = len(layer.state_size)
    states = [np.zeros((N, U)) for _ in range(n_states)]
    hs, last, finals = run_rnn(_ref_cell(layer.cell), x.astype(np.float64), states, mask,
                               opts.get("go_backwards", False),
                               opts.get("zero_output_for_mask", False))
    np.testing.assert_allclose(np.asarray(outs[0]), hs, rtol=1e-5, atol=1e-5)
    for got, want in zip(outs[1:], finals):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("make", CELLS)
def test_fused_path_equals_step_loop(make):
    """Without a mask a single built-in cell runs the fused sequence op; an all-ones mask
    forces the step loop: same numbers, same gradients."""
    rng = np.random.default_rng(1)
    x = _rand(rng, N, T, F)
    layer = layers.RNN(make(), return_sequences=True)
    results = []
    for mask in (None, np.ones((N, T), bool)):
        with fkeras.GradientTape() as tape:
            y = layer(x, mask=mask)
            loss = ops.sum(ops.multiply(y, y))
        results.append([np.asarray(y)] + [np.asarray(g) for g in
                                           tape.gradient(loss, layer.trainable_weights)])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("make,extra", [
    (lambda: layers.SimpleRNNCell(2, dropout=0.3, recurrent_dropout=0.3), {}),
    (lambda: layers.LSTMCell(2, dropout=0.3, recurrent_dropout=0.3), {}),
    (lambda: layers.LSTMCell(2, dropout=0.3), {}),
    (lambda: layers.GRUCell(2, dropout=0.3, recurrent_dropout=0.3), {}),
    (lambda: layers.GRUCell(2, reset_after=False, recurrent_dropout=0.3), {}),
])
def test_cell_gradients_match_finite_differences(make, extra):
    """One cell step in training, with fixed dropout masks, against central differences for
    the inputs, the states and every weight (float64 reference device)."""
    rng = np.random.default_rng(2)
    cell = make()
    n, f = 3, 4
    cell.build((n, f))
    n_states = 2 if isinstance(cell, layers.LSTMCell) else 1
    x = _rand(rng, n, f)
    states = [_rand(rng, n, cell.units) for _ in range(n_states)]
    cell.get_dropout_mask(x)  # drawn once, then fixed for every evaluation
    cell.get_recurrent_dropout_mask(states[0])
    names = ["kernel", "recurrent_kernel", "bias"]
    weights = [np.asarray(getattr(cell, k)) for k in names]

    def fn(x, *rest):
        for k, w in zip(names, rest[:3]):
            setattr(cell, k, w)
        out, new = cell.call(x, list(rest[3:]), training=True)
        return [out] + list(new)

    fd_check(fn, [x] + weights + states, wrt=list(range(4 + n_states)), rng=rng)


def test_dropout_masks_are_shared_by_every_step_and_redrawn_per_call():
    x = np.ones((4, 6, 5), np.float32)
    cell = layers.SimpleRNNCell(3, dropout=0.5, seed=3, use_bias=False)
    layer = layers.RNN(cell, return_sequences=True)
    layer.build(x.shape)
    cell.recurrent_kernel.assign(np.zeros((3, 3), np.float32))
    a = np.asarray(layer(x, training=True))
    np.testing.assert_array_equal(a, np.broadcast_to(a[:, :1], a.shape))  # same mask per step
    b = np.asarray(layer(x, training=True))
    assert not np.array_equal(a, b)  # a new mask per call
    np.testing.assert_array_equal(np.asarray(layer(x)), np.asarray(layer(x, training=False)))
    assert cell._dropout_mask is None  # reset after the call


def test_stacked_cells_equal_two_layers():
    rng = np.random.default_rng(4)
    x = _rand(rng, N, T, F)
    stacked = layers.RNN([layers.LSTMCell(3), layers.GRUCell(2)], return_sequences=True,
                         return_state=True)
    out = stacked(x)
    first = layers.RNN(layers.LSTMCell(3), return_sequences=True)
    second = layers.RNN(layers.GRUCell(2), return_sequences=True, return_state=True)
    first.build(x.shape)
    second.build((N, T, 3))
    first.set_weights(stacked.cell.cells[0].get_weights())
    second.set_weights(stacked.cell.cells[1].get_weights())
    want = second(first(x))
    np.testing.assert_allclose(np.asarray(out[0]), np.asarray(want[0]), rtol=1e-6, atol=1e-6)
    assert len(out) == 3 and len(out[1]) == 2 and len(out[2]) == 1  # [y, [h1, c1], [h2]]
    np.testing.assert_allclose(np.asarray(out[2][0]), np.asarray(want[1]), rtol=1e-6,
                               atol=1e-6)


def test_stateful_rnn_carries_states():
    rng = np.random.default_rng(5)
    x = _rand(rng, 2, 6, F)
    full = layers.RNN(layers.LSTMCell(U))
    parts = layers.RNN(layers.LSTMCell(U), stateful=True)
    parts.build((2, 3, F))
    full.build((2, 6, F))
    full.set_weights(parts.get_weights())
    parts(x[:, :3])
    np.testing.assert_allclose(np.asarray(parts(x[:, 3:])), np.asarray(full(x)), rtol=1e-5,
                               atol=1e-6)
    parts.reset_state()
    np.testing.assert_allclose(np.asarray(parts(x[:, :3])), np.asarray(full(x[:, :3])),
                               rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="batch size must be static"):
        layers.RNN(layers.LSTMCell(U), stateful=True)(layers.Input((3, F)))


def test_rnn_symbolic_shapes_and_masks():
    ids = layers.Input((None,), dtype="int32")
    h = layers.Embedding(9, F, mask_zero=True)(ids)
    seq = layers.RNN(layers.GRUCell(U), return_sequences=True)(h)
    out, h1, c1 = layers.RNN(layers.LSTMCell(2), return_state=True)(seq)
    assert seq.shape == (None, None, U) and out.shape == h1.shape == c1.shape == (None, 2)
    assert fkeras.engine.masking.get_keras_mask(seq) is not None
    model = fkeras.Model(ids, out)
    data = np.array([[1, 2, 3, 0, 0], [4, 0, 0, 0, 0]])
    np.testing.assert_allclose(np.asarray(model(data))[0], np.asarray(model(data[:, :3]))[0],
                               rtol=1e-5, atol=1e-6)  # padding steps change nothing
    with pytest.raises(ValueError, match="Cannot unroll"):
        layers.RNN(layers.GRUCell(2), unroll=True)(layers.Input((None, 3)))
    with pytest.raises(ValueError, match="`call` method"):
        layers.RNN(object())
    with pytest.raises(ValueError, match="state_size"):
        layers.RNN(layers.Dense(2))


# ---- user-written cells ----

class MinimalRNNCell(layers.Layer):
    """A cell written with operators only (the Keras documentation's example)."""

    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.state_size = units

    def build(self, input_shape):
        self.kernel = self.add_weight(shape=(input_shape[-1], self.units), name="kernel")
        self.recurrent_kernel = self.add_weight(shape=(self.units, self.units),
                                                name="recurrent_kernel")

    def call(self, inputs, states):
        prev = states[0]
        assert isinstance(inputs, fkeras.Tensor)  # user code sees Tensors
        output = ops.tanh(inputs @ self.kernel + prev @ self.recurrent_kernel)
        return output, [output]

    def get_config(self):
        return {**super().get_config(), "units": self.units}


class GatedCell(layers.Layer):
    """Two states, `training`, NumPy-style operators, output_size != state sizes."""

    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.state_size = [units, units]
        self.output_size = 1

    def build(self, input_shape):
        self.w = self.add_weight(shape=(input_shape[-1], 2 * self.units), name="w")
        self.v = self.add_weight(shape=(self.units, 1), name="v")

    def call(self, inputs, states, training=False):
        h, acc = states
        z = inputs @ self.w
        gate = ops.sigmoid(z[:, :self.units])
        h = gate * h + (1.0 - gate) * ops.tanh(z[:, self.units:])
        acc = acc + h * 0.5
        return h @ self.v, [h, acc]


def test_user_cell_matches_reference_and_gradients():
    rng = np.random.default_rng(6)
    x = _rand(rng, 2, 4, 3)
    layer = layers.RNN(MinimalRNNCell(4), return_sequences=True)
    y = np.asarray(layer(x))
    k, rk = (np.asarray(w, np.float64) for w in layer.get_weights())
    h, want = np.zeros((2, 4)), []
    for t in range(4):
        h = np.tanh(x[:, t] @ k + h @ rk)
        want.append(h)
    np.testing.assert_allclose(y, np.stack(want, 1), rtol=1e-5, atol=1e-6)
    cell = layer.cell

    def fn(x, k, rk):
        cell.kernel, cell.recurrent_kernel = k, rk
        return layer(x, mask=np.array([[1, 1, 0, 1], [1, 1, 1, 1]], bool))

    fd_check(fn, [x, k, rk], wrt=[0, 1, 2], rng=rng)


@pytest.mark.parametrize("cell_cls", [MinimalRNNCell, GatedCell])
def test_user_cell_trains_with_fit(cell_cls):
    rng = np.random.default_rng(7)
    x = _rand(rng, 32, 5, 3)
    y = np.tanh(x.sum(axis=(1, 2)))[:, None].astype(np.float32)
    inp = layers.Input((5, 3))
    h = layers.RNN(cell_cls(6))(inp)
    model = fkeras.Model(inp, layers.Dense(1)(h))
    model.compile(optimizer=fkeras.optimizers.Adam(0.02), loss="mse")
    cell_weights = [np.array(w) for w in model.layers[1].cell.weights]
    losses = model.fit(x, y, batch_size=8, epochs=8, verbose=0).history["loss"]
    assert losses[-1] < 0.7 * losses[0]
    assert all(not np.array_equal(np.array(w), b)
               for w, b in zip(model.layers[1].cell.weights, cell_weights))


class OnesStateCell(MinimalRNNCell):
    """A user cell with its own get_initial_state (run in tensor mode)."""

    def get_initial_state(self, batch_size=None):
        return [ops.add(np.zeros((batch_size, self.units), np.float32), 1.0)]


def test_user_initial_state_is_used():
    x = np.zeros((2, 1, 3), np.float32)
    layer = layers.RNN(OnesStateCell(2))
    layer.build(x.shape)
    layer.cell.recurrent_kernel.assign(np.eye(2, dtype=np.float32))
    np.testing.assert_allclose(np.asarray(layer(x)), np.tanh(np.ones((2, 2))), rtol=1e-6)
