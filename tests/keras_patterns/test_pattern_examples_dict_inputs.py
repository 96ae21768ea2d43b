"""Subclassed models fed a dict of arrays (keras-io's endpoint-layer and multi-input
recipes): fit, evaluate and predict hand `call` the batch as a dict keyed like the data, with
and without targets (a loss added inside the model), against Keras 3."""

import numpy as np
import pytest
from patterns_parity import losses_trained, run_both, seed_weights

rng = np.random.RandomState(7)
DATA = {
    "inputs": rng.standard_normal((40, 6)).astype("float32"),
    "targets": rng.randint(0, 2, (40, 1)).astype("float32"),
    "sample_weight": rng.random_sample((40, 1)).astype("float32"),
}
Y = rng.standard_normal((40, 1)).astype("float32")


def endpoint_model(lib):
    """The endpoint pattern: targets and weights arrive inside `x`; the loss is add_loss'd."""

    class Endpoint(lib.layers.Layer):
        def __init__(self):
            super().__init__()
            self.loss_fn = lib.losses.BinaryCrossentropy(from_logits=True)

        def call(self, logits, targets=None, sample_weight=None):
            if targets is not None:
                self.add_loss(self.loss_fn(targets, logits, sample_weight))
            return lib.ops.sigmoid(logits)

    class LogReg(lib.Model):
        def __init__(self):
            super().__init__()
            self.dense = lib.layers.Dense(1)
            self.endpoint = Endpoint()

        def call(self, inputs):
            logits = self.dense(inputs["inputs"])
            return self.endpoint(logits, targets=inputs["targets"],
                                 sample_weight=inputs["sample_weight"])

    return LogReg()


def two_input_model(lib):
    class TwoInputs(lib.Model):
        def __init__(self):
            super().__init__()
            self.dense = lib.layers.Dense(1)

        def call(self, inputs):
            return self.dense(inputs["inputs"]) + inputs["sample_weight"]

    return TwoInputs()


def _built(lib, make):
    model = make(lib)
    model({k: v[:2] for k, v in DATA.items()})
    seed_weights(model, seed=1)
    return model


def test_dict_fit_without_targets_uses_added_loss_like_keras():
    def train(lib):
        model = _built(lib, endpoint_model)
        model.compile(lib.optimizers.SGD(0.1))
        history = model.fit(DATA, batch_size=8, epochs=3, shuffle=False, verbose=0)
        losses_trained(history.history["loss"])
        return {"loss": history.history["loss"],
                "predict": model.predict(DATA, batch_size=16, verbose=0),
                "weights": model.get_weights()}

    run_both(train)


@pytest.mark.parametrize("unbuilt", [False, True], ids=["built", "built_by_fit"])
def test_dict_fit_evaluate_with_targets_like_keras(unbuilt):
    def train(lib):
        if unbuilt:  # weights come from the first batch: compare the losses' shape only
            lib.utils.set_random_seed(0)
            model = two_input_model(lib)
        else:
            model = _built(lib, two_input_model)
        model.compile(lib.optimizers.SGD(0.05), loss="mse")
        history = model.fit(DATA, Y, batch_size=8, epochs=3, shuffle=False, verbose=0,
                            validation_data=(DATA, Y))
        losses_trained(history.history["loss"])
        evaluated = model.evaluate(DATA, Y, batch_size=16, verbose=0)
        if unbuilt:
            return {"trained": float(history.history["loss"][-1] < history.history["loss"][0]),
                    "n_weights": len(model.get_weights())}
        return {"loss": history.history["loss"], "val_loss": history.history["val_loss"],
                "evaluate": evaluated, "weights": model.get_weights()}

    run_both(train)


def test_dict_evaluate_before_fit_builds_from_dict_like_keras():
    def train(lib):
        model = two_input_model(lib)
        model.compile(lib.optimizers.SGD(0.05), loss="mse")
        model.evaluate(DATA, Y, verbose=0)  # builds the model from a dict batch
        seed_weights(model, seed=2)
        return {"evaluate": model.evaluate(DATA, Y, batch_size=40, verbose=0)}

    run_both(train)
