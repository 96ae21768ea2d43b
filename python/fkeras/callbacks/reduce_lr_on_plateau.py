"""ReduceLROnPlateau (Keras 3 rules): multiply the learning rate by `factor` when `monitor`
has not improved for `patience` epochs, then wait `cooldown` epochs."""

import warnings

import numpy as np

from fkeras.callbacks.callback import Callback


class ReduceLROnPlateau(Callback):
    """Reduces the learning rate when a metric has stopped improving.

    Args:
        monitor: log key. Defaults to "val_loss".
        factor: new_lr = lr * factor (< 1).
        patience: epochs without improvement before reducing.
        verbose: 0 or 1.
        mode: "auto" ("max" if "acc" is in the monitor name, else "min"), "min" or "max".
        min_delta: threshold for an improvement.
        cooldown: epochs to wait after a reduction.
        min_lr: lower bound of the learning rate.
    """

    def __init__(self, monitor="val_loss", factor=0.1, patience=10, verbose=0, mode="auto",
                 min_delta=1e-4, cooldown=0, min_lr=0.0, **kwargs):
        super().__init__()
        if factor >= 1.0:
            raise ValueError("ReduceLROnPlateau does not support a factor >= 1.0. "
                             f"Received factor={factor}")
        self.monitor = monitor
        self.factor = factor
        self.min_lr = min_lr
        self.min_delta = kwargs.pop("epsilon", min_delta)
        self.patience = patience
        self.verbose = verbose
        self.cooldown = cooldown
        if mode not in ("auto", "min", "max"):
            warnings.warn(f"Learning rate reduction mode {mode} is unknown, fallback to auto "
                          "mode.")
            mode = "auto"
        self.mode = mode
        self._reset()

    def _reset(self):
        if self.mode == "min" or (self.mode == "auto" and "acc" not in self.monitor):
            self.monitor_op = lambda a, b: a < b - self.min_delta
            self.best = np.inf
        else:
            self.monitor_op = lambda a, b: a > b + self.min_delta
            self.best = -np.inf
        self.cooldown_counter = 0
        self.wait = 0

    def on_train_begin(self, logs=None):
        self._reset()

    def in_cooldown(self):
        return self.cooldown_counter > 0

    def on_epoch_end(self, epoch, logs=None):
        logs = logs if logs is not None else {}
        optimizer = self.model.optimizer
        logs["learning_rate"] = float(optimizer.learning_rate)
        current = logs.get(self.monitor)
        if current is None:
            warnings.warn(
                f"Learning rate reduction is conditioned on metric `{self.monitor}` which is "
                f"not available. Available metrics are: {','.join(logs)}.", stacklevel=2)
            return
        if self.in_cooldown():
            self.cooldown_counter -= 1
            self.wait = 0
        if self.monitor_op(current, self.best):
            self.best = current
            self.wait = 0
        elif not self.in_cooldown():
            self.wait += 1
            if self.wait >= self.patience:
                old_lr = float(optimizer.learning_rate)
                if old_lr > np.float32(self.min_lr):
                    new_lr = max(old_lr * self.factor, self.min_lr)
                    optimizer.learning_rate = new_lr
                    if self.verbose > 0:
                        print(f"\nEpoch {epoch + 1}: ReduceLROnPlateau reducing learning rate "
                              f"to {new_lr}.")
                    self.cooldown_counter = self.cooldown
                    self.wait = 0
