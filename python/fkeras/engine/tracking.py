"""Sub-layers held in lists, tuples and dicts of a user-written layer are tracked (Keras 3).

`self.blocks = [Dense(4), Dense(4)]` in a user layer's `__init__` makes both Dense layers
sub-layers (their weights are the layer's, the optimizer trains them, `.keras` files save
them), as does `self.blocks = []` followed by `self.blocks.append(Dense(4))`: lists and dicts
(empty, or holding layers; a list of plain data stays as it is) assigned as attributes of a
layer whose class is defined outside fkeras are replaced by
`TrackedList` / `TrackedDict` (subclasses of list and dict) that add layers to the owner's
`_layers` when they are put in and drop them when they are taken out, as Keras 3's tracker
does. A tuple's layers are tracked when it is assigned. Variables assigned to such a layer
(`self.w = fkeras.Variable(...)`, or a list of them) join its weights (`track_variables`).
fkeras's own layers manage their sub-layers and weights themselves and are not touched.

Copying or pickling a tracked container gives a plain list/dict (the copy has no owner).
"""

import weakref

# Base-class bookkeeping attributes: never wrapped.
_UNTRACKED = frozenset({"_layers", "_trainable_weights", "_non_trainable_weights", "_losses",
                        "_seed_generators",
                        "_inbound_nodes", "_outbound_nodes", "_initial_weights"})
_USER_CLASS = {}


def _is_layer(value):
    from fkeras.layers.layer import Layer

    return isinstance(value, Layer)


def is_user_class(cls):
    """Whether `cls` (a Layer subclass) is defined outside the fkeras package (cached)."""
    user = _USER_CLASS.get(cls)
    if user is None:
        user = _USER_CLASS[cls] = not str(cls.__module__).startswith("fkeras.")
    return user


def track_attribute(owner, name, value):
    """The value to store for `owner.<name> = value`: lists and dicts wrapped so that the
    layers put in them later are tracked; the layers already in `value` (nested lists,
    tuples and dicts included) added to `owner._layers`."""
    if name in _UNTRACKED or name.startswith("_fk") or not is_user_class(type(owner)):
        return value
    return _track(owner, value)


def _track(owner, value):
    if _is_layer(value):
        if value is not owner and not any(value is x for x in owner._layers):
            owner._layers.append(value)
        return value
    if isinstance(value, (TrackedList, TrackedDict)) and value._owner() is owner:
        return value
    if isinstance(value, (list, dict)) and value and not _holds_layer(value):
        return value  # plain data (a shape, a config dict): left as it is
    if type(value) is list or isinstance(value, TrackedList):
        return TrackedList(value, owner)
    if type(value) is dict or isinstance(value, TrackedDict):
        return TrackedDict(value, owner)
    if isinstance(value, tuple):
        for item in value:
            _track(owner, item)
    return value


def track_variables(owner, name, value):
    """Keras 3 tracks the Variables a user layer assigns as attributes (`self.w =
    fkeras.Variable(...)`, alone or in a list, tuple or dict): each one not yet among the
    owner's weights joins its trainable or non-trainable weights, by its `trainable` flag, so
    `weights`, the optimizer and saving see it. fkeras's own layers add their weights
    themselves."""
    from fkeras.engine.variable import Variable

    if not isinstance(value, (Variable, list, tuple, dict)) or name in _UNTRACKED \
            or name.startswith("_fk") or not is_user_class(type(owner)):
        return
    for var in _variables_in(value, Variable):
        own = owner._trainable_weights + owner._non_trainable_weights
        if not any(var is w for w in own):
            (owner._trainable_weights if var.trainable else
             owner._non_trainable_weights).append(var)


def _variables_in(value, variable_type, depth=0):
    if isinstance(value, variable_type):
        return [value]
    if depth > 8 or not isinstance(value, (list, tuple, dict)):
        return []
    items = value.values() if isinstance(value, dict) else value
    return [v for item in items for v in _variables_in(item, variable_type, depth + 1)]


def _holds_layer(value, depth=0):
    if _is_layer(value):
        return True
    if depth > 8 or not isinstance(value, (list, tuple, dict)):
        return False
    items = value.values() if isinstance(value, dict) else value
    return any(_holds_layer(v, depth + 1) for v in items)


def _untrack(owner_ref, value):
    owner = owner_ref()
    if owner is None or not _is_layer(value):
        return
    owner._layers[:] = [x for x in owner._layers if x is not value]


class TrackedList(list):
    """A list whose layers are sub-layers of its owner (see the module docstring)."""

    def __init__(self, values=(), owner=None):
        self._owner = weakref.ref(owner) if owner is not None else (lambda: None)
        super().__init__(self._in(v) for v in values)

    def _in(self, value):
        owner = self._owner()
        return value if owner is None else _track(owner, value)

    def append(self, value):
        super().append(self._in(value))

    def insert(self, index, value):
        super().insert(index, self._in(value))

    def extend(self, values):
        super().extend([self._in(v) for v in values])

    def __iadd__(self, values):
        self.extend(values)
        return self

    def __setitem__(self, index, value):
        old = self[index]
        new = [self._in(v) for v in value] if isinstance(index, slice) else self._in(value)
        super().__setitem__(index, new)
        for v in (old if isinstance(index, slice) else [old]):
            if not any(v is x for x in self):
                _untrack(self._owner, v)

    def __delitem__(self, index):
        old = self[index]
        super().__delitem__(index)
        for v in (old if isinstance(index, slice) else [old]):
            _untrack(self._owner, v)

    def remove(self, value):
        index = next((i for i, v in enumerate(self) if v is value), None)
        if index is None:
            super().remove(value)
            return
        del self[index]

    def pop(self, index=-1):
        value = super().pop(index)
        _untrack(self._owner, value)
        return value

    def clear(self):
        for value in self:
            _untrack(self._owner, value)
        super().clear()

    def __reduce_ex__(self, protocol):
        return list, (list(self),)


class TrackedDict(dict):
    """A dict whose layer values are sub-layers of its owner (see the module docstring)."""

    def __init__(self, values=(), owner=None):
        self._owner = weakref.ref(owner) if owner is not None else (lambda: None)
        items = values.items() if hasattr(values, "items") else values
        super().__init__((k, self._in(v)) for k, v in items)

    _in = TrackedList._in

    def __setitem__(self, key, value):
        old = self.get(key)
        super().__setitem__(key, self._in(value))
        if old is not None and old is not value:
            _untrack(self._owner, old)

    def setdefault(self, key, default=None):
        if key not in self:
            self[key] = default
        return self[key]

    def update(self, *args, **kwargs):
        for key, value in dict(*args, **kwargs).items():
            self[key] = value

    def __delitem__(self, key):
        value = self[key]
        super().__delitem__(key)
        _untrack(self._owner, value)

    def pop(self, key, *default):
        if key not in self:
            return super().pop(key, *default)
        value = super().pop(key)
        _untrack(self._owner, value)
        return value

    def popitem(self):
        key, value = super().popitem()
        _untrack(self._owner, value)
        return key, value

    def clear(self):
        for value in self.values():
            _untrack(self._owner, value)
        super().clear()

    def __reduce_ex__(self, protocol):
        return dict, (dict(self),)
