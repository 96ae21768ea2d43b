"""Variable writes dropped while a layer computes its outputs symbolically.

Keras 3 runs a layer's `call` on symbolic inputs inside a stateless scope: a
`variable.assign(...)` there (keras-io's PixelCNN masks its kernel at the top of `call`; a
layer may count its calls with `assign_add`) changes nothing, so building a Functional model
leaves every variable as initialized. fkeras's symbolic call evaluates ops on concrete
variables eagerly, so the layer machinery wraps each symbolic `call` (and stand-in trace) in
`discard_writes()` and each `build` in `keep_writes()`: variables created and set while
building keep their values, writes made by `call` itself are dropped.
"""

import threading

_state = threading.local()


class _Scope:
    __slots__ = ("_on", "_prev")

    def __init__(self, on):
        self._on = on

    def __enter__(self):
        self._prev = getattr(_state, "on", False)
        _state.on = self._on

    def __exit__(self, *exc):
        _state.on = self._prev


def discard_writes():
    """A scope in which `assign`, `assign_add` and `assign_sub` leave variables unchanged."""
    return _Scope(True)


def keep_writes():
    """Lifts `discard_writes` (a nested layer's `build` inside a symbolic call)."""
    return _Scope(False)


def discarding():
    """Whether variable writes are being dropped on this thread."""
    return getattr(_state, "on", False)
