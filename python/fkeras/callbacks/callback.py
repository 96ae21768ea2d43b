"""Callback: the base class of training hooks (Keras 3 API).

Hooks: on_train_begin/end, on_epoch_begin/end, on_train_batch_begin/end (alias on_batch_*),
on_test_begin/end, on_test_batch_begin/end, on_predict_begin/end, on_predict_batch_begin/end.
`self.model` is the model, `self.params` is {'verbose', 'epochs', 'steps'}. Setting
`model.stop_training = True` ends training after the current epoch.
"""


class Callback:
    """Base class used to build new callbacks."""

    def __init__(self):
        self.params = {}
        self._model = None

    def set_params(self, params):
        self.params = params

    def set_model(self, model):
        self._model = model

    @property
    def model(self):
        return self._model

    def on_batch_begin(self, batch, logs=None):
        """A backwards-compatibility alias for `on_train_batch_begin`."""

    def on_batch_end(self, batch, logs=None):
        """A backwards-compatibility alias for `on_train_batch_end`."""

    def on_epoch_begin(self, epoch, logs=None):
        """Called at the start of an epoch (training only)."""

    def on_epoch_end(self, epoch, logs=None):
        """Called at the end of an epoch with the epoch's logs (val_ keys included)."""

    def on_train_batch_begin(self, batch, logs=None):
        self.on_batch_begin(batch, logs=logs)

    def on_train_batch_end(self, batch, logs=None):
        self.on_batch_end(batch, logs=logs)

    def on_test_batch_begin(self, batch, logs=None):
        """Called before a batch of `evaluate` (or of validation in `fit`)."""

    def on_test_batch_end(self, batch, logs=None):
        """Called after a batch of `evaluate` (or of validation in `fit`)."""

    def on_predict_batch_begin(self, batch, logs=None):
        """Called before a batch of `predict`."""

    def on_predict_batch_end(self, batch, logs=None):
        """Called after a batch of `predict`."""

    def on_train_begin(self, logs=None):
        """Called at the beginning of training."""

    def on_train_end(self, logs=None):
        """Called at the end of training, with the last epoch's logs."""

    def on_test_begin(self, logs=None):
        """Called at the beginning of evaluation or validation."""

    def on_test_end(self, logs=None):
        """Called at the end of evaluation or validation (logs without the val_ prefix)."""

    def on_predict_begin(self, logs=None):
        """Called at the beginning of prediction."""

    def on_predict_end(self, logs=None):
        """Called at the end of prediction."""
