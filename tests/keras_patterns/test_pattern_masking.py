"""Masking patterns (the "masking and padding" guide): Embedding(mask_zero=True) and Masking
feeding mask-consuming layers, a custom layer that opts into propagation
(supports_masking), a custom mask consumer (`call(..., mask=None)`), a custom mask producer
(compute_mask), and a masked model trained against Keras 3."""

import numpy as np
from patterns_parity import losses_trained, run_both, seed_weights, to_np

import fkeras


def mask_classes(lib):
    class PassThroughTanh(lib.layers.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.supports_masking = True

        def call(self, inputs):
            return lib.ops.tanh(inputs)

    class MaskedMean(lib.layers.Layer):
        """Average over the unmasked timesteps (a mask consumer)."""

        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.supports_masking = True

        def call(self, inputs, mask=None):
            w = lib.ops.expand_dims(lib.ops.cast(mask, "float32"), -1)
            return lib.ops.sum(inputs * w, axis=1) / lib.ops.maximum(
                lib.ops.sum(w, axis=1), 1.0)

        def compute_mask(self, inputs, mask=None):
            return None

    class TemporalSoftmax(lib.layers.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.supports_masking = True

        def call(self, inputs, mask=None):
            m = lib.ops.expand_dims(lib.ops.cast(mask, "float32"), -1)
            e = lib.ops.exp(inputs) * m
            return e / lib.ops.sum(e, axis=1, keepdims=True)

    class NonZeroMask(lib.layers.Layer):
        """A mask producer: scales its input, masks the all-zero timesteps."""

        def call(self, inputs):
            return inputs * 2.0

        def compute_mask(self, inputs, mask=None):
            return lib.ops.max(lib.ops.abs(inputs), axis=-1) > 0.0

    return PassThroughTanh, MaskedMean, TemporalSoftmax, NonZeroMask


TOKENS = np.array([[3, 5, 2, 0, 0], [7, 1, 0, 0, 0], [4, 4, 4, 4, 9], [6, 0, 0, 0, 0]])


def test_masks_propagate_and_are_consumed_like_keras():
    def train(lib):
        PassThroughTanh, MaskedMean, TemporalSoftmax, _ = mask_classes(lib)
        inp = lib.Input((None,), dtype="int32")
        e = lib.layers.Embedding(10, 4, mask_zero=True)(inp)
        t = PassThroughTanh()(e)
        soft = TemporalSoftmax()(lib.layers.Dense(1)(t))
        pooled = MaskedMean()(t)
        model = lib.Model(inp, [soft, pooled])
        seed_weights(model, seed=1)
        soft_v, pooled_v = model(TOKENS)
        return {"softmax": soft_v, "pooled": pooled_v}

    fk, _ = run_both(train)
    # masked timesteps get no probability; each row's softmax sums to 1
    valid = (TOKENS != 0)[..., None]
    assert np.all(fk["softmax"][~valid[..., 0]] == 0.0)
    np.testing.assert_allclose(fk["softmax"].sum(axis=1), 1.0, rtol=1e-5)


def test_eager_mask_attributes_and_compute_mask():
    _, _, _, NonZeroMask = mask_classes(fkeras)
    x = np.zeros((2, 3, 2), "float32")
    x[0, 0] = 1.0
    x[1, :2] = -1.0
    out = NonZeroMask()(x)
    np.testing.assert_array_equal(to_np(out._keras_mask), [[1, 0, 0], [1, 1, 0]])
    emb = fkeras.layers.Embedding(10, 3, mask_zero=True)
    np.testing.assert_array_equal(to_np(emb(TOKENS)._keras_mask), TOKENS != 0)
    np.testing.assert_array_equal(to_np(emb.compute_mask(TOKENS)), TOKENS != 0)
    masked = fkeras.layers.Masking(mask_value=0.0)(x)
    np.testing.assert_array_equal(to_np(masked._keras_mask), [[1, 0, 0], [1, 1, 0]])


def test_masked_sequence_model_trains_like_keras():
    rng = np.random.RandomState(51)
    lengths = rng.randint(1, 7, size=32)
    tokens = np.zeros((32, 6), "int32")
    for i, n in enumerate(lengths):
        tokens[i, :n] = rng.randint(1, 12, size=n)
    y = (lengths > 3).astype("float32")[:, None]

    def train(lib):
        PassThroughTanh, MaskedMean, _, _ = mask_classes(lib)
        model = lib.Sequential([
            lib.Input((6,), dtype="int32"),
            lib.layers.Embedding(12, 4, mask_zero=True),
            PassThroughTanh(),
            lib.layers.LSTM(5, return_sequences=True),
            MaskedMean(),
            lib.layers.Dense(1, activation="sigmoid"),
        ])
        seed_weights(model, seed=2)
        model.compile(optimizer=lib.optimizers.Adam(0.02), loss="binary_crossentropy",
                      metrics=["accuracy"])
        hist = model.fit(tokens, y, batch_size=8, epochs=3, shuffle=False, verbose=0)
        return {"history": hist.history, "weights": model.get_weights()}

    fk, _ = run_both(train)
    losses_trained(fk["history/loss"])


def test_masking_layer_with_lstm_ignores_padded_steps():
    """Values at masked steps do not change an LSTM's output."""
    x = np.random.RandomState(52).standard_normal((2, 4, 3)).astype("float32")
    x[:, 2:] = 0.0
    model = fkeras.Sequential([fkeras.Input((4, 3)), fkeras.layers.Masking(),
                               fkeras.layers.LSTM(2)])
    short = fkeras.Sequential([fkeras.Input((2, 3)), fkeras.layers.LSTM(2)])
    short.set_weights(model.get_weights())
    np.testing.assert_allclose(to_np(model(x)), to_np(short(x[:, :2])), rtol=1e-5, atol=1e-6)
