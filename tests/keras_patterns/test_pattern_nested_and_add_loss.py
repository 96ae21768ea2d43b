"""Layers holding layers (weights tracked recursively, in creation order) and losses added in
call: `layer.losses` reset per top-level call, regularizer losses of inner layers, add_loss with
and without a compiled loss, against Keras 3."""

import numpy as np
import pytest
from patterns_parity import losses_trained, regression_data, run_both, seed_weights, to_np

import fkeras


def block_classes(lib):
    class Linear(lib.layers.Layer):
        def __init__(self, units, **kwargs):
            super().__init__(**kwargs)
            self.units = units

        def build(self, input_shape):
            self.w = self.add_weight(shape=(input_shape[-1], self.units), initializer="ones")
            self.b = self.add_weight(shape=(self.units,), initializer="zeros")

        def call(self, x):
            return lib.ops.matmul(x, self.w) + self.b

    class ActivityReg(lib.layers.Layer):
        def __init__(self, rate=1e-2, **kwargs):
            super().__init__(**kwargs)
            self.rate = rate

        def call(self, inputs):
            self.add_loss(self.rate * lib.ops.mean(lib.ops.square(inputs)))
            return inputs

    class MLPBlock(lib.layers.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.linear_1 = Linear(8)
            self.reg = ActivityReg(0.05)
            self.linear_2 = Linear(1)

        def call(self, inputs):
            x = lib.activations.relu(self.linear_1(inputs))
            return self.linear_2(self.reg(x))

    return Linear, ActivityReg, MLPBlock


def test_nested_weights_are_tracked_in_order():
    _, _, MLPBlock = block_classes(fkeras)
    block = MLPBlock()
    block(np.ones((3, 5), "float32"))
    assert len(block.weights) == 4 and len(block.trainable_weights) == 4
    assert [tuple(w.shape) for w in block.weights] == [(5, 8), (8,), (8, 1), (1,)]
    block.linear_1.trainable = False
    assert len(block.trainable_weights) == 2 and len(block.non_trainable_weights) == 2


def test_losses_belong_to_the_last_top_level_call():
    _, ActivityReg, _ = block_classes(fkeras)

    class Outer(fkeras.layers.Layer):
        def __init__(self):
            super().__init__()
            self.reg = ActivityReg(1.0)

        def call(self, x):
            return self.reg(x)

    layer = Outer()
    assert layer.losses == []
    layer(np.full((2, 2), 2.0, "float32"))
    assert len(layer.losses) == 1
    layer(np.full((2, 2), 3.0, "float32"))
    assert len(layer.losses) == 1
    np.testing.assert_allclose(to_np(layer.losses[0]), 9.0)


def test_inner_kernel_regularizer_shows_in_losses():
    class Outer(fkeras.layers.Layer):
        def __init__(self):
            super().__init__()
            self.dense = fkeras.layers.Dense(3, kernel_regularizer=fkeras.regularizers.l2(1e-3))

        def call(self, x):
            return self.dense(x)

    layer = Outer()
    layer(np.zeros((1, 2), "float32"))
    kernel = to_np(layer.dense.kernel)
    assert len(layer.losses) == 1
    np.testing.assert_allclose(to_np(layer.losses[0]), 1e-3 * np.sum(kernel ** 2), rtol=1e-5)


@pytest.mark.parametrize("compiled_loss", ["mse", None])
def test_add_loss_inside_a_model_trains_like_keras(compiled_loss):
    x, y = regression_data(d_in=5, d_out=1, seed=7)

    def train(lib):
        _, _, MLPBlock = block_classes(lib)
        inp = lib.Input((5,))
        out = MLPBlock()(inp)
        model = lib.Model(inp, out)
        seed_weights(model, seed=4)
        model.compile(optimizer=lib.optimizers.SGD(0.01), loss=compiled_loss)
        hist = model.fit(x, y, batch_size=16, epochs=3, shuffle=False, verbose=0)
        return {"loss": hist.history["loss"], "weights": model.get_weights()}

    fk, _ = run_both(train)
    losses_trained(fk["loss"])


def test_subclassed_model_of_nested_layers_trains_like_keras():
    x, y = regression_data(d_in=5, d_out=1, seed=8)

    def train(lib):
        Linear, ActivityReg, _ = block_classes(lib)

        class Net(lib.Model):
            def __init__(self, **kwargs):
                super().__init__(**kwargs)
                self.hidden = Linear(6)
                self.reg = ActivityReg(0.1)
                self.head = lib.layers.Dense(1)

            def call(self, x, training=None):
                return self.head(lib.ops.tanh(self.reg(self.hidden(x))))

        model = Net()
        model(x[:1])
        seed_weights(model, seed=5)
        model.compile(optimizer="adam", loss="mse")
        hist = model.fit(x, y, batch_size=8, epochs=3, shuffle=False, verbose=0)
        return {"loss": hist.history["loss"], "weights": model.get_weights(),
                "pred": model.predict(x[:4], verbose=0)}

    fk, _ = run_both(train)
    losses_trained(fk["loss"])
