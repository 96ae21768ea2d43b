"""CallbackList: calls every callback's hook in order; adds History and ProgbarLogger.

Batch hooks are only dispatched to callbacks that override them, so a fit with only the
default callbacks spends no Python time per batch on empty hooks. Every hook receives a dict
(`{}` when there is nothing to report, never None), flattened and sorted as Keras 3 does
(`fkeras.trainers.logs.pythonify_logs`).
"""

from fkeras.callbacks.callback import Callback
from fkeras.callbacks.history import History
from fkeras.callbacks.progbar_logger import ProgbarLogger
from fkeras.utils.python_utils import pythonify_logs
from fkeras.distribution.data_parallel import is_writer

_BATCH_HOOKS = ("on_train_batch_begin", "on_train_batch_end", "on_test_batch_begin",
                "on_test_batch_end", "on_predict_batch_begin", "on_predict_batch_end")
_ALIASES = {"on_train_batch_begin": "on_batch_begin", "on_train_batch_end": "on_batch_end"}


def _overrides(cb, hook):
    if hook in getattr(cb, "__dict__", {}):  # set on the instance (LambdaCallback)
        return True
    base = getattr(Callback, hook)
    if getattr(type(cb), hook, base) is not base:
        return True
    alias = _ALIASES.get(hook)
    return alias is not None and (alias in getattr(cb, "__dict__", {}) or getattr(
        type(cb), alias) is not getattr(Callback, alias))


class CallbackList(Callback):
    """A list of callbacks called as one.

    Args:
        callbacks: list of Callback instances.
        add_history: append a History if none is given.
        add_progbar: append a ProgbarLogger if none is given.
        model: the model the callbacks see.
        **params: set as `callback.params` ({'verbose', 'epochs', 'steps'}).
    """

    def __init__(self, callbacks=None, add_history=False, add_progbar=False, model=None,
                 **params):
        super().__init__()
        self.callbacks = list(callbacks or [])
        self._history = next((c for c in self.callbacks if isinstance(c, History)), None)
        progbar = next((c for c in self.callbacks if isinstance(c, ProgbarLogger)), None)
        if self._history is None and add_history:
            self._history = History()
            self.callbacks.append(self._history)
        if progbar is None and add_progbar:
            self.callbacks.append(ProgbarLogger())
        if not is_writer():  # DataParallel: only rank 0 prints and writes files
            self.callbacks = [c for c in self.callbacks
                              if not getattr(c, "_fk_rank_zero_only", False)]
        self._batch_hooks = {h: [getattr(c, h) for c in self.callbacks if _overrides(c, h)]
                             for h in _BATCH_HOOKS}
        if model is not None:
            self.set_model(model)
        if params:
            self.set_params(params)

    def append(self, callback):
        self.callbacks.append(callback)
        for h in _BATCH_HOOKS:
            if _overrides(callback, h):
                self._batch_hooks[h].append(getattr(callback, h))

    def set_params(self, params):
        self.params = params
        for c in self.callbacks:
            c.set_params(params)

    def set_model(self, model):
        self._model = model
        for c in self.callbacks:
            c.set_model(model)

    def wants(self, hook):
        """Whether any callback overrides this batch hook."""
        return bool(self._batch_hooks[hook])

    def _call(self, hook, *args):
        # Every callback gets the same dict: keys a callback adds at epoch end reach History.
        *head, logs = args
        logs = pythonify_logs(logs)
        for c in self.callbacks:
            getattr(c, hook)(*head, logs)

    def _call_batch(self, hook, batch, logs):
        fns = self._batch_hooks[hook]
        if fns:
            logs = pythonify_logs(logs)
            for fn in fns:
                fn(batch, logs)

    def on_train_begin(self, logs=None):
        self._call("on_train_begin", logs)

    def on_train_end(self, logs=None):
        self._call("on_train_end", logs)

    def on_epoch_begin(self, epoch, logs=None):
        self._call("on_epoch_begin", epoch, logs)

    def on_epoch_end(self, epoch, logs=None):
        self._call("on_epoch_end", epoch, logs)

    def on_test_begin(self, logs=None):
        self._call("on_test_begin", logs)

    def on_test_end(self, logs=None):
        self._call("on_test_end", logs)

    def on_predict_begin(self, logs=None):
        self._call("on_predict_begin", logs)

    def on_predict_end(self, logs=None):
        self._call("on_predict_end", logs)

    def on_batch_begin(self, batch, logs=None):
        self._call_batch("on_train_batch_begin", batch, logs)

    def on_batch_end(self, batch, logs=None):
        self._call_batch("on_train_batch_end", batch, logs)

    def on_train_batch_begin(self, batch, logs=None):
        self._call_batch("on_train_batch_begin", batch, logs)

    def on_train_batch_end(self, batch, logs=None):
        self._call_batch("on_train_batch_end", batch, logs)

    def on_test_batch_begin(self, batch, logs=None):
        self._call_batch("on_test_batch_begin", batch, logs)

    def on_test_batch_end(self, batch, logs=None):
        self._call_batch("on_test_batch_end", batch, logs)

    def on_predict_batch_begin(self, batch, logs=None):
        self._call_batch("on_predict_batch_begin", batch, logs)

    def on_predict_batch_end(self, batch, logs=None):
        self._call_batch("on_predict_batch_end", batch, logs)
