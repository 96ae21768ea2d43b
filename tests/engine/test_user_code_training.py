"""Issue 10's reproduction: user-written layers, losses, add_loss terms and activations train,
and train exactly as in Keras 3 (same weights, data and optimizer; final losses within 1e-4).

Each case builds its model with `lib` (fkeras or keras) so the same code runs on both; the
Keras comparison skips when keras is not installed, the fkeras side always runs and must move
every trainable weight.
"""

import numpy as np
import pytest

import fkeras

RNG = np.random.default_rng(0)
X = RNG.standard_normal((64, 3)).astype("float32")
Y = (X @ np.array([[2.0], [-1.0], [0.5]], "float32") + 1).astype("float32")


def _affine(lib):
    class Affine(lib.layers.Layer):
        def build(self, shape):
            self.w = self.add_weight(shape=(shape[-1], 1), initializer="zeros")
            self.b = self.add_weight(shape=(1,), initializer="zeros")

        def call(self, x):
            return lib.ops.matmul(x, self.w) + self.b

    inp = lib.Input((3,))
    return lib.Model(inp, Affine()(inp)), "mse"


def _lambda_loss(lib):
    m = lib.Sequential([lib.Input((3,)), lib.layers.Dense(1)])
    return m, lambda t, p: lib.ops.mean(lib.ops.square(t - p), axis=-1)


def _scaled_builtin_loss(lib):
    m = lib.Sequential([lib.Input((3,)), lib.layers.Dense(1)])
    return m, lambda t, p: lib.losses.mean_squared_error(t, p) * 1.0


def _operator_layer_between_dense(lib):
    class Times2(lib.layers.Layer):
        def call(self, x):
            return x * 2.0

    m = lib.Sequential([lib.Input((3,)), lib.layers.Dense(4), Times2(), lib.layers.Dense(1)])
    return m, "mse"


def _antirectifier(lib):
    class Antirectifier(lib.layers.Layer):
        def build(self, shape):
            self.kernel = self.add_weight(shape=(shape[-1] * 2, 4), initializer="he_normal")

        def call(self, inputs):
            inputs -= lib.ops.mean(inputs, axis=-1, keepdims=True)
            pos = lib.ops.relu(inputs)
            neg = lib.ops.relu(-inputs)
            return lib.ops.matmul(lib.ops.concatenate([pos, neg], axis=-1), self.kernel)

    m = lib.Sequential([lib.Input((3,)), lib.layers.Dense(6), Antirectifier(),
                        lib.layers.Dense(1)])
    return m, "mse"


def _add_loss_in_call(lib):
    class Penalty(lib.layers.Layer):
        def call(self, x):
            self.add_loss(lib.ops.sum(x * x) * 0.01)
            return x

    m = lib.Sequential([lib.Input((3,)), lib.layers.Dense(4), Penalty(), lib.layers.Dense(1)])
    return m, "mse"


def _custom_activation_and_regularizer(lib):
    m = lib.Sequential([
        lib.Input((3,)),
        lib.layers.Dense(5, activation=lambda t: t * lib.ops.sigmoid(t) + 0.1 * t),
        lib.layers.Dense(1, kernel_regularizer=lambda w: 0.01 * lib.ops.sum(w * w)),
    ])
    return m, "mse"


def _loss_subclass(lib):
    class PowerLoss(lib.losses.Loss):
        def call(self, y_true, y_pred):
            return lib.ops.mean(lib.ops.abs(y_true - y_pred) ** 1.5, axis=-1)

    m = lib.Sequential([lib.Input((3,)), lib.layers.Dense(4, activation="tanh"),
                        lib.layers.Dense(1)])
    return m, PowerLoss()


def _getitem_and_reflected_ops(lib):
    class Mix(lib.layers.Layer):
        def call(self, x):
            head = x[:, :2]
            tail = x[:, 2:]
            return lib.ops.concatenate([1.0 - head, 2.0 / (1.0 + tail * tail)], axis=-1)

    m = lib.Sequential([lib.Input((3,)), lib.layers.Dense(3), Mix(), lib.layers.Dense(1)])
    return m, "mse"


CASES = {
    "affine_subclassed_layer": _affine,
    "lambda_loss": _lambda_loss,
    "builtin_loss_times_one": _scaled_builtin_loss,
    "operator_layer_between_dense": _operator_layer_between_dense,
    "antirectifier": _antirectifier,
    "add_loss_in_call": _add_loss_in_call,
    "custom_activation_and_regularizer": _custom_activation_and_regularizer,
    "loss_subclass": _loss_subclass,
    "getitem_and_reflected_ops": _getitem_and_reflected_ops,
}


def _train(lib, case, weights=None):
    model, loss = CASES[case](lib)
    if weights is None:
        weights = [np.asarray(RNG.standard_normal(w.shape) * 0.3, "float32")
                   for w in model.weights]
    model.set_weights(weights)
    model.compile(optimizer=lib.optimizers.SGD(0.02), loss=loss)
    hist = model.fit(X, Y, batch_size=16, epochs=3, shuffle=False, verbose=0)
    return weights, hist.history["loss"], [np.asarray(w) for w in model.get_weights()]


@pytest.mark.parametrize("case", sorted(CASES))
def test_user_code_trains_every_weight(case):
    w0, losses, w1 = _train(fkeras, case)
    assert all(np.isfinite(losses)) and losses[-1] < losses[0], losses
    for before, after in zip(w0, w1):
        assert np.abs(after - before).max() > 1e-6, f"{case}: a weight did not move"


@pytest.mark.parametrize("case", sorted(CASES))
def test_user_code_matches_keras(case):
    keras = pytest.importorskip("keras")
    w0, ours, w_ours = _train(fkeras, case)
    _, theirs, w_theirs = _train(keras, case, weights=w0)
    np.testing.assert_allclose(ours, theirs, rtol=1e-4)
    for a, b in zip(w_ours, w_theirs):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def test_variable_times_scalar_is_a_tensor():
    v = fkeras.Variable(np.ones(3, "float32"))
    out = v * 2.0
    assert isinstance(out, fkeras.Tensor)
    np.testing.assert_array_equal(np.asarray(out), [2.0, 2.0, 2.0])


def test_training_argument_dropped_when_call_does_not_take_it():
    class NoTraining(fkeras.Model):
        def __init__(self):
            super().__init__()
            self.dense = fkeras.layers.Dense(2)

        def call(self, x):
            return self.dense(x)

    model = NoTraining()
    out = model(np.ones((1, 3), np.float32), training=True)
    assert out.shape == (1, 2)


def test_subclassed_model_with_its_own_constructor_arguments():
    enc = fkeras.Sequential([fkeras.Input((3,)), fkeras.layers.Dense(2)])
    dec = fkeras.Sequential([fkeras.Input((2,)), fkeras.layers.Dense(3)])

    class AutoEncoder(fkeras.Model):
        def __init__(self, encoder, decoder, **kwargs):
            super().__init__(**kwargs)
            self.encoder, self.decoder = encoder, decoder

        def call(self, x):
            return self.decoder(self.encoder(x))

    model = AutoEncoder(enc, dec, name="ae")
    model.compile("sgd", "mse")
    hist = model.fit(X, X, epochs=2, verbose=0)
    assert model.name == "ae" and len(hist.history["loss"]) == 2


def test_add_weight_keras2_and_keras3_argument_orders():
    class Both(fkeras.layers.Layer):
        def build(self, shape):
            self.k2 = self.add_weight("kernel", (shape[-1], 2), initializer="ones")
            self.k3 = self.add_weight((2,), "zeros", name="bias")
            self.count = self.add_weight(shape=(), dtype="int32", trainable=False,
                                         initializer="zeros", name="count")

        def call(self, x):
            self.count.assign_add(1)
            return x @ self.k2 + self.k3

    layer = Both()
    out = layer(np.ones((1, 3), np.float32))
    np.testing.assert_array_equal(np.asarray(out), [[3.0, 3.0]])
    assert [w.path for w in layer.weights] == ["both/kernel", "both/bias", "both/count"]
    assert layer.count.dtype == "int32" and int(layer.count) == 1
    with pytest.raises(TypeError, match="multiple values"):
        layer.add_weight("w", (2,), initializer="ones", shape=(3,))
