"""Custom layers that read the batch size with `ops.shape` and broadcast to it (keras-io's
MLP-image PositionEmbedding, FNet and ViT recipes): the layer works in a Functional model
built on `Input` (unknown batch size) and trains like Keras 3; `ops.broadcast_to` keeps an
unknown dimension unknown symbolically and refuses one on concrete tensors."""

import numpy as np
import pytest
from patterns_parity import keras_or_none, losses_trained, run_both, seed_weights

import fkeras

rng = np.random.RandomState(11)
X = rng.standard_normal((32, 5, 4)).astype("float32")
Y = rng.standard_normal((32, 1)).astype("float32")


def position_model(lib):
    class PositionEmbedding(lib.layers.Layer):
        def __init__(self, sequence_length, **kwargs):
            super().__init__(**kwargs)
            self.sequence_length = sequence_length

        def build(self, input_shape):
            self.embeddings = self.add_weight(
                name="embeddings", shape=(self.sequence_length, input_shape[-1]))

        def call(self, inputs):
            shape = lib.ops.shape(inputs)
            table = lib.ops.convert_to_tensor(self.embeddings)
            table = lib.ops.slice(table, (0, 0), (shape[-2], shape[-1]))
            return lib.ops.broadcast_to(table, shape)

        def compute_output_shape(self, input_shape):
            return input_shape

    inputs = lib.Input((5, 4))
    x = inputs + PositionEmbedding(7)(inputs)
    x = lib.layers.GlobalAveragePooling1D()(x)
    model = lib.Model(inputs, lib.layers.Dense(1)(x))
    seed_weights(model, seed=4)
    return model


def test_broadcast_to_batch_shape_in_custom_layer_trains_like_keras():
    def train(lib):
        model = position_model(lib)
        model.compile(lib.optimizers.SGD(0.05), loss="mse")
        history = model.fit(X, Y, batch_size=8, epochs=3, shuffle=False, verbose=0)
        losses_trained(history.history["loss"])
        return {"loss": history.history["loss"], "predict": model.predict(X[:6], verbose=0),
                "output_shape": np.array([-1 if d is None else d for d in model.output_shape])}

    run_both(train)


@pytest.mark.parametrize("x_shape, target", [
    ((None, 4), (None, 4)),
    ((None, 1, 4), (None, 6, 4)),
    ((1, 4), (None, 3, 1, 4)),
    ((None, 4), (2, 4)),
])
def test_symbolic_broadcast_to_keeps_unknown_dims_like_keras(x_shape, target):
    got = fkeras.ops.broadcast_to(fkeras.KerasTensor(x_shape), target)
    assert got.shape == target
    keras = keras_or_none()
    if keras is not None:
        assert keras.ops.broadcast_to(keras.KerasTensor(x_shape), target).shape == got.shape


@pytest.mark.parametrize("x_shape, target", [((None, 3), (None, 4)), ((2, 3), (3,))])
def test_symbolic_broadcast_to_refuses_incompatible_shapes(x_shape, target):
    with pytest.raises(ValueError, match="broadcast_to"):
        fkeras.ops.broadcast_to(fkeras.KerasTensor(x_shape), target)


def test_concrete_broadcast_to_refuses_unknown_dims():
    with pytest.raises(ValueError, match=r"broadcast_to: `shape` has an unknown"):
        fkeras.ops.broadcast_to(np.ones((1, 4), "float32"), (None, 4))
    out = fkeras.ops.broadcast_to(np.arange(4, dtype="float32"), (3, 4))
    np.testing.assert_array_equal(np.asarray(out), np.broadcast_to(np.arange(4.0), (3, 4)))


S = slice(None)


@pytest.mark.parametrize("key", [
    (S, slice(None, None, -1)), (S, slice(1, None)), (S, slice(None, -1)),
    (S, slice(None, None, 2)), (S, slice(2, 5)), (Ellipsis, slice(None, None, -1)),
    (S, 0), (S, -1), (Ellipsis, 1), (S, None, S, 2), (S, S, slice(1, 3)), (slice(0, 2),),
], ids=repr)
def test_symbolic_slicing_of_unknown_dims_like_keras(key):
    """A slice of an unknown dimension stays unknown (the reversed time axis of a
    Bidirectional layer on variable-length sequences)."""
    x = fkeras.Input((None, 4))
    got = x[key].shape
    keras = keras_or_none()
    if keras is not None:
        assert keras.Input((None, 4))[key].shape == got
    probe = np.zeros((3, 7, 4))[key].shape  # agrees with NumPy where the size is known
    assert all(g is None or g == p for g, p in zip(got, probe)), (got, probe)


def test_symbolic_index_out_of_range_of_a_known_dim_raises():
    with pytest.raises(IndexError, match="out of bounds"):
        fkeras.Input((None, 4))[:, :, 4]


def bilstm_model(lib):
    inputs = lib.Input(shape=(None,), dtype="int32")
    x = lib.layers.Embedding(20, 4)(inputs)
    x = lib.layers.Bidirectional(lib.layers.LSTM(3, return_sequences=True))(x)
    x = lib.layers.Bidirectional(lib.layers.LSTM(3))(x)
    model = lib.Model(inputs, lib.layers.Dense(1, activation="sigmoid")(x))
    seed_weights(model, seed=5)
    return model


def test_bidirectional_on_variable_length_sequences_like_keras():
    ids = np.random.RandomState(3).randint(1, 20, (24, 9))
    labels = (ids[:, :3].sum(1) > 30).astype("float32")

    def train(lib):
        model = bilstm_model(lib)
        assert model.layers[2].output.shape == (None, None, 6)
        model.compile(lib.optimizers.Adam(0.01), loss="binary_crossentropy")
        history = model.fit(ids, labels, batch_size=8, epochs=3, shuffle=False, verbose=0)
        losses_trained(history.history["loss"])
        return {"loss": history.history["loss"], "predict": model.predict(ids[:4], verbose=0)}

    run_both(train)
