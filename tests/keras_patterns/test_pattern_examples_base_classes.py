"""Subclassing the Loss, Metric and Initializer base classes the way keras-io does (a Loss
that overrides `__call__` only: the supervised-contrastive example): as in Keras 3 the bases
are not abstract; a method left unimplemented raises NotImplementedError when called."""

import numpy as np
import pytest
from patterns_parity import keras_or_none, losses_trained, run_both, seed_weights

import fkeras

rng = np.random.RandomState(29)
X = rng.standard_normal((32, 4)).astype("float32")
Y = rng.randint(0, 2, (32, 1)).astype("float32")


def call_only_loss(lib):
    class MarginLoss(lib.losses.Loss):
        """Overrides __call__ only (no `call`)."""

        def __init__(self, margin=1.0, name=None):
            super().__init__(name=name)
            self.margin = margin

        def __call__(self, y_true, y_pred, sample_weight=None):
            d = lib.ops.maximum(self.margin - y_pred, 0.0)
            return lib.ops.mean(y_true * lib.ops.square(d) + (1 - y_true) * y_pred * y_pred)

    return MarginLoss()


def test_loss_overriding_only_call_dunder_trains_like_keras():
    def train(lib):
        inputs = lib.Input((4,))
        model = lib.Model(inputs, lib.layers.Dense(1)(inputs))
        seed_weights(model, seed=3)
        model.compile(lib.optimizers.SGD(0.05), loss=call_only_loss(lib))
        history = model.fit(X, Y, batch_size=8, epochs=3, shuffle=False, verbose=0)
        losses_trained(history.history["loss"])
        return {"loss": history.history["loss"], "weights": model.get_weights()}

    run_both(train)


@pytest.mark.parametrize("base, method, args", [
    ("Loss", "__call__", (np.ones((2, 1), "float32"), np.ones((2, 1), "float32"))),
    ("Metric", "update_state", (np.ones((2,), "float32"),)),
    ("Metric", "result", ()),
    ("Initializer", "__call__", ((2, 2),)),
])
def test_unimplemented_base_methods_raise_when_called_like_keras(base, method, args):
    for lib in filter(None, (fkeras, keras_or_none())):
        namespace = {"Loss": lib.losses, "Metric": lib.metrics,
                     "Initializer": lib.initializers}[base]
        subclass = type("Bare" + base, (getattr(namespace, base),), {})
        instance = subclass()  # not abstract
        with pytest.raises(NotImplementedError):
            getattr(instance, method)(*args)
