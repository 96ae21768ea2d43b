"""Keras 3 style serialization of small objects (initializers, regularizers, constraints,
activations): {"module", "class_name", "config", "registered_name"}."""


def serialize_object(obj, module):
    if obj is None:
        return None
    if isinstance(obj, str):
        return obj
    return {"module": module, "class_name": type(obj).__name__, "config": obj.get_config(),
            "registered_name": None}


def make_get(kind, base, aliases, classes, allow_callable=False):
    """Builds a `get(identifier)` resolving None, strings, config dicts and instances."""

    def get(identifier):
        if identifier is None:
            return None
        if isinstance(identifier, base):
            return identifier
        if isinstance(identifier, str):
            key = identifier if identifier in classes else identifier.lower()
            cls = aliases.get(key) or classes.get(identifier)
            if cls is None:
                raise ValueError(f"Could not interpret {kind} identifier: {identifier!r}")
            return cls()
        if isinstance(identifier, dict):
            name = identifier.get("class_name")
            cls = classes.get(name) or aliases.get(str(name).lower())
            if cls is None:
                raise ValueError(f"Could not interpret {kind} identifier: {identifier!r}")
            return cls.from_config(dict(identifier.get("config") or {}))
        if allow_callable and callable(identifier):
            return identifier
        raise ValueError(f"Could not interpret {kind} identifier: {identifier!r}")

    return get
