"""Whole-model gradients: the trainer's loss (logits path, regularizers included) differentiated
by the tape against central finite differences on the float64 reference device, for an MLP,
a CNN with BatchNormalization, an LSTM, and a graph with a shared layer, a nested model and a
Lambda layer; frozen layers get no gradient."""

import numpy as np
import pytest

import fkeras
from fkeras import layers
from fkeras.trainers.step_state import get_state


def _loss(model, state, xs, ys):
    return float(state.total_loss(ys, state.forward(xs, training=True), None))


def _check_model(model, loss, xs, ys, rtol=1e-5, trials=2):
    model.compile("sgd", loss)
    state = get_state(model)
    with fkeras.GradientTape() as tape:
        value = state.total_loss(ys, state.forward(xs, training=True), None)
    grads = tape.gradient(value, state.variables)
    rng = np.random.default_rng(0)
    eps = 1e-6
    for var, g in zip(state.variables, grads):
        assert g is not None, var.path
        for _ in range(trials):
            v = rng.standard_normal(var.shape)
            base = var.numpy()
            var.assign(base + eps * v)
            plus = _loss(model, state, xs, ys)
            var.assign(base - eps * v)
            minus = _loss(model, state, xs, ys)
            var.assign(base)
            numeric, analytic = (plus - minus) / (2 * eps), float(np.sum(g * v))
            assert abs(numeric - analytic) <= 1e-8 + rtol * max(abs(numeric), abs(analytic)), (
                var.path, numeric, analytic)
    return state


def test_mlp_softmax_with_regularizer():
    rng = np.random.default_rng(1)
    with fkeras.device("reference"):
        inp = fkeras.Input((5,))
        h = layers.Dense(7, activation="tanh",
                         kernel_regularizer=fkeras.regularizers.L1L2(0.01, 0.02))(inp)
        out = layers.Dense(4, activation="softmax")(h)
        model = fkeras.Model(inp, out)
        state = _check_model(model, "sparse_categorical_crossentropy",
                             [rng.standard_normal((6, 5))], [rng.integers(0, 4, 6)])
    assert state.logits == {0: "softmax"}  # the logits path is what was checked


def test_cnn_with_batch_normalization_sigmoid_output():
    rng = np.random.default_rng(2)
    with fkeras.device("reference"):
        inp = fkeras.Input((6, 6, 2))
        h = layers.Conv2D(3, 3, padding="same", activation="relu")(inp)
        h = layers.BatchNormalization()(h)
        h = layers.MaxPooling2D()(h)
        h = layers.Flatten()(h)
        out = layers.Dense(1, activation="sigmoid")(h)
        model = fkeras.Model(inp, out)
        _check_model(model, "binary_crossentropy", [rng.standard_normal((4, 6, 6, 2))],
                     [(rng.uniform(size=(4, 1)) > 0.5).astype(np.float64)])


def test_lstm_regression():
    rng = np.random.default_rng(3)
    with fkeras.device("reference"):
        inp = fkeras.Input((5, 3))
        h = layers.LSTM(4)(inp)
        out = layers.Dense(2)(h)
        model = fkeras.Model(inp, out)
        _check_model(model, "mse", [rng.standard_normal((3, 5, 3))],
                     [rng.standard_normal((3, 2))])


def test_shared_layer_nested_model_and_lambda():
    rng = np.random.default_rng(4)
    with fkeras.device("reference"):
        a, b = fkeras.Input((3,)), fkeras.Input((3,))
        shared = layers.Dense(4, activation="sigmoid")
        inner_in = fkeras.Input((4,))
        inner = fkeras.Model(inner_in, layers.Dense(2)(inner_in))
        square = layers.Lambda(lambda t: fkeras.ops.square(t))
        h = layers.Add()([square(shared(a)), shared(b)])
        model = fkeras.Model([a, b], inner(h))
        _check_model(model, "huber", [rng.standard_normal((5, 3)), rng.standard_normal((5, 3))],
                     [rng.standard_normal((5, 2))])


def test_frozen_layers_get_no_gradient():
    inp = fkeras.Input((3,))
    frozen = layers.Dense(4)
    out = layers.Dense(1)(frozen(inp))
    model = fkeras.Model(inp, out)
    frozen.trainable = False
    model.compile("sgd", "mse")
    before = frozen.kernel.numpy()
    model.fit(np.ones((8, 3)), np.zeros((8, 1)), verbose=0)
    np.testing.assert_array_equal(frozen.kernel.numpy(), before)
    assert len(get_state(model).variables) == 2


@pytest.mark.parametrize("loss", ["binary_crossentropy", "categorical_crossentropy"])
def test_logits_path_equals_clipped_path_away_from_the_clip(loss):
    rng = np.random.default_rng(5)
    with fkeras.device("reference"):
        inp = fkeras.Input((3,))
        act = "sigmoid" if loss == "binary_crossentropy" else "softmax"
        model = fkeras.Model(inp, layers.Dense(2, activation=act)(inp))
        model.compile("sgd", loss)
        x = rng.standard_normal((4, 3))
        y = np.eye(2)[rng.integers(0, 2, 4)]
        exact = model.evaluate(x, y, verbose=0)
        clipped = float(fkeras.losses.get(loss)(y, model.predict(x, verbose=0)).mean())
    assert np.isclose(exact, clipped, rtol=1e-6)  # evaluate reports float32 metrics
