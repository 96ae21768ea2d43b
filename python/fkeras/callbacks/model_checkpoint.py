"""ModelCheckpoint: saves the model (`.keras`, legacy `.h5`) or its weights (`.weights.h5`) during training.

`model.save` and `model.save_weights` write atomically (fkeras/saving/file_io.py: temporary
file in the target directory, fsync, rename, directory fsync): a crash or a kill -9 at any
moment leaves either the previous checkpoint or the new one, never a truncated file (Keras
writes in place; keras-team/keras#6221, #17012, #20463).
"""

import os
import warnings

import numpy as np

from fkeras.callbacks.callback import Callback
from fkeras.callbacks.monitor import comparison, direction_of


class ModelCheckpoint(Callback):
    """Saves the model (`.keras`) or its weights (`.weights.h5`), atomically.

    Args:
        filepath: may contain format fields, e.g. "ck_{epoch:02d}_{val_loss:.2f}.weights.h5".
        monitor: log key for save_best_only. Defaults to "val_loss".
        verbose: 0 or 1.
        save_best_only: only save when the monitored value improves.
        save_weights_only: save with `model.save_weights` (filepath must end in
            ".weights.h5").
        mode: "auto", "min" or "max".
        save_freq: "epoch" or an integer number of batches.
        initial_value_threshold: the initial "best" value.
    """

    _fk_rank_zero_only = True  # DataParallel: kept on rank 0 only (CallbackList)

    def __init__(self, filepath, monitor="val_loss", verbose=0, save_best_only=False,
                 save_weights_only=False, mode="auto", save_freq="epoch",
                 initial_value_threshold=None):
        super().__init__()
        self.filepath = os.fspath(filepath)
        self.monitor = monitor
        self.verbose = verbose
        self.save_best_only = save_best_only
        self.save_weights_only = save_weights_only
        self.save_freq = save_freq
        self.best = initial_value_threshold
        if mode not in ("auto", "min", "max"):
            warnings.warn(f"ModelCheckpoint mode '{mode}' is unknown, fallback to auto mode.")
            mode = "auto"
        self.mode = mode
        self.monitor_op = None
        if save_freq != "epoch" and not (isinstance(save_freq, int) and save_freq > 0):
            raise ValueError(f"Unrecognized save_freq: {save_freq}. Expected 'epoch' or a "
                             "positive integer.")
        if save_weights_only and not self.filepath.endswith(".weights.h5"):
            raise ValueError("When using `save_weights_only=True` in `ModelCheckpoint`, the "
                             "filepath provided must end in `.weights.h5` (Keras weights "
                             f"format). Received: filepath={self.filepath}")
        if not save_weights_only and not self.filepath.endswith((".keras", ".h5")):
            raise ValueError("The filepath provided must end in `.keras` (Keras model format) "
                             f"or `.h5` (legacy HDF5). Received: filepath={self.filepath}")
        self._batches_seen = 0
        self._epoch = 0

    def _set_monitor_op(self):
        mode = self.mode
        if mode == "auto":
            mode = direction_of(self.model, self.monitor) or (
                "max" if "acc" in self.monitor or self.monitor.startswith("fmeasure")
                else "min")
        self.monitor_op = comparison(mode)

    def on_epoch_begin(self, epoch, logs=None):
        self._epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        if self.save_freq == "epoch":
            return
        self._batches_seen += 1
        if self._batches_seen % self.save_freq == 0:
            self._save(self._epoch, batch, logs)

    def on_epoch_end(self, epoch, logs=None):
        if self.save_freq == "epoch":
            self._save(epoch, None, logs)

    def _save(self, epoch, batch, logs):
        logs = dict(logs or {})
        fields = dict(logs, epoch=epoch + 1)
        if batch is not None:
            fields["batch"] = batch + 1
        filepath = self.filepath.format(**fields)
        if self.save_best_only:
            if self.monitor_op is None:
                self._set_monitor_op()
            current = logs.get(self.monitor)
            if current is None or np.isnan(current):
                warnings.warn(f"Can save best model only with {self.monitor} available.",
                              stacklevel=2)
            elif self.best is None or self.monitor_op(current, self.best):
                if self.verbose > 0:
                    best = "None" if self.best is None else f"{self.best:.5f}"
                    print(f"\nEpoch {epoch + 1}: {self.monitor} improved from {best} to "
                          f"{current:.5f}, saving model to {filepath}")
                self.best = current
            else:
                if self.verbose > 0:
                    print(f"\nEpoch {epoch + 1}: {self.monitor} did not improve from "
                          f"{self.best:.5f}")
                return
        elif self.verbose > 0:
            print(f"\nEpoch {epoch + 1}: saving model to {filepath}")
        if self.save_weights_only:
            self.model.save_weights(filepath, overwrite=True)
        else:
            self.model.save(filepath, overwrite=True)
