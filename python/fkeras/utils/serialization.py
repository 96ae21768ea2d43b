"""Keras 3 style serialization of small objects (initializers, regularizers, constraints,
activations): {"module", "class_name", "config", "registered_name"}."""


def serialize_object(obj, module):
    if obj is None:
        return None
    if isinstance(obj, str):
        return obj
    if not hasattr(obj, "get_config") and callable(obj):
        # A plain function (a user's regularizer, initializer or constraint): Keras 3's form,
        # by its registered name.
        from fkeras.saving.object_registration import get_registered_name

        fn = getattr(obj, "__wrapped__", obj) if getattr(obj, "_fk_user_wrapped", False) else obj
        return {"module": "builtins", "class_name": "function",
                "config": get_registered_name(fn), "registered_name": "function"}
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
            cls = aliases.get(key) or classes.get(identifier) or _custom(identifier)
            if not callable(cls):
                raise ValueError(f"Could not interpret {kind} identifier: {identifier!r}")
            return cls() if isinstance(cls, type) else cls
        if isinstance(identifier, dict) and identifier.get("class_name") == "function":
            if not allow_callable:
                raise ValueError(f"Could not interpret {kind} identifier: {identifier!r}")
            from fkeras.saving import safe_resolve

            try:  # registered or custom functions only (never imported from a module)
                return safe_resolve.resolve_function(identifier, None, ())
            except TypeError as e:
                raise ValueError(f"Could not interpret {kind} identifier: {e}") from None
        if isinstance(identifier, dict):
            name = identifier.get("class_name")
            cls = (classes.get(name) or aliases.get(str(name).lower())
                   or _custom(identifier.get("registered_name"), name))
            config = identifier.get("config") or {}
            if not (isinstance(cls, type) and hasattr(cls, "from_config")) or \
                    not isinstance(config, dict):
                raise ValueError(f"Could not interpret {kind} identifier: {identifier!r}")
            return cls.from_config(dict(config))
        if allow_callable and callable(identifier):
            return identifier
        raise ValueError(f"Could not interpret {kind} identifier: {identifier!r}")

    return get


def _custom(*names):
    """A custom or registered object (registry, then the active custom_object_scope)."""
    from fkeras.saving.object_registration import find_custom

    return find_custom(None, *names)
