"""The names and orders of metrics and logs, and the logs of every callback hook, compared
with Keras 3 itself (torch backend) when `keras` is installed; skipped otherwise."""

import importlib.util
import os

import numpy as np
import pytest

if "KERAS_BACKEND" not in os.environ and importlib.util.find_spec("torch") is not None:
    os.environ["KERAS_BACKEND"] = "torch"
keras = pytest.importorskip("keras")

from fidelity_models import (  # noqa: E402
    LOSS_ORDERS,
    METRICS,
    targets,
    two_output_data,
    two_output_model,
)

import fkeras  # noqa: E402


def _recorder(lib):
    hooks = ("on_train_begin", "on_train_end", "on_epoch_begin", "on_epoch_end",
             "on_train_batch_begin", "on_train_batch_end", "on_test_begin", "on_test_end",
             "on_test_batch_begin", "on_test_batch_end", "on_predict_begin", "on_predict_end",
             "on_predict_batch_begin", "on_predict_batch_end")

    class Recorder(lib.callbacks.Callback):
        def __init__(self):
            super().__init__()
            self.calls = []

    def make(hook):
        def record(self, *args, logs=None):
            if args and not isinstance(args[-1], int):
                logs = args[-1]
            self.calls.append((hook, type(logs).__name__, list(logs or {})))
        return record

    for hook in hooks:
        setattr(Recorder, hook, make(hook))
    return Recorder()


def _scenario(lib, kind, order, with_metrics):
    x, y = two_output_data()
    model = two_output_model(lib, kind)
    model.compile("sgd", loss=LOSS_ORDERS[order],
                  loss_weights={"priority": 1.0, "department": 0.2},
                  metrics=METRICS if with_metrics else None)
    out = {"before": list(model.metrics_names)}
    cb = _recorder(lib)
    hist = model.fit(x, targets(y, kind), epochs=1, batch_size=8, verbose=0, callbacks=[cb],
                     validation_data=(x, targets(y, kind)))
    out["after"] = list(model.metrics_names)
    out["history"] = list(hist.history)
    out["calls"] = cb.calls
    logs = model.evaluate(x, targets(y, kind), verbose=0, return_dict=True)
    out["return_dict"] = list(logs)
    values = model.evaluate(x, targets(y, kind), verbose=0)
    # Which key each position holds (the values differ between the libraries' weights).
    out["eval_order"] = [next(k for k, v in logs.items() if np.isclose(v, value, rtol=1e-6))
                         for value in values]
    return out


@pytest.mark.parametrize("kind", ["dict", "list"])
@pytest.mark.parametrize("order", ["pd", "dp"])
@pytest.mark.parametrize("with_metrics", [False, True])
def test_names_orders_and_hooks_match_keras(kind, order, with_metrics):
    theirs = _scenario(keras, kind, order, with_metrics)
    ours = _scenario(fkeras, kind, order, with_metrics)
    assert ours == theirs


def _train_step_keras():
    import torch

    class Custom(keras.Model):
        def train_step(self, data):
            x, y = data
            self.zero_grad()
            y_pred = self(x, training=True)
            loss = self.compute_loss(y=y, y_pred=y_pred)
            loss.backward()
            grads = [v.value.grad for v in self.trainable_weights]
            with torch.no_grad():
                self.optimizer.apply(grads, self.trainable_weights)
            for m in self.metrics:
                if m.name == "loss":
                    m.update_state(loss)
                else:
                    m.update_state(y, y_pred)
            return {m.name: m.result() for m in self.metrics}

    return Custom


def _train_step_fkeras():
    class Custom(fkeras.Model):
        def train_step(self, data):
            x, y = data
            with fkeras.GradientTape() as tape:
                y_pred = self(x, training=True)
                loss = self.compute_loss(y=y, y_pred=y_pred)
            grads = tape.gradient(loss, self.trainable_variables)
            self.optimizer.apply(grads, self.trainable_variables)
            for m in self.metrics:
                if m.name == "loss":
                    m.update_state(loss)
                else:
                    m.update_state(y, y_pred)
            return {m.name: m.result() for m in self.metrics}

    return Custom


def _custom_step_scenario(lib, cls):
    x, y = two_output_data()
    inp = lib.Input((3,))
    model = cls(inp, lib.layers.Dense(1)(inp))
    model.compile("sgd", "mse", metrics=["mae", "mse"], weighted_metrics=["mae"])
    out = {"metrics": [(m.name, type(m).__name__) for m in model.metrics]}
    cb = _recorder(lib)
    hist = model.fit(x, y["priority"], batch_size=8, epochs=2, verbose=0, callbacks=[cb])
    out["history"] = list(hist.history)
    out["calls"] = cb.calls
    out["after"] = list(model.metrics_names)
    out["sub"] = [m.name for m in model.metrics[1].metrics]
    out["return_dict"] = list(model.evaluate(x, y["priority"], verbose=0, return_dict=True))
    return out


def test_custom_train_step_with_self_metrics_matches_keras():
    assert (_custom_step_scenario(fkeras, _train_step_fkeras())
            == _custom_step_scenario(keras, _train_step_keras()))


def _predict_hooks(lib, kind):
    x, _ = two_output_data(6)
    cb = _recorder(lib)
    model = two_output_model(lib, kind) if kind != "single" else None
    if model is None:
        inp = lib.Input((3,))
        model = lib.Model(inp, lib.layers.Dense(1)(inp))
    model.predict(x, batch_size=3, verbose=0, callbacks=[cb])
    return cb.calls


@pytest.mark.parametrize("kind", ["single", "list", "dict"])
def test_predict_hooks_match_keras(kind):
    assert _predict_hooks(fkeras, kind) == _predict_hooks(keras, kind)


def _no_training_arg(lib):
    class NoTraining(lib.Model):
        def __init__(self):
            super().__init__()
            self.drop = lib.layers.Dropout(0.999999)
            self.dense = lib.layers.Dense(1, kernel_initializer="ones", trainable=False)

        def call(self, inputs):
            return self.dense(self.drop(inputs))

    x, y = np.ones((8, 3), "float32"), np.zeros((8, 1), "float32")
    model = NoTraining()
    model.compile("sgd", "mse")
    hist = model.fit(x, y, verbose=0)
    return (hist.history["loss"][0], model.evaluate(x, y, verbose=0),
            model.predict(x, verbose=0).tolist())


def test_model_without_training_argument_matches_keras():
    ours, theirs = _no_training_arg(fkeras), _no_training_arg(keras)
    np.testing.assert_allclose(ours[:2], theirs[:2], rtol=1e-6)
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-6)


def _attribute_metrics(lib):
    class WithTrackers(lib.Model):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.tracker = lib.metrics.Mean(name="my_tracker")
            self.mae2 = lib.metrics.MeanAbsoluteError(name="mae2")

    inp = lib.Input((3,))
    model = WithTrackers(inp, lib.layers.Dense(1)(inp))
    names = [list(model.metrics_names)]
    model.compile("sgd", "mse", metrics=["mae"])
    names.append(list(model.metrics_names))
    x, y = np.ones((4, 3), "float32"), np.ones((4, 1), "float32")
    hist = model.fit(x, y, verbose=0)
    return names, list(hist.history), list(model.evaluate(x, y, verbose=0, return_dict=True))


def test_metrics_set_as_model_attributes_match_keras():
    assert _attribute_metrics(fkeras) == _attribute_metrics(keras)
