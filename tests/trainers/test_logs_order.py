"""Keras 3's names and orders of metrics and logs (values recorded from keras 3.15, torch):
`metrics_names` before and after the first fit, `evaluate()`'s list, `return_dict`, History and
callback logs for single-, list- and dict-output models; custom train_steps that return
`{m.name: m.result() for m in self.metrics}`; the logs every callback hook receives; models
whose `call` has no `training` argument."""

import numpy as np
import pytest
from fidelity_models import (
    LOSS_ORDERS,
    METRICS,
    targets,
    two_output_data,
    two_output_model,
)

import fkeras

SORTED_WITH_METRICS = ["department_accuracy", "department_loss", "loss", "priority_loss",
                       "priority_mae"]
SORTED_LOSSES = ["department_loss", "loss", "priority_loss"]


class KeysSeen(fkeras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.seen = {}

    def on_train_batch_end(self, batch, logs=None):
        self.seen["train_batch_end"] = list(logs)

    def on_test_end(self, logs=None):
        self.seen["test_end"] = list(logs)

    def on_epoch_end(self, epoch, logs=None):
        self.seen["epoch_end"] = list(logs)


# (kind, loss order, metrics?) -> (metrics_names before fit, after fit, evaluate() order)
CASES = [
    ("dict", "pd", False, ["loss"], ["loss", "priority_loss", "department_loss"],
     ["loss", "priority_loss", "department_loss"]),
    ("dict", "dp", False, ["loss"], ["loss", "department_loss", "priority_loss"],
     ["loss", "department_loss", "priority_loss"]),
    ("dict", "pd", True, ["loss", "compile_metrics"],
     ["loss", "compile_metrics", "priority_loss", "department_loss"],
     ["loss", "priority_loss", "department_loss", "department_accuracy", "priority_mae"]),
    ("dict", "dp", True, ["loss", "compile_metrics"],
     ["loss", "compile_metrics", "department_loss", "priority_loss"],
     ["loss", "department_loss", "priority_loss", "department_accuracy", "priority_mae"]),
    ("list", "pd", False, ["loss"], ["loss", "priority_loss", "department_loss"],
     ["loss", "priority_loss", "department_loss"]),
    ("list", "dp", False, ["loss"], ["loss", "priority_loss", "department_loss"],
     ["loss", "priority_loss", "department_loss"]),
    ("list", "pd", True, ["loss", "compile_metrics"],
     ["loss", "compile_metrics", "priority_loss", "department_loss"],
     ["loss", "priority_loss", "department_loss", "department_accuracy", "priority_mae"]),
    ("list", "dp", True, ["loss", "compile_metrics"],
     ["loss", "compile_metrics", "priority_loss", "department_loss"],
     ["loss", "priority_loss", "department_loss", "department_accuracy", "priority_mae"]),
]


@pytest.mark.parametrize("kind,order,with_metrics,before,after,eval_order", CASES)
def test_multi_output_names_and_orders(kind, order, with_metrics, before, after, eval_order):
    x, y = two_output_data()
    model = two_output_model(fkeras, kind)
    model.compile("sgd", loss=LOSS_ORDERS[order],
                  loss_weights={"priority": 1.0, "department": 0.2},
                  metrics=METRICS if with_metrics else None)
    assert model.metrics_names == before
    cb = KeysSeen()
    hist = model.fit(x, targets(y, kind), epochs=1, verbose=0, callbacks=[cb],
                     validation_data=(x, targets(y, kind)))
    assert model.metrics_names == after
    keys = SORTED_WITH_METRICS if with_metrics else SORTED_LOSSES
    assert list(hist.history) == keys + [f"val_{k}" for k in keys]
    assert cb.seen == {"train_batch_end": keys, "test_end": keys,
                       "epoch_end": keys + [f"val_{k}" for k in keys]}
    logs = model.evaluate(x, targets(y, kind), verbose=0, return_dict=True)
    assert list(logs) == keys
    values = model.evaluate(x, targets(y, kind), verbose=0)
    assert values == [logs[k] for k in eval_order]
    # The total is the weighted sum of the per-output losses (unweighted in their trackers).
    assert np.isclose(logs["loss"], logs["priority_loss"] + 0.2 * logs["department_loss"],
                      rtol=1e-5)


def test_dict_outputs_single_loss_and_partial_losses():
    x, y = two_output_data()
    model = two_output_model(fkeras, "dict")
    model.compile("sgd", "mse")
    model.fit(x, {"priority": y["priority"], "department": y["department"]}, verbose=0)
    assert model.metrics_names == ["loss", "department_loss", "priority_loss"]
    model = two_output_model(fkeras, "dict")
    model.compile("sgd", loss={"priority": "mse"})
    model.fit(x, y, verbose=0)
    assert model.metrics_names == ["loss"]  # one output with a loss: no per-output trackers


def test_single_output_metrics_duplicates_and_float():
    x, y = two_output_data()
    inp = fkeras.Input((3,))
    model = fkeras.Model(inp, fkeras.layers.Dense(1)(inp))
    model.compile("sgd", "mse", metrics=["mse", "mae"], weighted_metrics=["mae"])
    model.fit(x, y["priority"], verbose=0)
    assert model.metrics_names == ["loss", "compile_metrics"]
    assert [m.name for m in model.metrics[1].metrics] == ["mse", "mae", "mae"]
    logs = model.evaluate(x, y["priority"], verbose=0, return_dict=True)
    assert list(logs) == ["loss", "mae", "mse", "weighted_mae"]
    # Keras 3 lists `mae` twice: the container's names are matched one by one.
    assert model.evaluate(x, y["priority"], verbose=0) == [
        logs["loss"], logs["mse"], logs["mae"], logs["mae"], logs["weighted_mae"]]
    model.compile("sgd", "mse")
    assert isinstance(model.evaluate(x, y["priority"], verbose=0), float)


def _guide_step_model(keras2):
    class Custom(fkeras.Model):
        def train_step(self, data):
            x, y = data
            with fkeras.GradientTape() as tape:
                y_pred = self(x, training=True)
                loss = self.compute_loss(y=y, y_pred=y_pred)
            grads = tape.gradient(loss, self.trainable_variables)
            self.optimizer.apply(grads, self.trainable_variables)
            if keras2:
                self.compiled_metrics.update_state(y, y_pred)
            else:
                for m in self.metrics:
                    if m.name == "loss":
                        m.update_state(loss)
                    else:
                        m.update_state(y, y_pred)
            return {m.name: m.result() for m in self.metrics}

    inp = fkeras.Input((3,))
    return Custom(inp, fkeras.layers.Dense(1)(inp))


@pytest.mark.parametrize("keras2", [False, True])
def test_custom_train_step_returns_self_metrics(keras2):
    x, y = two_output_data()
    model = _guide_step_model(keras2)
    model.compile("sgd", "mse", metrics=["mae", "mse"], weighted_metrics=["mae"])
    assert [type(m).__name__ for m in model.metrics] == ["Mean", "CompileMetrics"]
    cb = KeysSeen()
    hist = model.fit(x, y["priority"], batch_size=8, epochs=2, verbose=0, callbacks=[cb])
    # `compile_metrics` sorts before `loss`; its dict is inlined at that place.
    assert list(hist.history) == ["mae", "mse", "weighted_mae", "loss"]
    assert cb.seen["train_batch_end"] == ["mae", "mse", "weighted_mae", "loss"]
    assert hist.history["mae"][-1] > 0
    if not keras2:
        assert np.isclose(hist.history["loss"][-1], hist.history["mse"][-1], rtol=1e-5)


def test_custom_steps_with_their_own_keys():
    class Own(fkeras.Model):
        def train_step(self, data):
            return {"zz": np.float32(3.0), "aa": {"b": 1.0}}

        def test_step(self, data):
            return {"zz": 1.0, "my": 2.0}

    x, y = two_output_data()
    inp = fkeras.Input((3,))
    model = Own(inp, fkeras.layers.Dense(1)(inp))
    model.compile("sgd", "mse")
    hist = model.fit(x, y["priority"], epochs=2, verbose=0, validation_data=(x, y["priority"]))
    assert hist.history == {"b": [1.0, 1.0], "val_my": [2.0, 2.0], "val_zz": [1.0, 1.0],
                            "zz": [3.0, 3.0]}
    assert model.evaluate(x, y["priority"], verbose=0) == [2.0, 1.0]


class LogsSeen(fkeras.callbacks.Callback):
    HOOKS = ("on_train_begin", "on_train_end", "on_epoch_begin", "on_epoch_end",
             "on_train_batch_begin", "on_train_batch_end", "on_test_begin", "on_test_end",
             "on_test_batch_begin", "on_test_batch_end", "on_predict_begin",
             "on_predict_end", "on_predict_batch_begin", "on_predict_batch_end")

    def __init__(self):
        super().__init__()
        self.calls = []
        for hook in self.HOOKS:
            setattr(self, hook, self._recorder(hook))

    def _recorder(self, hook):
        def record(*args, logs=None):
            logs = args[-1] if args and not isinstance(args[-1], int) else logs
            self.calls.append((hook, logs))
        return record


def test_every_hook_gets_a_dict():
    x, y = two_output_data(6)
    inp = fkeras.Input((3,))
    model = fkeras.Model(inp, fkeras.layers.Dense(1)(inp))
    model.compile("sgd", "mse", metrics=["mae"])
    cb = LogsSeen()
    model.fit(x, y["priority"], batch_size=3, verbose=0, validation_data=(x, y["priority"]),
              callbacks=[cb])
    model.evaluate(x, y["priority"], verbose=0, callbacks=[cb])
    model.predict(x, batch_size=3, verbose=0, callbacks=[cb])
    empty = {"on_train_begin", "on_epoch_begin", "on_train_batch_begin", "on_test_begin",
             "on_test_batch_begin", "on_predict_begin", "on_predict_batch_begin",
             "on_predict_end"}
    for hook, logs in cb.calls:
        assert isinstance(logs, dict), hook
        if hook in empty:
            assert logs == {}, hook
        elif hook == "on_predict_batch_end":
            assert list(logs) == ["outputs"] and logs["outputs"].shape == (3, 1)
        elif hook in ("on_epoch_end", "on_train_end"):
            assert list(logs) == ["loss", "mae", "val_loss", "val_mae"], hook
        else:
            assert list(logs) == ["loss", "mae"], hook
            assert all(type(v) is float for v in logs.values())


def test_predict_batch_end_outputs_structure():
    x, _ = two_output_data(6)
    cb = LogsSeen()
    two_output_model(fkeras, "list").predict(x, batch_size=3, verbose=0, callbacks=[cb])
    outs = [logs for hook, logs in cb.calls if hook == "on_predict_batch_end"]
    assert [o.shape for o in outs[0]["outputs"]] == [(3, 1), (3, 4)]
    cb = LogsSeen()
    two_output_model(fkeras, "dict").predict(x, batch_size=3, verbose=0, callbacks=[cb])
    outs = [logs for hook, logs in cb.calls if hook == "on_predict_batch_end"]
    assert list(outs[0]) == ["department", "priority"]  # a dict is inlined, as in Keras 3


class NoTraining(fkeras.Model):
    def __init__(self):
        super().__init__()
        self.drop = fkeras.layers.Dropout(0.999999)
        self.dense = fkeras.layers.Dense(1, kernel_initializer="ones", trainable=False)

    def call(self, inputs):
        return self.dense(self.drop(inputs))


def test_model_without_training_argument():
    x = np.ones((8, 3), "float32")
    y = np.zeros((8, 1), "float32")
    model = NoTraining()
    model.compile("sgd", "mse")
    hist = model.fit(x, y, epochs=1, verbose=0)
    # Keras 3 calls it without `training`: the Dropout stays inactive, the loss is 3^2.
    assert hist.history["loss"] == [pytest.approx(9.0)]
    assert model.evaluate(x, y, verbose=0) == pytest.approx(9.0)
    np.testing.assert_allclose(model.predict(x, verbose=0), np.full((8, 1), 3.0))


def test_metrics_set_as_model_attributes():
    class WithTrackers(fkeras.Model):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.tracker = fkeras.metrics.Mean(name="my_tracker")

    inp = fkeras.Input((3,))
    model = WithTrackers(inp, fkeras.layers.Dense(1)(inp))
    assert model.metrics_names == ["my_tracker"]
    model.compile("sgd", "mse", metrics=["mae"])
    assert model.metrics_names == ["loss", "compile_metrics", "my_tracker"]
    model.tracker.update_state(5.0)
    hist = model.fit(np.ones((4, 3), "float32"), np.ones((4, 1), "float32"), verbose=0)
    assert list(hist.history) == ["loss", "mae", "my_tracker"]
    assert hist.history["my_tracker"] == [0.0]  # reset with the model's metrics each epoch


def test_keras2_custom_step_matches_the_builtin_step():
    """compiled_loss + compiled_metrics.update_state + {m.name: m.result()} (the Keras 2
    guide) trains and reports exactly as the built-in step."""

    class Keras2Step(fkeras.Model):
        def train_step(self, data):
            x, y = data
            with fkeras.GradientTape() as tape:
                y_pred = self(x, training=True)
                loss = self.compiled_loss(y, y_pred, regularization_losses=self.losses)
            grads = tape.gradient(loss, self.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
            self.compiled_metrics.update_state(y, y_pred)
            return {m.name: m.result() for m in self.metrics}

    x, y = two_output_data(32)
    results = []
    for cls in (Keras2Step, fkeras.Model):
        fkeras.utils.set_random_seed(4)
        inp = fkeras.Input((3,))
        model = cls(inp, fkeras.layers.Dense(1)(inp))
        model.compile(fkeras.optimizers.SGD(0.05), "mse", metrics=["mae"])
        hist = model.fit(x, y["priority"], batch_size=8, epochs=2, shuffle=False, verbose=0)
        results.append((hist.history, model.get_weights()))
    (h2, w2), (h, w) = results
    assert sorted(h2) == sorted(h) == ["loss", "mae"]
    for key in h:
        np.testing.assert_allclose(h2[key], h[key], rtol=1e-5)
    for a, b in zip(w2, w):
        np.testing.assert_allclose(a, b, rtol=1e-5)
