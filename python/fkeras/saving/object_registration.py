"""Custom objects for deserialization (keras.saving's registry): `register_keras_serializable`,
`custom_object_scope`, `get_registered_object`, `get_registered_name`.

A name in a file resolves to a custom class or function only through these tables; nothing is
ever imported by a name read from a file. Lookup order, as in Keras 3: the global registry
wins over an active `custom_object_scope`, which wins over a `custom_objects` argument.
"""

import threading

_GLOBAL_CUSTOM_OBJECTS = {}   # "Package>name" -> class or function
_GLOBAL_CUSTOM_NAMES = {}     # class or function -> "Package>name"
_scopes = threading.local()   # .stack: the dicts of the active custom_object_scopes


def _scope_stack():
    if not hasattr(_scopes, "stack"):
        _scopes.stack = []
    return _scopes.stack


class CustomObjectScope:
    """Makes custom classes and functions visible to deserialization inside a `with` block.

    Args:
        custom_objects: a dict mapping names (as they appear in a config) to classes or
            functions.

    Example:
    ```python
    with fkeras.saving.custom_object_scope({"MyLayer": MyLayer}):
        model = fkeras.models.load_model("model.keras")
    ```
    """

    def __init__(self, custom_objects):
        if custom_objects is not None and not isinstance(custom_objects, dict):
            raise TypeError("`custom_objects` must be a dict of name -> class or function. "
                            f"Received: custom_objects={custom_objects!r}")
        self.custom_objects = dict(custom_objects or {})

    def __enter__(self):
        _scope_stack().append(self.custom_objects)
        return self

    def __exit__(self, *args):
        _scope_stack().pop()


custom_object_scope = CustomObjectScope


def get_custom_objects():
    """The global registry: a dict from registered name ("Package>name") to the object.

    Returns:
        The live dict (editing it registers or removes objects, as in Keras).
    """
    return _GLOBAL_CUSTOM_OBJECTS


def register_keras_serializable(package="Custom", name=None):
    """Decorator registering a class or function under "package>name" for deserialization.

    Args:
        package: the package the object belongs to (the part before ">").
        name: the name within the package; defaults to the object's `__name__`.

    Returns:
        A decorator returning the object unchanged.

    Example:
    ```python
    @fkeras.saving.register_keras_serializable(package="MyPkg")
    def double(x):
        return x * 2
    ```
    """

    def decorator(arg):
        registered = f"{package}>{name if name is not None else arg.__name__}"
        if isinstance(arg, type) and not hasattr(arg, "get_config"):
            raise ValueError("Cannot register a class that does not have a get_config() "
                             "method.")
        _GLOBAL_CUSTOM_OBJECTS[registered] = arg
        _GLOBAL_CUSTOM_NAMES[arg] = registered
        return arg

    return decorator


def get_registered_name(obj):
    """The name `obj` is registered under ("Package>name"), else its `__name__`."""
    try:
        found = _GLOBAL_CUSTOM_NAMES.get(obj)
    except TypeError:  # unhashable
        found = None
    return found if found is not None else obj.__name__


def get_registered_object(name, custom_objects=None, module_objects=None):
    """The class or function registered or passed under `name`, else None.

    Args:
        name: the name as it appears in a config.
        custom_objects: an optional dict of name -> object (lowest priority).
        module_objects: an optional dict of built-in objects, looked up last.

    Returns:
        The object, or None when no table holds `name`.
    """
    if not isinstance(name, str):
        return None
    if name in _GLOBAL_CUSTOM_OBJECTS:
        return _GLOBAL_CUSTOM_OBJECTS[name]
    for scope in reversed(_scope_stack()):
        if name in scope:
            return scope[name]
    if custom_objects and name in custom_objects:
        return custom_objects[name]
    if module_objects and name in module_objects:
        return module_objects[name]
    return None


def find_custom(custom_objects, *names):
    """The first custom or registered object found under any of `names` (None skipped)."""
    for name in names:
        found = get_registered_object(name, custom_objects)
        if found is not None:
            return found
    return None


def find_custom_suffix(custom_objects, name):
    """A registered or custom object whose key is `name` or ends in ">name" (the form
    Keras 3 writes a registered function under `builtins`)."""
    found = get_registered_object(name, custom_objects)
    if found is not None or not isinstance(name, str):
        return found
    tables = [_GLOBAL_CUSTOM_OBJECTS, *reversed(_scope_stack()), custom_objects or {}]
    for table in tables:
        for key, obj in table.items():
            if isinstance(key, str) and key.endswith(">" + name):
                return obj
    return None
