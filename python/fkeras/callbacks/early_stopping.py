"""EarlyStopping (Keras 3 rules): stop when `monitor` has not improved for `patience` epochs.

The counter is incremented first and reset on improvement (only if the baseline is also
beaten); training stops when wait >= patience and epoch > 0. With restore_best_weights the best
weights (the first epoch's weights initially) are restored at the end of training whenever
they exist, with a message when verbose.
"""

import warnings

from fkeras.callbacks.callback import Callback
from fkeras.callbacks.monitor import comparison, direction_of


class EarlyStopping(Callback):
    """Stops training when a monitored metric has stopped improving.

    Args:
        monitor: log key to monitor. Defaults to "val_loss".
        min_delta: minimum change that counts as an improvement.
        patience: epochs without improvement before stopping.
        verbose: 0 or 1.
        mode: "auto", "min" or "max".
        baseline: a value the monitor must beat for the wait counter to reset.
        restore_best_weights: restore the weights of the best epoch at the end.
        start_from_epoch: epochs to wait before monitoring starts.
    """

    def __init__(self, monitor="val_loss", min_delta=0, patience=0, verbose=0, mode="auto",
                 baseline=None, restore_best_weights=False, start_from_epoch=0):
        super().__init__()
        self.monitor = monitor
        self.patience = patience
        self.verbose = verbose
        self.baseline = baseline
        self.min_delta = abs(min_delta)
        self.restore_best_weights = restore_best_weights
        self.start_from_epoch = start_from_epoch
        if mode not in ("auto", "min", "max"):
            warnings.warn(f"EarlyStopping mode {mode} is unknown, fallback to auto mode.")
            mode = "auto"
        self.mode = mode
        self.monitor_op = None
        self.wait = self.stopped_epoch = self.best_epoch = 0
        self.best = self.best_weights = None

    def _set_monitor_op(self):
        mode = self.mode if self.mode != "auto" else direction_of(self.model, self.monitor)
        if mode is None:
            raise ValueError(
                f"EarlyStopping callback received monitor={self.monitor}, but fkeras isn't "
                "able to automatically determine whether that metric should be maximized or "
                "minimized. Pass `mode='max'` in order to do early stopping based on the "
                "highest metric value, or pass `mode='min'` in order to use the lowest value."
            )
        self.monitor_op = comparison(mode)
        self._delta = -self.min_delta if mode == "min" else self.min_delta

    def on_train_begin(self, logs=None):
        self.wait = self.stopped_epoch = self.best_epoch = 0
        self.best = self.best_weights = None

    def on_epoch_end(self, epoch, logs=None):
        if self.monitor_op is None:
            self._set_monitor_op()
        current = (logs or {}).get(self.monitor)
        if current is None:
            warnings.warn(
                f"Early stopping conditioned on metric `{self.monitor}` which is not "
                f"available. Available metrics are: {','.join(logs or {})}", stacklevel=2)
            return
        if epoch < self.start_from_epoch:
            return
        if self.restore_best_weights and self.best_weights is None:
            self.best_weights = self.model.get_weights()
            self.best_epoch = epoch
        self.wait += 1
        if self._improved(current, self.best):
            self.best = current
            self.best_epoch = epoch
            if self.restore_best_weights:
                self.best_weights = self.model.get_weights()
            if self.baseline is None or self._improved(current, self.baseline):
                self.wait = 0
            return
        if self.wait >= self.patience and epoch > 0:
            self.stopped_epoch = epoch
            self.model.stop_training = True

    def on_train_end(self, logs=None):
        if self.stopped_epoch > 0 and self.verbose > 0:
            print(f"Epoch {self.stopped_epoch + 1}: early stopping")
        if self.restore_best_weights and self.best_weights is not None:
            if self.verbose > 0:
                print("Restoring model weights from the end of the best epoch: "
                      f"{self.best_epoch + 1}.")
            self.model.set_weights(self.best_weights)

    def _improved(self, value, reference):
        return reference is None or self.monitor_op(value - self._delta, reference)
