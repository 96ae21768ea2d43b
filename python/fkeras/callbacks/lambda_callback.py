"""LambdaCallback: a callback from plain functions, one per hook."""

from fkeras.callbacks.callback import Callback


class LambdaCallback(Callback):
    """Builds a callback from functions: on_epoch_begin(epoch, logs), on_epoch_end(epoch,
    logs), on_train_begin(logs), on_train_end(logs), on_train_batch_begin(batch, logs),
    on_train_batch_end(batch, logs), and any other hook by keyword
    (on_batch_begin / on_batch_end are aliases of the train batch hooks)."""

    def __init__(self, on_epoch_begin=None, on_epoch_end=None, on_train_begin=None,
                 on_train_end=None, on_train_batch_begin=None, on_train_batch_end=None,
                 **kwargs):
        super().__init__()
        hooks = dict(on_epoch_begin=on_epoch_begin, on_epoch_end=on_epoch_end,
                     on_train_begin=on_train_begin, on_train_end=on_train_end,
                     on_train_batch_begin=on_train_batch_begin,
                     on_train_batch_end=on_train_batch_end)
        aliases = {"on_batch_begin": "on_train_batch_begin",
                   "on_batch_end": "on_train_batch_end"}
        for name, fn in kwargs.items():
            if not (name.startswith("on_") and hasattr(Callback, name)):
                raise TypeError(f"LambdaCallback: unknown hook `{name}`.")
            name = aliases.get(name, name)
            hooks[name] = hooks.get(name) or fn
        for name, fn in hooks.items():
            if fn is not None:
                setattr(self, name, fn)
