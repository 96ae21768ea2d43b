"""keras.utils.Config: a dict of named values read and written as attributes, freezable."""

import copy
import difflib
import json

_OWN = ("_values", "_frozen")


class Config:
    """A dict-like container of named settings, also readable and writable as attributes.

    `freeze()` makes every later change raise; `as_dict()` copies the values out and
    `to_json()` serializes them.

    Example:
    ```python
    config = fkeras.utils.Config(learning_rate=0.1)
    config.seed = 1
    config["momentum"] = 0.9
    config.freeze()
    config.as_dict()   # {'learning_rate': 0.1, 'seed': 1, 'momentum': 0.9}
    ```
    """

    def __init__(self, **kwargs):
        object.__setattr__(self, "_values", dict(kwargs))
        object.__setattr__(self, "_frozen", False)

    @property
    def frozen(self):
        """True once `freeze()` was called (and not undone by `unfreeze()`)."""
        return self._frozen

    def freeze(self):
        """Refuses every later change (set, update, pop, delete)."""
        object.__setattr__(self, "_frozen", True)

    def unfreeze(self):
        """Allows changes again."""
        object.__setattr__(self, "_frozen", False)

    def _check_mutable(self):
        if self._frozen:
            raise ValueError("Cannot mutate attribute(s) because the config is frozen.")

    def as_dict(self):
        """A shallow copy of the values as a dict."""
        return copy.copy(self._values)

    def to_json(self):
        """The values as a JSON string."""
        return json.dumps(self._values)

    def keys(self):
        return self._values.keys()

    def values(self):
        return self._values.values()

    def items(self):
        return self._values.items()

    def get(self, keyname, value=None):
        return self._values.get(keyname, value)

    def pop(self, *args):
        self._check_mutable()
        return self._values.pop(*args)

    def update(self, *args, **kwargs):
        self._check_mutable()
        return self._values.update(*args, **kwargs)

    def __setattr__(self, name, value):
        if name in _OWN or hasattr(type(self), name):
            return object.__setattr__(self, name, value)
        self._check_mutable()
        self._values[name] = value

    def __getattr__(self, name):  # called only for names that are not real attributes
        values = object.__getattribute__(self, "_values")
        if name in values:
            return values[name]
        message = f"Unknown attribute: '{name}'."
        close = difflib.get_close_matches(name, list(values), n=1, cutoff=0.7)
        if close:
            message += f" Did you mean '{close[0]}'?"
        raise AttributeError(message)

    def __setitem__(self, key, value):
        self._check_mutable()
        self._values[key] = value

    def __getitem__(self, key):
        return self._values[key]

    def __delitem__(self, key):
        self._check_mutable()
        del self._values[key]

    def __contains__(self, key):
        return key in self._values

    def __iter__(self):
        return iter(sorted(self._values))

    def __len__(self):
        return len(self._values)

    def __repr__(self):
        return f"<Config {self._values}>"
