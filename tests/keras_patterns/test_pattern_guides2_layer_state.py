"""Layer state as the Keras-for-researchers guide builds it: weights created by a `build`
called by hand (then overwritten with `set_weights`), and Variables assigned as attributes in
`__init__` (trainable and not), trained with a tape loop and with `fit` against Keras 3."""

import numpy as np
from patterns_parity import no_grad, regression_data, run_both, tape, to_np

import fkeras


def linear_class(lib):
    class Linear(lib.layers.Layer):
        def __init__(self, units):
            super().__init__()
            self.units = units

        def build(self, input_shape):
            self.w = self.add_weight(shape=(input_shape[-1], self.units),
                                     initializer="random_normal")
            self.b = self.add_weight(shape=(self.units,), initializer="random_normal")

        def call(self, inputs):
            return lib.ops.matmul(inputs, self.w) + self.b

    return Linear


def attribute_variables_class(lib):
    """`self.w = Variable(...)` in __init__ (no add_weight), and a non-trainable counter."""
    class AttrLinear(lib.layers.Layer):
        def __init__(self, units, input_dim):
            super().__init__()
            rng = np.random.RandomState(3)
            self.w = lib.Variable(rng.standard_normal((input_dim, units)).astype("float32"))
            self.pair = [lib.Variable(np.zeros((units,), "float32")),
                         lib.Variable(np.ones((units,), "float32"), trainable=False)]
            self.calls = lib.Variable(np.zeros((1,), "float32"), trainable=False)

        def call(self, inputs):
            self.calls.assign_add(np.ones((1,), "float32"))
            return (lib.ops.matmul(inputs, self.w) + self.pair[0]) * self.pair[1]

    return AttrLinear


def test_a_build_called_by_hand_builds_the_layer():
    def train(lib):
        layer = linear_class(lib)(3)
        layer.build((None, 4))
        assert layer.built
        values = [np.arange(12, dtype="float32").reshape(4, 3) / 10, np.ones(3, "float32")]
        layer.set_weights(values)
        x, y = regression_data(n=16, d_in=4, d_out=3)
        out = layer(x)  # must not build again (a second pair of weights, the values lost)
        assert len(layer.weights) == 2
        np.testing.assert_allclose(to_np(out), x @ values[0] + values[1], rtol=1e-5)
        opt = lib.optimizers.SGD(learning_rate=0.1)
        loss_fn = lib.losses.MeanSquaredError()
        for _ in range(3):
            with tape(lib) as t:
                loss = loss_fn(y, layer(x))
            grads = t.gradient(loss, layer.trainable_weights)
            with no_grad(lib):
                opt.apply_gradients(zip(grads, layer.trainable_weights))
        return {"loss": loss, "weights": layer.get_weights()}

    run_both(train)


def test_variables_assigned_as_attributes_are_weights():
    def train(lib):
        layer = attribute_variables_class(lib)(2, 4)
        assert [id(v) for v in layer.trainable_weights] == [id(layer.w), id(layer.pair[0])]
        assert [id(v) for v in layer.non_trainable_weights] == \
            [id(layer.pair[1]), id(layer.calls)]
        assert layer.weights == [layer.w, layer.pair[0], layer.pair[1], layer.calls]
        x, y = regression_data(n=32, d_in=4, d_out=2)
        model = lib.Sequential([lib.Input((4,)), layer])
        assert len(model.trainable_weights) == 2 and len(model.weights) == 4
        model.compile(optimizer=lib.optimizers.SGD(learning_rate=0.05), loss="mse")
        history = model.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0)
        return {"loss": history.history["loss"], "weights": model.get_weights()}

    fk, _ = run_both(train)
    assert fk["loss"][1] < fk["loss"][0]
    assert fk["weights/3"][0] == 8.0  # the counter: 2 epochs of 4 batches


def test_attribute_variables_of_a_subclassed_model_are_saved(tmp_path):
    layer_cls = attribute_variables_class(fkeras)
    layer = layer_cls(2, 4)
    x, _ = regression_data(n=4, d_in=4, d_out=2)
    layer(x)
    path = tmp_path / "attr.weights.h5"
    model = fkeras.Sequential([fkeras.Input((4,)), layer])
    model.save_weights(path)
    other = fkeras.Sequential([fkeras.Input((4,)), layer_cls(2, 4)])
    other.load_weights(path)
    for a, b in zip(model.get_weights(), other.get_weights()):
        np.testing.assert_array_equal(a, b)
    assert other.get_weights()[3][0] > 0  # the counter's value came from the file


def running_sum_class(lib):
    """The guide's ComputeSum: a non-trainable total updated by every call."""
    class ComputeSum(lib.layers.Layer):
        def __init__(self, input_dim):
            super().__init__()
            self.total = lib.Variable(initializer=lib.ops.zeros((input_dim,)), trainable=False)
            self.calls = lib.Variable(initializer=lib.ops.zeros(()), trainable=False)
            self.mass = lib.Variable(initializer=lib.ops.zeros(()), trainable=False)

        def call(self, inputs):
            self.total.assign_add(lib.ops.sum(inputs, axis=0))
            self.calls.assign_add(1.0)
            self.mass.assign_add(lib.ops.sum(inputs))  # a scalar (a KerasTensor of shape ())
            return inputs * 2.0

    return ComputeSum


def test_building_a_graph_leaves_variables_unchanged():
    """Keras infers a layer's output shapes without writing its variables (StatelessScope):
    building a Functional model, or tracing a call that fails on KerasTensors, must not
    update a running total or a call counter."""
    def train(lib):
        layer = running_sum_class(lib)(2)
        inputs = lib.Input((2,))
        model = lib.Model(inputs, layer(inputs))
        before = [to_np(layer.total), to_np(layer.calls), to_np(layer.mass)]
        x = np.arange(6, dtype="float32").reshape(3, 2)
        model.predict(x, verbose=0)
        after = [to_np(layer.total), to_np(layer.calls), to_np(layer.mass)]
        eager = layer(x)
        return {"before": before, "after": after, "eager": eager,
                "total": layer.total, "weights": len(layer.weights)}

    fk, _ = run_both(train)
    np.testing.assert_array_equal(fk["before/0"], [0.0, 0.0])
    np.testing.assert_array_equal(fk["after/0"], [6.0, 9.0])
    assert fk["before/2"] == 0.0 and fk["after/2"] == 15.0
    np.testing.assert_array_equal(fk["total"], [12.0, 18.0])


def test_a_write_during_shape_inference_is_still_checked():
    class Bad(fkeras.layers.Layer):
        def build(self, input_shape):
            self.v = self.add_weight(shape=(3,), initializer="zeros", trainable=False)

        def call(self, inputs):
            self.v.assign(np.zeros((4,), "float32"))
            return inputs

    import pytest

    with pytest.raises(ValueError, match="does not fit"):
        Bad()(fkeras.Input((2,)))
