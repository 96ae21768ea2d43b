"""The trainer pattern (keras-io): a Model subclass wraps another model and overrides
`train_step`, so fit never calls the wrapper itself. Keras 3 builds the wrapper before the
first step; after fit it is built and `count_params` / `summary` work. Compared with Keras 3
(torch) where installed."""

import numpy as np
import pytest
from patterns_parity import keras_or_none, no_grad, seed_weights, tape

import fkeras

rng = np.random.RandomState(43)
X = rng.standard_normal((16, 6)).astype("float32")
Y = rng.randint(0, 4, (16,)).astype("int32")


def make_trainer(lib, inner):
    class Trainer(lib.Model):
        def __init__(self, model):
            super().__init__()
            self.model = model
            self.loss_fn = lib.losses.SparseCategoricalCrossentropy()
            self.accuracy = lib.metrics.SparseCategoricalAccuracy()

        @property
        def metrics(self):
            return [self.accuracy]

        def train_step(self, data):
            x, y = data
            with tape(lib) as t:
                y_pred = self.model(x, training=True)
                loss = self.loss_fn(y, y_pred)
            grads = t.gradient(loss, self.trainable_variables)
            with no_grad(lib):
                self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
            self.accuracy.update_state(y, y_pred)
            return {m.name: m.result() for m in self.metrics}

        def call(self, x):
            return self.model(x)

    return Trainer(inner)


def inner_models(lib):
    seq = lib.Sequential([lib.Input((6,)), lib.layers.Dense(8, activation="relu"),
                          lib.layers.Dense(4, activation="softmax")])
    inputs = lib.Input((6,))
    outputs = lib.layers.Dense(4, activation="softmax")(lib.layers.Dense(5)(inputs))
    return {"sequential": seq, "functional": lib.Model(inputs, outputs)}


@pytest.mark.parametrize("kind", ["sequential", "functional"])
def test_wrapper_is_built_after_fit(kind):
    def run(lib):
        inner = inner_models(lib)[kind]
        seed_weights(inner, seed=8)
        trainer = make_trainer(lib, inner)
        assert not trainer.built
        trainer.compile(optimizer=lib.optimizers.SGD(0.1))
        history = trainer.fit(X, Y, batch_size=4, epochs=2, shuffle=False, verbose=0)
        return trainer, history

    trainer, history = run(fkeras)
    assert trainer.built
    inner = trainer.model
    assert trainer.count_params() == inner.count_params() > 0
    trainer.summary(print_fn=lambda *a, **k: None)
    keras = keras_or_none()
    if keras is not None:
        ktrainer, khistory = run(keras)
        assert ktrainer.built
        assert ktrainer.count_params() == trainer.count_params()
        np.testing.assert_allclose(history.history["sparse_categorical_accuracy"],
                                   khistory.history["sparse_categorical_accuracy"], rtol=1e-6)
        for a, b in zip(inner.get_weights(), ktrainer.model.get_weights()):
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)


def test_wrapper_with_unbuilt_sublayer_stays_unbuilt():
    class Partial(fkeras.Model):
        def __init__(self):
            super().__init__()
            self.used = fkeras.layers.Dense(2)
            self.unused = fkeras.layers.Dense(3)

        def train_step(self, data):
            x, _ = data
            self.used(x)
            return {}

    model = Partial()
    model.compile(optimizer="sgd")
    model.fit(X, Y, batch_size=8, epochs=1, verbose=0)
    assert model.used.built and not model.unused.built
    assert not model.built
    with pytest.raises(ValueError, match="isn't built"):
        model.count_params()
