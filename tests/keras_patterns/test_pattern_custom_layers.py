"""Custom layers (the subclassing guide's Linear / ComputeSum, the Antirectifier recipe):
weights from add_weight in __init__ or build, Python operators in call, get_config /
from_config, and training them in Functional and Sequential models against Keras 3."""

import numpy as np
import pytest
from patterns_parity import losses_trained, regression_data, run_both, seed_weights, to_np

import fkeras


def linear_class(lib):
    class Linear(lib.layers.Layer):
        def __init__(self, units=32, **kwargs):
            super().__init__(**kwargs)
            self.units = units

        def build(self, input_shape):
            self.w = self.add_weight(shape=(input_shape[-1], self.units),
                                     initializer="random_normal", trainable=True)
            self.b = self.add_weight(shape=(self.units,), initializer="zeros", trainable=True)

        def call(self, inputs):
            return lib.ops.matmul(inputs, self.w) + self.b

        def get_config(self):
            config = super().get_config()
            config.update({"units": self.units})
            return config

    return Linear


def antirectifier_class(lib):
    class Antirectifier(lib.layers.Layer):
        def build(self, input_shape):
            d = input_shape[-1]
            self.kernel = self.add_weight(shape=(d * 2, d), initializer="he_normal", name="kernel")

        def call(self, inputs):
            inputs -= lib.ops.mean(inputs, axis=-1, keepdims=True)
            pos = lib.ops.relu(inputs)
            neg = lib.ops.relu(-inputs)
            return lib.ops.concatenate([pos, neg], axis=-1) @ self.kernel

    return Antirectifier


def operators_class(lib):
    """Every operator family a custom call tends to use, on tensors and variables."""
    class Operators(lib.layers.Layer):
        def build(self, input_shape):
            self.scale = self.add_weight(shape=(input_shape[-1],), initializer="ones")

        def call(self, x):
            y = (x * self.scale - 0.5) / 2.0 + x[:, :1] ** 2
            y = abs(y) - y[:, -1:] * 0.25
            return 1.0 - (-y) + self.scale * self.scale

    return Operators


def test_linear_weights_are_tracked_and_config_round_trips():
    Linear = linear_class(fkeras)
    layer = Linear(4, name="lin")
    y = layer(np.ones((2, 3), "float32"))
    assert y.shape == (2, 4)
    assert layer.weights == [layer.w, layer.b]
    assert layer.trainable_weights == [layer.w, layer.b]
    config = layer.get_config()
    assert config["units"] == 4 and config["name"] == "lin"
    clone = Linear.from_config(config)
    assert clone.units == 4 and clone.name == "lin" and not clone.weights


def test_weights_made_in_init_and_non_trainable_state():
    class ComputeSum(fkeras.layers.Layer):
        def __init__(self, input_dim):
            super().__init__()
            self.total = self.add_weight(initializer="zeros", shape=(input_dim,),
                                         trainable=False)

        def call(self, inputs):
            self.total.assign_add(fkeras.ops.sum(inputs, axis=0))
            return self.total

    layer = ComputeSum(2)
    np.testing.assert_array_equal(to_np(layer(np.ones((2, 2), "float32"))), [2.0, 2.0])
    np.testing.assert_array_equal(to_np(layer(np.ones((2, 2), "float32"))), [4.0, 4.0])
    assert len(layer.weights) == 1 and len(layer.non_trainable_weights) == 1
    assert layer.trainable_weights == []


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_custom_linear_in_functional_model_trains_like_keras(optimizer):
    x, y = regression_data(d_in=5, d_out=2)

    def train(lib):
        Linear = linear_class(lib)
        inp = lib.Input((5,))
        h = lib.layers.Dense(8, activation="tanh")(inp)
        out = Linear(2)(h)
        model = lib.Model(inp, out)
        seed_weights(model)
        model.compile(optimizer=optimizer, loss="mse")
        hist = model.fit(x, y, batch_size=16, epochs=4, shuffle=False, verbose=0)
        return {"loss": hist.history["loss"], "weights": model.get_weights()}

    fk, _ = run_both(train)
    losses_trained(fk["loss"])


@pytest.mark.parametrize("make", [antirectifier_class, operators_class])
def test_operator_layers_between_dense_layers_train_like_keras(make):
    x, y = regression_data(d_in=6, d_out=1, seed=3)

    def train(lib):
        model = lib.Sequential([lib.Input((6,)), lib.layers.Dense(6), make(lib)(),
                                lib.layers.Dense(1)])
        seed_weights(model, seed=1)
        model.compile(optimizer=lib.optimizers.SGD(0.02), loss="mse")
        hist = model.fit(x, y, batch_size=16, epochs=3, shuffle=False, verbose=0)
        return {"loss": hist.history["loss"], "weights": model.get_weights(),
                "eval": model.evaluate(x, y, verbose=0)}

    fk, _ = run_both(train)
    losses_trained(fk["loss"])


def test_subclassed_dense_with_its_own_call_trains_like_keras():
    """Overriding a built-in layer's call makes it user code: its operators are recorded."""
    x, y = regression_data(d_in=4, d_out=3, seed=5)

    def train(lib):
        class ScaledDense(lib.layers.Dense):
            def call(self, inputs):
                return super().call(inputs) * 0.5 + 0.1

        model = lib.Sequential([lib.Input((4,)), ScaledDense(3)])
        seed_weights(model, seed=2)
        model.compile(optimizer="sgd", loss="mae")
        hist = model.fit(x, y, batch_size=32, epochs=3, shuffle=False, verbose=0)
        return {"loss": hist.history["loss"], "weights": model.get_weights()}

    fk, _ = run_both(train)
    losses_trained(fk["loss"])
