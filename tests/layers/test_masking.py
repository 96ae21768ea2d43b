"""Mask propagation (Keras 3 semantics): Masking, Embedding(mask_zero=True), masks carried by
eager arrays and KerasTensors, passed as `mask=` to layers whose call takes it, dropped by
layers that do not support masking, through Functional models, fit and nested models."""

import numpy as np
from layer_testing import run_layer_test

import fkeras
from fkeras import layers, ops
from fkeras.engine.masking import get_keras_mask, set_keras_mask


class MaskSpy(layers.Layer):
    """Records the mask its call receives; supports masking."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True
        self.seen = "not called"

    def call(self, inputs, mask=None):
        self.seen = mask
        return ops.multiply(inputs, 2.0)


class NoMask(layers.Layer):
    def call(self, inputs):
        return ops.multiply(inputs, 1.0)


def _padded(rng):
    x = rng.standard_normal((3, 5, 2)).astype(np.float32)
    x[0, 3:] = 0.0
    x[1, :2] = 0.0
    return x, np.any(x != 0, axis=-1)


def test_masking_layer_eager_and_symbolic():
    rng = np.random.default_rng(0)
    x, want = _padded(rng)
    x[2, 1, 0] = 0.0  # one zero feature does not mask the step
    y = layers.Masking()(x)
    np.testing.assert_array_equal(get_keras_mask(y), want)
    np.testing.assert_array_equal(y, x * want[..., None])
    y = layers.Masking(mask_value=5.0)(np.full((1, 2, 3), 5.0, np.float32))
    np.testing.assert_array_equal(get_keras_mask(y), [[False, False]])
    np.testing.assert_array_equal(y, 0.0)
    t = layers.Masking()(layers.Input(shape=(None, 2)))
    assert get_keras_mask(t).shape == (None, None) and get_keras_mask(t).dtype == "bool"
    run_layer_test(layers.Masking, {"mask_value": 1.0}, input_shape=(2, 3, 4),
                   expected_output_shape=(2, 3, 4), expected_num_trainable_weights=0,
                   supports_masking=True, run_training_check=False)


def test_mask_is_passed_to_call_and_propagates():
    rng = np.random.default_rng(1)
    x, want = _padded(rng)
    spy = MaskSpy()
    y = spy(layers.Masking()(x))
    np.testing.assert_array_equal(spy.seen, want)
    np.testing.assert_array_equal(get_keras_mask(y), want)  # default compute_mask: pass on
    z = NoMask()(y)  # does not support masking: the mask stops here
    assert get_keras_mask(z) is None
    spy2 = MaskSpy()
    spy2(z)
    assert spy2.seen is None
    explicit = np.ones((3, 5), bool)
    spy(layers.Masking()(x), mask=explicit)  # an explicit mask wins
    assert np.asarray(spy.seen) is explicit
    assert get_keras_mask(x) is None  # the caller's array stays untagged


def test_mask_not_auto_passed_with_a_second_tensor_argument():
    # Keras 3: the mask is filled in only when the call has a single tensor argument.
    rng = np.random.default_rng(2)
    x, want = _padded(rng)
    rnn = layers.SimpleRNN(2, return_sequences=True)
    m = layers.Masking()(x)
    with_state = rnn(m, initial_state=[np.zeros((3, 2), np.float32)])
    np.testing.assert_allclose(with_state, rnn(x), rtol=1e-6)
    np.testing.assert_array_equal(get_keras_mask(with_state), want)


def test_side_table_forgets_dead_arrays():
    a = np.zeros(3)
    set_keras_mask(a, np.ones(3, bool))
    assert get_keras_mask(a) is not None
    b = a.view()
    assert get_keras_mask(b) is None
    set_keras_mask(a, None)
    assert get_keras_mask(a) is None
    set_keras_mask(3.0, np.ones(1))  # untrackable: ignored
    assert get_keras_mask(3.0) is None


def _embedding_lstm_model(return_sequences=False):
    ids = layers.Input(shape=(None,), dtype="int32")
    emb = layers.Embedding(7, 3, mask_zero=True)(ids)
    seq = layers.LSTM(4, return_sequences=return_sequences)(emb)
    return fkeras.Model(ids, seq), emb, seq


def test_symbolic_masks_through_functional_model():
    model, emb, seq = _embedding_lstm_model(return_sequences=True)
    assert get_keras_mask(emb).shape == (None, None)
    assert get_keras_mask(seq) is not None
    _, _, last = _embedding_lstm_model()
    assert get_keras_mask(last) is None  # return_sequences=False: no output mask
    out = layers.Dense(2)(seq)  # Dense here does not support masking
    assert get_keras_mask(out) is None or out.shape == (None, None, 2)


def test_embedding_mask_zero_padding_does_not_change_the_result():
    rng = np.random.default_rng(3)
    model, _, _ = _embedding_lstm_model()
    ids = np.array([[3, 1, 4, 0, 0], [2, 6, 5, 1, 2]], np.int32)
    short = model(ids[:1, :3])
    np.testing.assert_allclose(model(ids)[0], short[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(model.predict(ids, verbose=0)[0], short[0], rtol=1e-5,
                               atol=1e-6)
    # model(x, mask=...) on a Functional model tags its inputs.
    inp = layers.Input(shape=(5, 2))
    spy = MaskSpy()
    m = fkeras.Model(inp, spy(inp))
    mask = rng.random((2, 5)) > 0.5
    m(np.ones((2, 5, 2), np.float32), mask=mask)
    np.testing.assert_array_equal(spy.seen, mask)


def test_fit_respects_masks():
    # Padded steps must not influence training: two batches that differ only in padded
    # positions give the same weights after one step.
    rng = np.random.default_rng(4)
    x = rng.standard_normal((4, 6, 2)).astype(np.float32)
    x[:, 4:] = 0.0
    x2 = x.copy()
    y = rng.standard_normal((4, 3)).astype(np.float32)
    weights = []
    for data in (x, x2):
        if data is x2:
            data[:, 4:] = 0.0
        inp = layers.Input(shape=(6, 2))
        out = layers.GRU(3)(layers.Masking()(inp))
        model = fkeras.Model(inp, out)
        if weights:
            model.set_weights(weights[0][0])
        before = model.get_weights()
        model.compile(optimizer=fkeras.optimizers.SGD(0.1), loss="mse")
        model.train_on_batch(data, y)
        weights.append((before, model.get_weights()))
    for a, b in zip(weights[0][1], weights[1][1]):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    # And the masked model trains like one on the truncated sequences.
    inp = layers.Input(shape=(4, 2))
    model = fkeras.Model(inp, layers.GRU(3)(inp))
    model.set_weights(weights[0][0])
    model.compile(optimizer=fkeras.optimizers.SGD(0.1), loss="mse")
    model.train_on_batch(x[:, :4], y)
    for a, b in zip(model.get_weights(), weights[0][1]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_sequential_with_masking():
    rng = np.random.default_rng(5)
    x, _ = _padded(rng)
    model = fkeras.Sequential([layers.Input(shape=(5, 2)), layers.Masking(),
                               layers.SimpleRNN(3)])
    rnn = model.layers[-1]
    lengths_ok = model(x)
    np.testing.assert_allclose(lengths_ok[:1], rnn(x[:1, :3]), rtol=1e-5, atol=1e-6)


class HalvesInTime(layers.Layer):
    """Splits (N, T, F) into two halves along time; compute_mask splits the mask alike.
    It never sets supports_masking: overriding compute_mask is enough (Keras 3)."""

    def call(self, inputs):
        t = inputs.shape[1] // 2
        return [inputs[:, :t], inputs[:, t:]]

    def compute_mask(self, inputs, mask=None):
        if mask is None:
            return None
        t = mask.shape[1] // 2
        return [mask[:, :t], mask[:, t:]]


def test_overriding_compute_mask_turns_supports_masking_on():
    assert HalvesInTime().supports_masking
    assert not NoMask().supports_masking
    x = np.array([[1, 2, 0, 0], [3, 0, 0, 0]], "float32")[..., None] * np.ones(3, "float32")
    masked = layers.Masking()(x)
    first, second = HalvesInTime()(masked)
    np.testing.assert_array_equal(np.asarray(get_keras_mask(first)), [[True, True], [True, False]])
    np.testing.assert_array_equal(np.asarray(get_keras_mask(second)), [[False, False]] * 2)
    inp = fkeras.Input((4, 3))
    a, b = HalvesInTime()(layers.Masking()(inp))
    assert a._keras_mask is not None and b._keras_mask is not None
