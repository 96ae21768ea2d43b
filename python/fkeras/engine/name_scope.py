"""keras.name_scope: the stack of names that prefixes variable paths (Keras 3's rules).

A Variable created while scopes are open gets the path `current_path() + "/" + name`. A layer
opens `name_scope(layer.name, caller=layer)` around its `build`, its calls and `add_weight`;
the first time it does, it remembers the path around it (`layer._parent_path`), and its later
scopes start from that path whatever is open then (`override_parent`). So a layer's weights
are `<path when first built>/<layer name>/<weight name>`: "dense/kernel" for a layer built on
its own or in a Functional graph, "sequential/dense/kernel" inside a Sequential model (its
layers are built in its scope), "outer/dense/kernel" under `name_scope("outer")`.
"""

import threading


class _State(threading.local):
    def __init__(self):
        self.stack = []


_STATE = _State()


def current_path():
    """The path of the open name scopes ("a/b"; "" outside any)."""
    parts = []
    for scope in _STATE.stack:
        if scope.override_parent is not None:
            parts = [p for p in scope.override_parent.split("/") if p]
        parts.append(scope.name)
    return "/".join(parts)


def join(name):
    """`name` under the current path (a Variable's path)."""
    if not _STATE.stack:
        return name
    parent = current_path()
    return f"{parent}/{name}" if parent else name


class name_scope:  # noqa: N801  (Keras's name)
    """A context manager that opens a sub-namespace for variable paths (keras.name_scope).

    Args:
        name: the scope's name (a string without "/").
        caller: the object opening the scope (a layer opens one with itself as caller).
        deduplicate: if True (default), a scope of the same name and the same `caller` as the
            innermost open one is not entered twice, and a caller's remembered parent path
            (`caller._parent_path`) becomes `override_parent`.
        override_parent: an absolute path that replaces the enclosing scopes' path.

    Example:
    ```python
    with fkeras.name_scope("encoder"):
        v = fkeras.Variable(np.zeros(3), name="v")     # v.path == "encoder/v"
        dense = fkeras.layers.Dense(2)
        dense.build((None, 4))                         # "encoder/dense/kernel"
    ```
    """

    def __init__(self, name, caller=None, deduplicate=True, override_parent=None):
        if not isinstance(name, str) or "/" in name:
            raise ValueError("Argument `name` must be a string and cannot contain character "
                             f"`/`. Received: name={name}")
        self.name, self.caller = name, caller
        self.deduplicate = deduplicate
        if override_parent is None and deduplicate:
            override_parent = getattr(caller, "_parent_path", None)
        self.override_parent = override_parent
        self._pushed = False

    def __enter__(self):
        stack = _STATE.stack
        if self.deduplicate and stack and self.caller is not None:
            top = stack[-1]
            if top.caller is self.caller and top.name == self.name:
                return self
        stack.append(self)
        self._pushed = True
        return self

    def __exit__(self, *exc):
        if self._pushed:
            stack = _STATE.stack
            if stack:
                stack.pop()
            self._pushed = False
