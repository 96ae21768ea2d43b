"""Custom losses (plain functions written with ops and operators, Loss subclasses with
constructor arguments) and custom metrics (Metric subclasses holding add_variable state updated
with assign_add, read by result, cleared by reset_state), in compile/fit/evaluate against
Keras 3, and used standalone."""

import numpy as np
import pytest
from patterns_parity import (classification_data, losses_trained, regression_data, run_both,
                             seed_weights, to_np)

import fkeras


def custom_mse(lib):
    def custom_mean_squared_error(y_true, y_pred):
        return lib.ops.mean(lib.ops.square(y_true - y_pred), axis=-1)

    return custom_mean_squared_error


def custom_mse_class(lib):
    class CustomMSE(lib.losses.Loss):
        def __init__(self, regularization_factor=0.1, name="custom_mse"):
            super().__init__(name=name)
            self.regularization_factor = regularization_factor

        def call(self, y_true, y_pred):
            mse = lib.ops.mean(lib.ops.square(y_true - y_pred), axis=-1)
            reg = lib.ops.mean(lib.ops.square(0.5 - y_pred), axis=-1)
            return mse + reg * self.regularization_factor

    return CustomMSE


def true_positives_class(lib):
    class CategoricalTruePositives(lib.metrics.Metric):
        """Counts samples whose arg-max prediction equals the integer label."""

        def __init__(self, name="categorical_true_positives", **kwargs):
            super().__init__(name=name, **kwargs)
            self.true_positives = self.add_variable(shape=(), name="ctp", initializer="zeros")

        def update_state(self, y_true, y_pred, sample_weight=None):
            y_true = lib.ops.reshape(lib.ops.cast(y_true, "float32"), (-1,))
            top = lib.ops.max(y_pred, axis=-1)
            # the label's score reaches the row maximum: arg-max without ops.argmax
            picked = lib.ops.sum(y_pred * (lib.ops.expand_dims(y_true, -1) == self._classes(
                y_pred)), axis=-1)
            values = lib.ops.cast(picked >= top, "float32")
            if sample_weight is not None:
                values = values * lib.ops.cast(lib.ops.reshape(sample_weight, (-1,)), "float32")
            self.true_positives.assign_add(lib.ops.sum(values))

        def _classes(self, y_pred):
            return lib.ops.convert_to_tensor(np.arange(y_pred.shape[-1], dtype="float32"))

        def result(self):
            return self.true_positives

        def reset_state(self):
            self.true_positives.assign(0.0)

    return CategoricalTruePositives


def weighted_mean_class(lib):
    class RunningWeightedMean(lib.metrics.Metric):
        """Two state variables; result is their ratio."""

        def __init__(self, name="running_weighted_mean", **kwargs):
            super().__init__(name=name, **kwargs)
            self.total = self.add_variable(shape=(), initializer="zeros", name="total")
            self.count = self.add_variable(shape=(), initializer="zeros", name="count")

        def update_state(self, y_true, y_pred, sample_weight=None):
            err = lib.ops.abs(y_true - y_pred)
            self.total.assign_add(lib.ops.sum(err))
            self.count.assign_add(lib.ops.cast(lib.ops.size(err), "float32"))

        def result(self):
            return self.total / lib.ops.maximum(self.count, 1.0)

    return RunningWeightedMean


@pytest.mark.parametrize("make_loss", [custom_mse, lambda lib: custom_mse_class(lib)()])
def test_custom_losses_train_like_keras(make_loss):
    x, y = regression_data(d_in=4, d_out=3, seed=21)

    def train(lib):
        model = lib.Sequential([lib.Input((4,)), lib.layers.Dense(8, activation="relu"),
                                lib.layers.Dense(3, activation="sigmoid")])
        seed_weights(model, seed=2)
        model.compile(optimizer=lib.optimizers.Adam(0.01), loss=make_loss(lib))
        hist = model.fit(x, y, batch_size=16, epochs=3, shuffle=False, verbose=0)
        return {"loss": hist.history["loss"], "weights": model.get_weights(),
                "eval": model.evaluate(x, y, verbose=0)}

    fk, _ = run_both(train)
    losses_trained(fk["loss"])


def test_loss_subclass_standalone_reductions_like_keras():
    rng = np.random.RandomState(0)
    y_true, y_pred = rng.random_sample((5, 3)), rng.random_sample((5, 3))
    sw = rng.random_sample((5,))

    def train(lib):
        loss = custom_mse_class(lib)(regularization_factor=0.3)
        return {"plain": loss(y_true, y_pred), "weighted": loss(y_true, y_pred, sw)}

    run_both(train)


def test_custom_metrics_in_fit_and_evaluate_like_keras():
    x, labels = classification_data(n=60, d_in=6, classes=3, seed=22)

    def train(lib):
        model = lib.Sequential([lib.Input((6,)), lib.layers.Dense(3, activation="softmax")])
        seed_weights(model, seed=3)
        model.compile(optimizer=lib.optimizers.RMSprop(1e-2),
                      loss="sparse_categorical_crossentropy",
                      metrics=[true_positives_class(lib)()])
        hist = model.fit(x, labels, batch_size=20, epochs=3, shuffle=False, verbose=0)
        res = model.evaluate(x, labels, batch_size=20, verbose=0, return_dict=True)
        return {"history": hist.history, "eval": res}

    fk, _ = run_both(train)
    losses_trained(fk["history/loss"])
    # a count, reset every epoch: never above the number of samples
    assert 0 <= fk["history/categorical_true_positives"].max() <= 60


def test_metric_state_update_result_reset_like_keras():
    rng = np.random.RandomState(1)
    batches = [(rng.random_sample((4, 2)), rng.random_sample((4, 2))) for _ in range(3)]

    def train(lib):
        metric = weighted_mean_class(lib)()
        out = {}
        for i, (a, b) in enumerate(batches):
            metric.update_state(a, b)
            out[f"after_{i}"] = metric.result()
        out["variables"] = [v.numpy() for v in metric.variables]
        metric.reset_state()
        out["reset"] = metric.result()
        return out

    fk, _ = run_both(train)
    assert fk["reset"] == 0.0
    assert len(weighted_mean_class(fkeras)().variables) == 2


def test_add_variable_returns_a_variable_with_the_assign_family():
    metric = weighted_mean_class(fkeras)()
    v = metric.total
    v.assign(3.0)
    v.assign_add(2.0)
    v.assign_sub(1.0)
    np.testing.assert_allclose(to_np(v), 4.0)
    assert v.shape == () and not v.trainable
