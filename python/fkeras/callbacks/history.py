"""History: records the epoch logs of `fit` (always added; returned by fit, also
`model.history`)."""

from fkeras.callbacks.callback import Callback


class History(Callback):
    """`history.history` maps each log key to its per-epoch values; `history.epoch` lists
    the epoch indices (0-based, starting at initial_epoch).

    When a learning-rate callback logs `learning_rate` (Keras 3's key), the same values are also
    recorded under `lr` (Keras 2's key), so Keras 2 scripts reading `history.history["lr"]` keep
    working; the epoch logs themselves (CSVLogger, TensorBoard) keep Keras 3's key only.
    """

    def __init__(self):
        super().__init__()
        self.history = {}
        self.epoch = []

    def on_train_begin(self, logs=None):
        self.epoch = []
        self.model.history = self

    def on_epoch_end(self, epoch, logs=None):
        self.epoch.append(epoch)
        for k, v in (logs or {}).items():
            self.history.setdefault(k, []).append(v)
        if logs and "learning_rate" in logs and "lr" not in logs:
            self.history.setdefault("lr", []).append(logs["learning_rate"])
