"""A Sequential model checks only its input's rank, as in Keras 3 (keras-io's NER transformer:
a block's feed-forward `Sequential([Dense, Dense])` is built on the training length, then the
model predicts a shorter sentence). Other dims are for its layers to check; a Functional
model keeps checking them. Values compared with Keras 3 (torch) and NumPy."""

import numpy as np
import pytest
from patterns_parity import keras_or_none, losses_trained, run_both, seed_weights, to_np

import fkeras

rng = np.random.RandomState(59)
X_LONG = rng.standard_normal((8, 12, 3)).astype("float32")
X_SHORT = rng.standard_normal((2, 5, 3)).astype("float32")
Y_SHORT = rng.standard_normal((8, 5, 2)).astype("float32")


def block_model(lib):
    class Block(lib.Model):
        def __init__(self):
            super().__init__()
            self.ffn = lib.Sequential([lib.layers.Dense(4, activation="relu"),
                                       lib.layers.Dense(2)])

        def call(self, x):
            return self.ffn(x)

    return Block()


def stacked(lib):
    return lib.Sequential([lib.Input((12, 3)), lib.layers.Dense(4, activation="tanh"),
                           lib.layers.Dense(2)])


def numpy_stack(x, weights, act):
    h = act(x.astype(np.float64) @ weights[0] + weights[1])
    return h @ weights[2] + weights[3]


def test_lazily_built_sequential_takes_another_length():
    model = block_model(fkeras)
    model(X_LONG)
    weights = seed_weights(model, seed=1)
    want = numpy_stack(X_SHORT, weights, lambda v: np.maximum(v, 0))
    np.testing.assert_allclose(to_np(model(X_SHORT)), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(model.predict(X_SHORT, verbose=0), want, rtol=1e-5, atol=1e-6)
    keras = keras_or_none()
    if keras is not None:
        kmodel = block_model(keras)
        kmodel(X_LONG)
        kmodel.set_weights(weights)
        np.testing.assert_allclose(to_np(kmodel.predict(X_SHORT, verbose=0)), want,
                                   rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("how", ["call", "predict"])
def test_sequential_with_input_takes_another_length(how):
    model = stacked(fkeras)
    weights = seed_weights(model, seed=2)
    got = model(X_SHORT) if how == "call" else model.predict(X_SHORT, verbose=0)
    np.testing.assert_allclose(to_np(got), numpy_stack(X_SHORT, weights, np.tanh),
                               rtol=1e-5, atol=1e-6)


def test_fit_and_evaluate_on_another_length_like_keras():
    def train(lib):
        model = stacked(lib)
        seed_weights(model, seed=3)
        model.compile(lib.optimizers.SGD(0.1), "mse")
        history = model.fit(np.resize(X_SHORT, (8, 5, 3)), Y_SHORT, batch_size=4, epochs=3,
                            shuffle=False, verbose=0)
        losses_trained(history.history["loss"])
        return {"loss": history.history["loss"], "weights": model.get_weights(),
                "eval": model.evaluate(np.resize(X_SHORT, (8, 5, 3)), Y_SHORT, verbose=0)}

    run_both(train)


@pytest.mark.parametrize("how", ["call", "predict", "fit"])
def test_layer_checks_still_apply(how):
    model = stacked(fkeras)
    model.compile("sgd", "mse")
    bad = np.ones((2, 12, 4), "float32")
    with pytest.raises(ValueError, match='layer "dense.*expected axis -1 of input shape to have '
                                         'value 3'):
        if how == "call":
            model(bad)
        elif how == "predict":
            model.predict(bad, verbose=0)
        else:
            model.fit(bad, np.ones((2, 12, 2)), verbose=0)


def test_target_checked_against_the_output_for_that_length():
    model = stacked(fkeras)
    model.compile("sgd", "mse")
    with pytest.raises(ValueError, match=r"expected dense_\d+ to have shape \(None, 5, 2\)"):
        model.fit(np.resize(X_SHORT, (8, 5, 3)), np.ones((8, 6, 2)), verbose=0)


def test_functional_model_still_checks_every_dim():
    inputs = fkeras.Input((12, 3))
    model = fkeras.Model(inputs, fkeras.layers.Dense(2)(inputs))
    for run in (lambda: model(X_SHORT), lambda: model.predict(X_SHORT, verbose=0)):
        with pytest.raises(ValueError, match=r"expected input_layer\w* to have shape \(12, 3\)"):
            run()
