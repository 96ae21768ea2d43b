"""uint8 / int / bool data trains, evaluates and predicts exactly as the same values given as
float32: model inputs are converted once to their Input's dtype (Keras 3 converts a Functional
model's inputs the same way), integer Inputs keep integers for an Embedding, and sparse targets
stay integer labels."""

import numpy as np
import pytest

import fkeras
from fkeras import layers

RNG = np.random.default_rng(0)


def mlp():
    return fkeras.Sequential([fkeras.Input((12,)), layers.Dense(8, activation="relu"),
                              layers.BatchNormalization(), layers.Dense(3, activation="softmax")])


def cnn():
    return fkeras.Sequential([fkeras.Input((6, 6, 1)), layers.Conv2D(4, 3, activation="relu"),
                              layers.MaxPooling2D(), layers.Flatten(),
                              layers.Dense(3, activation="softmax")])


def conv1d():
    return fkeras.Sequential([fkeras.Input((8, 2)), layers.Conv1D(4, 3), layers.AveragePooling1D(),
                              layers.GlobalMaxPooling1D(), layers.Dense(3, activation="softmax")])


def conv3d():
    return fkeras.Sequential([fkeras.Input((4, 4, 4, 1)), layers.Conv3D(2, 2),
                              layers.GlobalAveragePooling3D(),
                              layers.Dense(3, activation="softmax")])


def recurrent(cls):
    def make():
        return fkeras.Sequential([fkeras.Input((5, 3)), cls(4),
                                  layers.Dense(3, activation="softmax")])
    return make


MODELS = {"mlp": (mlp, (12,)), "cnn": (cnn, (6, 6, 1)), "conv1d": (conv1d, (8, 2)),
          "conv3d": (conv3d, (4, 4, 4, 1)), "lstm": (recurrent(layers.LSTM), (5, 3)),
          "gru": (recurrent(layers.GRU), (5, 3)),
          "simple_rnn": (recurrent(layers.SimpleRNN), (5, 3))}


def twins(make):
    a, b = make(), make()
    b.set_weights(a.get_weights())
    for m in (a, b):
        m.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
    return a, b


@pytest.mark.parametrize("dtype", ["uint8", "int64", "bool"])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_fit_evaluate_predict_match_float32(name, dtype):
    make, shape = MODELS[name]
    x = RNG.integers(0, 255 if dtype == "uint8" else 3, size=(16,) + shape).astype(dtype)
    y = RNG.integers(0, 3, size=16)  # int64 labels: they stay labels
    ints, floats = twins(make)
    xf = x.astype("float32")
    h_int = ints.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0).history
    h_float = floats.fit(xf, y, batch_size=8, epochs=2, shuffle=False, verbose=0).history
    assert h_int == h_float
    assert ints.evaluate(x, y, verbose=0) == floats.evaluate(xf, y, verbose=0)
    np.testing.assert_array_equal(ints.predict(x, verbose=0), floats.predict(xf, verbose=0))
    np.testing.assert_array_equal(ints.predict_on_batch(x), floats.predict_on_batch(xf))
    np.testing.assert_array_equal(ints(x), floats(xf))
    assert ints.train_on_batch(x, y) == floats.train_on_batch(xf, y)
    assert ints.test_on_batch(x, y) == floats.test_on_batch(xf, y)


def test_validation_data_and_split_take_integers():
    x = RNG.integers(0, 255, size=(20, 12)).astype("uint8")
    y = RNG.integers(0, 3, size=20)
    ints, floats = twins(mlp)
    kw = dict(epochs=2, shuffle=False, verbose=0)
    assert (ints.fit(x, y, validation_split=0.25, **kw).history ==
            floats.fit(x.astype("float32"), y, validation_split=0.25, **kw).history)
    assert (ints.fit(x, y, validation_data=(x[:4], y[:4]), **kw).history ==
            floats.fit(x.astype("float32"), y, validation_data=(x[:4].astype("float32"), y[:4]),
                       **kw).history)


def test_generator_batches_take_integers():
    x = RNG.integers(0, 255, size=(16, 6, 6, 1)).astype("uint8")
    y = RNG.integers(0, 3, size=16)
    ints, floats = twins(cnn)

    def batches(data):
        for i in range(0, 16, 8):
            yield data[i:i + 8], y[i:i + 8]

    assert (ints.fit(batches(x), verbose=0).history ==
            floats.fit(batches(x.astype("float32")), verbose=0).history)


def embedding_model(input_dtype):
    tokens = fkeras.Input((4,), dtype=input_dtype, name="tokens")
    counts = fkeras.Input((2,), name="counts")
    h = layers.Flatten()(layers.Embedding(10, 3)(tokens))
    raw = layers.Dense(2)(layers.Flatten()(tokens))  # an integer tensor into a float layer
    out = layers.Dense(1)(layers.Concatenate()([h, raw, counts]))
    model = fkeras.Model([tokens, counts], out)
    model.compile("sgd", "mse")
    return model


@pytest.mark.parametrize("input_dtype", ["int32", "float32"])
def test_functional_model_with_integer_and_float_inputs(input_dtype):
    """An integer Input feeds an Embedding (indices stay integers) and, through Flatten, a
    Dense (cast there); a float32 Input fed integers converts them once."""
    tokens = RNG.integers(0, 10, size=(12, 4))
    counts = RNG.integers(0, 5, size=(12, 2)).astype("uint8")
    y = RNG.normal(size=(12, 1)).astype("float32")
    a, b = embedding_model(input_dtype), embedding_model(input_dtype)
    b.set_weights(a.get_weights())
    as_given = [tokens, counts]
    as_float = [tokens.astype("float32"), counts.astype("float32")]
    assert (a.fit(as_given, y, shuffle=False, verbose=0).history ==
            b.fit(as_float, y, shuffle=False, verbose=0).history)
    np.testing.assert_array_equal(a.predict(as_given, verbose=0), b.predict(as_float, verbose=0))
    np.testing.assert_array_equal(a(as_given), b(as_float))


def test_integer_input_refuses_fractional_floats():
    model = embedding_model("int32")
    x = [np.full((2, 4), 1.5, "float32"), np.zeros((2, 2), "float32")]
    with pytest.raises(ValueError, match="tokens has dtype int32 .* not whole numbers"):
        model.predict(x, verbose=0)


def test_nested_float_model_called_on_an_integer_tensor():
    inner = fkeras.Sequential([fkeras.Input((3,)), layers.Dense(2)])
    ids = fkeras.Input((3,), dtype="int64")
    outer = fkeras.Model(ids, inner(layers.Flatten()(ids)))
    x = RNG.integers(0, 5, size=(4, 3))
    np.testing.assert_array_equal(outer.predict(x, verbose=0),
                                  inner.predict(x.astype("float32"), verbose=0))


class Subclassed(fkeras.Model):
    def __init__(self):
        super().__init__()
        self.embed = layers.Embedding(10, 2)
        self.dense = layers.Dense(1)

    def call(self, x, training=None):
        return self.dense(layers.Flatten()(self.embed(x)))


def test_subclassed_model_passes_integers_to_its_layers():
    x = RNG.integers(0, 10, size=(8, 3)).astype("uint8")
    model = Subclassed()
    model.compile("sgd", "mse")
    history = model.fit(x, np.ones((8, 1), "float32"), verbose=0)
    assert np.isfinite(history.history["loss"]).all()
    np.testing.assert_array_equal(model.predict(x, verbose=0), model(x.astype("int64")))


def test_sparse_targets_stay_integer_labels():
    """uint8 labels for a sparse loss are labels, and equal the same labels as int64."""
    x = RNG.normal(size=(16, 12)).astype("float32")
    y = RNG.integers(0, 3, size=16)
    a, b = twins(mlp)
    assert (a.fit(x, y.astype("uint8"), shuffle=False, verbose=0).history ==
            b.fit(x, y, shuffle=False, verbose=0).history)
