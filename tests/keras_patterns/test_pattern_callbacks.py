"""Custom callbacks (the "writing your own callbacks" guide): hooks and the logs they receive,
a callback adding its own key to the epoch logs (History records it), early stopping at the
minimum loss with get_weights/set_weights through self.model, and a learning-rate schedule set
on self.model.optimizer, against Keras 3."""

import numpy as np
from patterns_parity import regression_data, run_both, seed_weights

import fkeras


def callback_classes(lib):
    class AddsToLogs(lib.callbacks.Callback):
        """Writes a derived figure into the epoch logs."""

        def on_epoch_end(self, epoch, logs=None):
            logs["loss_x2"] = logs["loss"] * 2.0

    class EarlyStoppingAtMinLoss(lib.callbacks.Callback):
        def __init__(self, patience=0):
            super().__init__()
            self.patience = patience
            self.best_weights = None

        def on_train_begin(self, logs=None):
            self.wait, self.stopped_epoch, self.best = 0, 0, np.inf

        def on_epoch_end(self, epoch, logs=None):
            current = logs.get("loss")
            if np.less(current, self.best):
                self.best, self.wait = current, 0
                self.best_weights = self.model.get_weights()
            else:
                self.wait += 1
                if self.wait >= self.patience:
                    self.stopped_epoch = epoch
                    self.model.stop_training = True
                    self.model.set_weights(self.best_weights)

    class LearningRateSetter(lib.callbacks.Callback):
        def __init__(self, schedule):
            super().__init__()
            self.schedule = schedule
            self.seen = []

        def on_epoch_begin(self, epoch, logs=None):
            lr = float(np.array(self.model.optimizer.learning_rate))
            self.seen.append(lr)
            self.model.optimizer.learning_rate = self.schedule(epoch, lr)

    class BatchLosses(lib.callbacks.Callback):
        def on_train_begin(self, logs=None):
            self.losses = []

        def on_train_batch_end(self, batch, logs=None):
            self.losses.append(logs["loss"])

    return AddsToLogs, EarlyStoppingAtMinLoss, LearningRateSetter, BatchLosses


def small_model(lib, lr=0.05):
    model = lib.Sequential([lib.Input((4,)), lib.layers.Dense(1)])
    seed_weights(model, seed=9)
    model.compile(optimizer=lib.optimizers.SGD(lr), loss="mse", metrics=["mean_absolute_error"])
    return model


def test_callbacks_logs_schedules_and_batch_losses_like_keras():
    x, y = regression_data(n=40, d_in=4, seed=41)

    def train(lib):
        AddsToLogs, _, LearningRateSetter, BatchLosses = callback_classes(lib)
        lr_cb = LearningRateSetter(lambda epoch, lr: lr * 0.5 if epoch in (1, 2) else lr)
        batch_cb = BatchLosses()
        model = small_model(lib)
        hist = model.fit(x, y, batch_size=10, epochs=4, shuffle=False, verbose=0,
                         callbacks=[AddsToLogs(), lr_cb, batch_cb])
        return {"history": hist.history, "lrs": lr_cb.seen, "batch_losses": batch_cb.losses,
                "weights": model.get_weights()}

    fk, _ = run_both(train)
    np.testing.assert_allclose(fk["history/loss_x2"], 2 * fk["history/loss"], rtol=1e-6)
    np.testing.assert_allclose(fk["lrs"], [0.05, 0.05, 0.025, 0.0125])


def test_early_stopping_at_min_loss_restores_best_weights_like_keras():
    x, y = regression_data(n=40, d_in=4, seed=42)

    def train(lib):
        _, EarlyStoppingAtMinLoss, _, _ = callback_classes(lib)
        model = small_model(lib, lr=0.9)  # diverges after a few epochs
        stopper = EarlyStoppingAtMinLoss()
        hist = model.fit(x, y, batch_size=40, epochs=30, shuffle=False, verbose=0,
                         callbacks=[stopper])
        return {"loss": hist.history["loss"], "stopped": stopper.stopped_epoch,
                "weights": model.get_weights(), "best": stopper.best}

    fk, _ = run_both(train)
    assert 0 < fk["stopped"] < 29


def test_evaluate_and_predict_hooks_receive_logs():
    events = []

    class Spy(fkeras.callbacks.Callback):
        def on_test_batch_end(self, batch, logs=None):
            events.append(("test_batch", sorted(logs)))

        def on_test_end(self, logs=None):
            events.append(("test_end", sorted(logs)))

        def on_predict_batch_end(self, batch, logs=None):
            events.append(("predict_batch", sorted(logs)))

    x, y = regression_data(n=20, d_in=4, seed=43)
    model = small_model(fkeras)
    model.evaluate(x, y, batch_size=10, verbose=0, callbacks=[Spy()])
    model.predict(x, batch_size=10, verbose=0, callbacks=[Spy()])
    assert events[0] == ("test_batch", ["loss", "mean_absolute_error"])
    assert ("test_end", ["loss", "mean_absolute_error"]) in events
    assert events[-1] == ("predict_batch", ["outputs"])
