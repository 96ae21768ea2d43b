"""A user layer that counts positions up to an unknown sequence length (keras-io's FNet and
NER position embeddings: `ops.arange(start=0, stop=ops.shape(x)[-1])`) on `Input((None,))`:
Keras 3 traces `call` on stand-in values, so the output keeps the unknown length. fkeras once
counted to None (an empty range) and gave the model a length of 0. Compared with Keras 3
(torch) where installed."""

import numpy as np
import pytest
from patterns_parity import keras_or_none, losses_trained, run_both, seed_weights, to_np

import fkeras

rng = np.random.RandomState(67)
TOKENS = rng.randint(1, 30, (16, 9)).astype("int32")
TARGETS = rng.randint(0, 5, (16, 9)).astype("int32")


def position_embedding(lib, max_length=16):
    ops = lib.ops

    class PositionalEmbedding(lib.layers.Layer):
        def __init__(self):
            super().__init__()
            self.tokens = lib.layers.Embedding(30, 6)
            self.positions = lib.layers.Embedding(max_length, 6)

        def call(self, inputs):
            length = ops.shape(inputs)[-1]
            positions = ops.arange(start=0, stop=length, step=1)
            return self.tokens(inputs) + self.positions(positions)

    return PositionalEmbedding()


@pytest.mark.parametrize("length", [None, 9])
def test_symbolic_length_kept(length):
    def shape(lib):
        inputs = lib.Input((length,), dtype="int32")
        return tuple(position_embedding(lib)(inputs).shape)

    assert shape(fkeras) == (None, length, 6)
    keras = keras_or_none()
    if keras is not None:
        assert shape(keras) == (None, length, 6)


def test_variable_length_model_trains_like_keras():
    def train(lib):
        inputs = lib.Input((None,), dtype="int32")
        x = position_embedding(lib)(inputs)
        outputs = lib.layers.Dense(5)(x)
        model = lib.Model(inputs, outputs)
        seed_weights(model, seed=6)
        model.compile(lib.optimizers.SGD(0.5),
                      lib.losses.SparseCategoricalCrossentropy(from_logits=True))
        history = model.fit(TOKENS, TARGETS, batch_size=8, epochs=3, shuffle=False, verbose=0)
        losses_trained(history.history["loss"])
        assert tuple(model.output_shape) == (None, None, 5)
        return {"loss": history.history["loss"],
                "short": model.predict(TOKENS[:2, :4], verbose=0)}

    fk, _ = run_both(train)
    assert fk["short"].shape == (2, 4, 5)


def test_eager_arange_with_stop_none_counts_to_start_like_keras():
    np.testing.assert_array_equal(to_np(fkeras.ops.arange(4, None)), np.arange(4))
    assert to_np(fkeras.ops.arange(0, None)).shape == (0,)
