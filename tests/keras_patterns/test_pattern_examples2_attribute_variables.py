"""Variables assigned as layer attributes (`self.scale = keras.Variable(...)`; keras-io's MoE
keeps its expert usage counts in `keras.Variable(..., trainable=False)`): Keras 3 tracks them
as the layer's own weights, so they train, count in `count_params`, save and load. Compared
with Keras 3 (torch) where installed, and with NumPy."""

import os

import numpy as np
import pytest
from patterns_parity import keras_or_none, losses_trained, run_both, seed_weights, to_np

import fkeras

rng = np.random.RandomState(53)
X = rng.standard_normal((16, 4)).astype("float32")
Y = rng.standard_normal((16, 3)).astype("float32")


def scaled_dense(lib):
    class ScaledDense(lib.layers.Layer):
        def __init__(self, units, **kwargs):
            super().__init__(**kwargs)
            self.dense = lib.layers.Dense(units)
            self.usage = lib.Variable(lib.ops.zeros((units,)), trainable=False, name="usage")
            self.scale = lib.Variable(lib.ops.ones((units,)), name="scale")

        def call(self, x):
            y = self.dense(x) * self.scale
            self.usage.assign(self.usage + lib.ops.sum(lib.ops.abs(y), axis=0))
            return y

    return ScaledDense(3, name="scaled")


def model_of(lib):
    inputs = lib.Input((4,))
    return lib.Model(inputs, scaled_dense(lib)(inputs))


def test_tracked_like_keras():
    model = model_of(fkeras)
    layer = model.layers[-1]
    assert [w.name for w in layer.weights] == ["scale", "usage", "kernel", "bias"]
    assert [w.name for w in layer.trainable_weights] == ["scale", "kernel", "bias"]
    assert [w.name for w in layer.non_trainable_weights] == ["usage"]
    assert model.count_params() == 3 + 3 + 12 + 3
    keras = keras_or_none()
    if keras is not None:
        klayer = model_of(keras).layers[-1]
        assert [w.name for w in klayer.weights] == [w.name for w in layer.weights]
        assert [w.name for w in klayer.trainable_weights] == \
            [w.name for w in layer.trainable_weights]


def test_attribute_variable_trains_like_keras():
    def train(lib):
        model = model_of(lib)
        seed_weights(model, seed=2)
        model.compile(lib.optimizers.Adam(0.05), "mse")
        history = model.fit(X, Y, batch_size=4, epochs=3, shuffle=False, verbose=0)
        losses_trained(history.history["loss"])
        return {"loss": history.history["loss"], "weights": model.get_weights()}

    fk, _ = run_both(train, rtol=2e-4, atol=1e-5)
    assert not np.allclose(fk["weights/0"], 0.3 * np.random.RandomState(2).standard_normal(3))


def test_gradient_reaches_attribute_variable():
    model = model_of(fkeras)
    layer = model.layers[-1]
    cot = rng.standard_normal((16, 3)).astype("float32")
    with fkeras.GradientTape() as tape:
        loss = fkeras.ops.sum(model(X) * cot)
    grads = tape.gradient(loss, model.trainable_variables)
    assert model.trainable_variables[0] is layer.scale
    kernel, bias = to_np(layer.dense.kernel), to_np(layer.dense.bias)
    pre = X.astype(np.float64) @ kernel + bias
    np.testing.assert_allclose(to_np(grads[0]), (pre * cot).sum(axis=0), rtol=1e-4)


def test_attribute_variables_save_and_load(tmp_path):
    model = model_of(fkeras)
    model.predict(X, verbose=0)  # the usage counts move
    path = os.path.join(tmp_path, "m.weights.h5")
    model.save_weights(path)
    other = model_of(fkeras)
    other.load_weights(path)
    for a, b in zip(model.get_weights(), other.get_weights()):
        np.testing.assert_array_equal(a, b)
    assert np.abs(to_np(other.layers[-1].usage)).sum() > 0
    keras = keras_or_none()
    if keras is not None:
        kmodel = model_of(keras)
        kmodel.load_weights(path)
        for a, b in zip(model.get_weights(), kmodel.get_weights()):
            np.testing.assert_array_equal(a, to_np(b))


def test_same_variable_assigned_twice_is_tracked_once():
    class Twice(fkeras.layers.Layer):
        def __init__(self):
            super().__init__()
            self.a = fkeras.Variable(np.ones((2,), "float32"))
            self.b = self.a

    layer = Twice()
    assert len(layer.weights) == 1
    with pytest.raises(ValueError, match="expecting 1 weights"):
        layer.set_weights([np.ones(2), np.ones(2)])
