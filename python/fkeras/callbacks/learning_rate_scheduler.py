"""LearningRateScheduler: sets the optimizer's learning rate at each epoch's start."""

import numpy as np

from fkeras.callbacks.callback import Callback


class LearningRateScheduler(Callback):
    """lr = schedule(epoch, current_lr) (or schedule(epoch)) at every epoch begin; the epoch is
    0-based; the rate is logged as `learning_rate` at epoch end.

    Args:
        schedule: a function (epoch, lr) -> float.
        verbose: 0 or 1.
    """

    def __init__(self, schedule, verbose=0):
        super().__init__()
        self.schedule = schedule
        self.verbose = verbose

    def on_epoch_begin(self, epoch, logs=None):
        optimizer = getattr(self.model, "optimizer", None)
        if optimizer is None or not hasattr(optimizer, "learning_rate"):
            raise ValueError('Optimizer must have a "learning_rate" attribute.')
        try:
            lr = self.schedule(epoch, float(optimizer.learning_rate))
        except TypeError:
            lr = self.schedule(epoch)
        if not isinstance(lr, (float, np.floating)):
            raise ValueError(f"The output of the `schedule` function should be a float. "
                             f"Got: {lr}")
        optimizer.learning_rate = float(lr)
        if self.verbose > 0:
            print(f"\nEpoch {epoch + 1}: LearningRateScheduler setting learning rate to {lr}.")

    def on_epoch_end(self, epoch, logs=None):
        if logs is not None:
            logs["learning_rate"] = float(self.model.optimizer.learning_rate)
