"""keras.utils.legacy: the Keras 2 (tf.keras) object serialization functions.

Keras 2 configs are `{"class_name": ..., "config": ...}` without the `module` and
`registered_name` keys of Keras 3; fkeras reads and writes that form through its own
serialization (the registry of custom objects applies; nothing is imported by name).
"""


def serialize_keras_object(instance):
    """The Keras 2 form of `instance`: None, a function's name, or
    `{"class_name": name, "config": instance.get_config()}` (nested objects in the same form).
    """
    from fkeras.saving.object_registration import get_registered_name

    if instance is None:
        return None
    if hasattr(instance, "get_config"):
        config = instance.get_config()
        serialized = {}
        for key, item in config.items():
            if isinstance(item, str):
                serialized[key] = item
            elif hasattr(item, "get_config"):
                serialized[key] = serialize_keras_object(item)
            else:
                serialized[key] = item
        return {"class_name": get_registered_name(type(instance)), "config": serialized}
    if hasattr(instance, "__name__"):
        return get_registered_name(instance)
    raise ValueError(f"Cannot serialize {instance!r} because it doesn't implement "
                     "`get_config()`.")


def deserialize_keras_object(identifier, module_objects=None, custom_objects=None,
                             printable_module_name="object"):
    """The object a Keras 2 config (or a name) describes.

    Args:
        identifier: None, a `{"class_name", "config"}` dict or a name.
        module_objects: a dict of the names this lookup may resolve (e.g. a module's classes).
        custom_objects: user classes and functions, looked up first.
        printable_module_name: the kind of object, for the error message.
    """
    from fkeras.saving.object_registration import get_registered_object

    if identifier is None:
        return None
    if isinstance(identifier, dict):
        if "class_name" not in identifier or "config" not in identifier:
            raise ValueError(f"Improper config format for {identifier}. Expecting python "
                             "dict contains `class_name` and `config` as keys")
        name = identifier["class_name"]
        cls = get_registered_object(name, custom_objects, module_objects)
        if cls is None:
            raise ValueError(f"Unknown {printable_module_name}: '{name}'. Please ensure you "
                             "are using a `keras.utils.custom_object_scope` and that this "
                             "object is included in the scope.")
        config = identifier["config"]
        if hasattr(cls, "from_config"):
            return cls.from_config(config)
        return cls(**config)
    if isinstance(identifier, str):
        obj = get_registered_object(identifier, custom_objects, module_objects)
        if obj is None:
            raise ValueError(f"Unknown {printable_module_name}: '{identifier}'. Please ensure "
                             "you are using a `keras.utils.custom_object_scope` and that this "
                             "object is included in the scope.")
        return obj
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret serialized {printable_module_name}: {identifier}")
