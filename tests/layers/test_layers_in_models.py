"""The new layers inside Functional and Sequential models: config round trip of the whole
model (every layer's get_config/from_config through serialization), weights, training flag."""

import numpy as np

import fkeras
from fkeras import layers, ops


@fkeras.saving.register_keras_serializable(package="test_layers_in_models")
def halve(t):
    return ops.multiply(t, 0.5)


def _functional():
    inp = fkeras.Input(shape=(8, 8, 3))
    y = layers.Conv2D(4, 3, padding="same", activation="relu")(inp)
    y = layers.BatchNormalization(axis=-1)(y)
    y = layers.AveragePooling2D(padding="same")(y)
    y = layers.MaxPooling2D(1)(y)
    y = layers.Dropout(0.5, seed=1)(y)
    y = layers.Reshape((4, 16))(y)
    seq, h, c = layers.LSTM(5, return_sequences=True, return_state=True)(y)
    g = layers.GRU(3, reset_after=False)(seq)
    s = layers.SimpleRNN(3, go_backwards=True)(seq)
    merged = layers.Concatenate()([h, c, layers.Add()([g, s])])
    out = layers.Lambda(halve)(layers.Flatten()(merged))
    ids = fkeras.Input(shape=(4,), dtype="int32")
    emb = layers.Flatten()(layers.Embedding(7, 2)(ids))
    return fkeras.Model([inp, ids], [out, emb])


def test_functional_config_round_trip_gives_the_same_model():
    model = _functional()
    clone = fkeras.Model.from_config(model.get_config())
    assert [type(lyr).__name__ for lyr in clone.layers] == \
        [type(lyr).__name__ for lyr in model.layers]
    assert [w.shape for w in clone.weights] == [w.shape for w in model.weights]
    clone.set_weights(model.get_weights())
    rng = np.random.default_rng(0)
    x = [rng.standard_normal((2, 8, 8, 3)).astype(np.float32), np.array([[1, 2, 3, 6]] * 2)]
    for a, b in zip(model.predict(x, verbose=0), clone.predict(x, verbose=0)):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


def test_sequential_training_flag_and_gradients():
    model = fkeras.Sequential([
        fkeras.Input(shape=(6, 6, 2)),
        layers.Conv2D(3, 3, activation="relu"),
        layers.BatchNormalization(),
        layers.Flatten(),
        layers.Dropout(0.5),
        layers.Dense(1),
    ])
    x = np.random.default_rng(1).standard_normal((4, 6, 6, 2)).astype(np.float32)
    np.testing.assert_allclose(model.predict(x, verbose=0), model(x, training=False),
                               rtol=1e-6)
    with fkeras.GradientTape() as tape:
        loss = ops.mean(ops.square(model(x, training=True)))
    grads = tape.gradient(loss, model.trainable_weights)
    assert len(grads) == 6 and all(g is not None for g in grads)
    assert model.layers[1].moving_mean.numpy().any()  # updated in training


def test_model_training_value_overrides_one_recorded_in_the_node():
    # Keras 3: Dropout(...)(x, training=True) in a graph still turns off in predict/evaluate,
    # and a direct model(x) call keeps the recorded value.
    inp = fkeras.Input((200,))
    model = fkeras.Model(inp, fkeras.layers.Dropout(0.5, seed=1)(inp, training=True))
    x = np.ones((2, 200), np.float32)
    np.testing.assert_array_equal(model.predict(x, verbose=0), x)
    np.testing.assert_array_equal(np.asarray(model(x, training=False)), x)
    assert (np.asarray(model(x)) == 0).any()
