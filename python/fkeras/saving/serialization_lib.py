"""keras.saving.serialize_keras_object / deserialize_keras_object: any fkeras object (layer,
regularizer, initializer, constraint, loss, metric, optimizer, schedule, activation or op
function) to and from Keras 3's `{"module", "class_name", "config", "registered_name"}` dict.

Deserialization resolves names only through the allow-list of safe_resolve (custom and
registered objects, then fkeras's built-in tables): a module named in a config is never
imported.
"""

import numpy as np

from fkeras.saving import object_registration, safe_resolve

# Namespaces whose classes `deserialize_keras_object` may build, in lookup order.
CLASS_NAMESPACES = ("layers", "models", "regularizers", "initializers", "constraints", "losses",
                    "metrics", "optimizers", "schedules")
FUNCTION_NAMESPACES = ("activations", "ops", "losses", "metrics")


def _module_of(cls):
    """The Keras module a built-in class is written under ("keras.regularizers",
    "keras.optimizers.schedules"), from the namespace safe_resolve reads it back from."""
    ns = safe_resolve.namespace_of(cls.__module__)
    if ns is None:
        return cls.__module__
    return "keras.optimizers.schedules" if ns == "schedules" else f"keras.{ns}"


def serialize_keras_object(obj):
    """A JSON-compatible dict (or plain value) describing `obj` (keras.saving's format)."""
    if obj is None or isinstance(obj, (str, bool, int, float)):
        return obj
    if isinstance(obj, (np.generic,)):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, (list, tuple)):
        return [serialize_keras_object(x) for x in obj]
    if isinstance(obj, dict):
        return {k: serialize_keras_object(v) for k, v in obj.items()}
    registered = object_registration.get_registered_name(
        obj if isinstance(obj, type) or not hasattr(obj, "get_config") else type(obj))
    if hasattr(obj, "get_config") and not isinstance(obj, type):
        from fkeras.layers import Layer, serialize_layer

        if isinstance(obj, Layer):
            entry = _layer_entry(obj, serialize_layer(obj))
        else:
            entry = {"module": _module_of(type(obj)),
                     "class_name": type(obj).__name__,
                     "config": serialize_keras_object(obj.get_config())}
        entry["registered_name"] = registered if registered != entry["class_name"] else None
        return entry
    if callable(obj):
        fn = getattr(obj, "__wrapped__", obj) if getattr(obj, "_fk_user_wrapped", False) else obj
        for ns in FUNCTION_NAMESPACES:
            name = safe_resolve.public_name(ns, fn)
            if name is not None:
                return {"module": f"keras.{ns}", "class_name": "function", "config": name,
                        "registered_name": None}
        name = object_registration.get_registered_name(fn)
        return {"module": getattr(fn, "__module__", None), "class_name": "function",
                "config": name, "registered_name": name}
    raise TypeError(f"Cannot serialize {obj!r} of type {type(obj).__name__}: it has no "
                    "`get_config` and is not a function.")


def _layer_entry(layer, entry):
    """A layer's entry as Keras 3's `serialize_keras_object` writes it: a built-in under
    "keras.layers", a user class under its own module (None for `__main__`), and the
    shape it was built with (`build_config`), which deserializing builds from."""
    from fkeras.layers import LAYER_CLASSES

    cls = type(layer)
    if entry.get("module") == "fkeras.layers":
        if LAYER_CLASSES.get(entry.get("class_name")) is cls:
            entry["module"] = "keras.layers"
        elif not str(cls.__module__).startswith("fkeras."):
            entry["module"] = None if cls.__module__ == "__main__" else cls.__module__
    build_config = layer.get_build_config() if layer.built else None
    if build_config is not None and "build_config" not in entry:
        entry["build_config"] = serialize_keras_object(build_config)
    return entry


def build_user_layer_from_entry(layer, entry):
    """A deserialized layer whose class (user code) overrides `build_from_config`, built
    from its entry's `build_config` as Keras 3 builds every layer it deserializes (a
    Sequential's or a Functional model's layers included), so that override restores what it
    saved (the customizing-saving guide's `get_build_config` / `build_from_config`)."""
    from fkeras.engine.tracking import is_user_class
    from fkeras.layers.layer import Layer

    cls = type(layer)
    if isinstance(layer, Layer) and is_user_class(cls) and \
            cls.build_from_config is not Layer.build_from_config:
        return _build_from_entry(layer, entry)
    return layer


def _build_from_entry(layer, config):
    """Builds a deserialized layer from its entry's `build_config` (Keras 3), once the
    shapes are checked."""
    build_config = config.get("build_config")
    if not build_config or not isinstance(build_config, dict) or layer.built:
        return layer
    from fkeras.models.subclass_config import check_build_shapes, to_shapes

    for key in ("input_shape", "shapes_dict"):
        if key in build_config:
            check_build_shapes(build_config[key], key)
    if "input_shape" in build_config:
        build_config = dict(build_config, input_shape=to_shapes(build_config["input_shape"]))
    layer.build_from_config(build_config)
    return layer


def deserialize_keras_object(config, custom_objects=None, safe_mode=True, **kwargs):
    """The object described by `config` (the inverse of `serialize_keras_object`).

    Classes and functions resolve from `custom_objects`, the registered objects and
    fkeras's built-ins only.
    """
    if config is None or isinstance(config, (str, bool, int, float)):
        return config
    if isinstance(config, (list, tuple)):
        return [deserialize_keras_object(c, custom_objects, safe_mode) for c in config]
    if not isinstance(config, dict):
        raise TypeError(f"Cannot deserialize {config!r}: expected a config dict.")
    if "class_name" not in config:
        return {k: deserialize_keras_object(v, custom_objects, safe_mode)
                for k, v in config.items()}
    with safe_resolve.SafeModeScope(safe_mode):
        if config["class_name"] == "function":
            try:
                return safe_resolve.resolve_function(config, custom_objects,
                                                     FUNCTION_NAMESPACES)
            except TypeError as e:
                raise ValueError(str(e)) from None
        if config["class_name"] == "__lambda__":
            raise ValueError("Requested the deserialization of a Python lambda, which can run "
                             "arbitrary code; only a `Lambda` layer may hold one (with "
                             "`safe_mode=False`).")
        try:
            cls = safe_resolve.resolve_class(config, custom_objects, CLASS_NAMESPACES)
        except TypeError as e:
            raise ValueError(str(e)) from None
        from fkeras.layers import Layer, deserialize_layer

        if isinstance(cls, type) and issubclass(cls, Layer):
            return _build_from_entry(deserialize_layer(config, custom_objects), config)
        inner = config.get("config") or {}
        if not isinstance(inner, dict):
            raise TypeError(f"Expected a dict for the config of '{config['class_name']}', "
                            f"received {inner!r}")
        return cls.from_config(dict(inner))
