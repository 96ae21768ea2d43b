"""keras.name_scope, keras.remat and keras.RematScope.

`name_scope` keeps Keras's stack of names (`current_path()` joins it with "/"); fkeras's layers
name their variables themselves, so the scope does not rename variables. `remat` and
`RematScope` ask Keras to recompute activations in the backward pass to save memory; fkeras
runs the function unchanged (same values and gradients, no memory saving), so code written
with them runs as is.
"""

import functools
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


def remat(f):
    """`f` with rematerialization requested (keras.remat); fkeras calls `f` unchanged."""

    @functools.wraps(f)
    def wrapped(*args, **kwargs):
        return f(*args, **kwargs)

    return wrapped


class RematScope:
    """The scope in which Keras rematerializes layers (keras.RematScope); accepted and
    recorded, with no effect on fkeras's computation.

    Args:
        mode: None, "full", "activations", "larger_than" or "list_of_layers".
        output_size_threshold: the size for "larger_than".
        layer_names: the layers for "list_of_layers".
    """

    def __init__(self, mode="full", output_size_threshold=1024, layer_names=None):
        if mode not in (None, "full", "activations", "larger_than", "list_of_layers"):
            raise ValueError("Invalid mode '{mode}'. Supported modes are: "
                             "['full', 'activations', 'larger_than', 'list_of_layers', None]"
                             .format(mode=mode))
        self.mode = mode
        self.output_size_threshold = output_size_threshold
        self.layer_names = list(layer_names or [])

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None
