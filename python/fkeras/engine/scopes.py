"""keras.name_scope (and, re-exported, keras.remat and keras.RematScope from engine/remat.py).

`name_scope` keeps Keras's stack of names (`current_path()` joins it with "/").
"""

import threading

_STATE = threading.local()


def _stack():
    if not hasattr(_STATE, "names"):
        _STATE.names = []
    return _STATE.names


def current_path():
    """The names of the open name scopes joined with "/" ("" outside any)."""
    return "/".join(scope.name for scope in _stack())


class name_scope:  # noqa: N801  (Keras's name)
    """A context manager opening a named scope (keras.name_scope).

    Args:
        name: the scope's name (a non-empty string without "/").
        caller: accepted as Keras does.
        deduplicate: if True (default), re-entering a scope of the same name directly inside
            itself does not push the name twice.
        override_parent: accepted as Keras does.
    """

    def __init__(self, name, caller=None, deduplicate=True, override_parent=None):
        if not isinstance(name, str) or not name or "/" in name:
            raise ValueError("Argument `name` must be a non-empty string without '/'. "
                             f"Received: name={name!r}")
        self.name, self.caller = name, caller
        self.deduplicate, self.override_parent = deduplicate, override_parent
        self._pushed = False

    def __enter__(self):
        stack = _stack()
        if not (self.deduplicate and stack and stack[-1].name == self.name):
            stack.append(self)
            self._pushed = True
        return self

    def __exit__(self, *exc):
        if self._pushed:
            _stack().pop()
            self._pushed = False


from fkeras.engine.remat import RematScope, remat  # noqa: E402,F401  (fkeras imports them here)
