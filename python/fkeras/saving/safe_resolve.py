"""Resolving names read from a file, safely: safe mode and the allow-list.

A config names functions as `{"class_name": "function", "module": M, "config": NAME}` and
classes by `class_name` (plus `registered_name`). Nothing here imports a module named by a
file or takes an attribute of an arbitrary module: a name resolves only to
- an object passed in `custom_objects`, put in a `custom_object_scope`, or registered with
  `register_keras_serializable`; or
- a built-in of an fkeras modelling namespace (activations, ops, losses, metrics,
  initializers, regularizers, constraints, layers, optimizers, schedules), taken from that
  namespace's own table. `M` only selects the namespace: `keras.ops`, `keras.src.ops.nn`,
  `fkeras.ops.nn` all mean "ops"; any other module (`os`, `builtins.eval`, `pydoc`, a module
  on sys.path) resolves nothing.
Keras 3 does the opposite (imports any public `keras.*` path except a deny-list); see
docs/saving_security.md for why fkeras allow-lists.

Safe mode (bytecode lambdas refused) is: the `safe_mode` argument when it is a bool, else the
value set by the enclosing `load_model` (`SafeModeScope`), else the global setting
(`fkeras.config.enable_unsafe_deserialization()` turns it off).
"""

import inspect
import threading

from fkeras.engine import fast_path
from fkeras.saving import object_registration

_state = threading.local()  # .stack: safe_mode values of the enclosing SafeModeScopes

_PREFIXES = ("fkeras.", "keras.src.", "keras.")
# The first module component after the prefix -> the namespace it stands for.
_MODULE_NAMESPACE = {"activations": "activations", "ops": "ops", "losses": "losses",
                     "metrics": "metrics", "initializers": "initializers",
                     "regularizers": "regularizers", "constraints": "constraints",
                     "layers": "layers", "optimizers": "optimizers", "models": "models",
                     "applications": "applications"}
_OPS_EXCLUDED = {"apply"}  # dispatches any registered op by name: not a modelling function
_NOT_LOCATED = ("Could not locate {kind} '{name}'. Make sure custom classes and functions are "
                "decorated with `@fkeras.saving.register_keras_serializable()`. If they are "
                "already decorated, make sure they are all imported so that the decorator is "
                "run before trying to load them. Full object config: {config}")


class SafeModeScope:
    """Sets safe mode for the deserialization inside a `with` block (None: the global
    setting)."""

    def __init__(self, safe_mode=None):
        self.safe_mode = None if safe_mode is None else bool(safe_mode)

    def __enter__(self):
        if not hasattr(_state, "stack"):
            _state.stack = []
        _state.stack.append(self.safe_mode)
        return self

    def __exit__(self, *args):
        _state.stack.pop()


def in_safe_mode(safe_mode=None):
    """Whether bytecode must be refused: an explicit bool wins, then the enclosing scope,
    then the global setting."""
    if safe_mode is not None:
        return bool(safe_mode)
    for value in reversed(getattr(_state, "stack", [])):
        if value is not None:
            return value
    from fkeras import config

    return config.in_safe_mode()


def loading_in_safe_mode():
    """Whether a file is being loaded (inside a SafeModeScope) in safe mode: files outside
    the archive (a vocabulary path in a layer config) must not be read then."""
    if not getattr(_state, "stack", None):
        return False
    return in_safe_mode()


def namespace_of(module):
    """"ops" for "keras.ops" / "keras.src.ops.numpy" / "fkeras.ops.nn", ...; None for any
    module outside the modelling namespaces."""
    if not isinstance(module, str):
        return None
    for prefix in _PREFIXES:
        if module.startswith(prefix):
            parts = module[len(prefix):].split(".")
            if parts[0] == "optimizers" and "schedules" in parts:
                return "schedules"
            if parts[0] == "src" or parts[0] == "saving":
                return None
            return _MODULE_NAMESPACE.get(parts[0])
    return None


def _public_functions(module, excluded=()):
    return {name: obj for name, obj in vars(module).items()
            if not name.startswith("_") and name not in excluded
            and (inspect.isfunction(obj) or fast_path.is_function(obj))
            and obj.__module__.startswith("fkeras.")}


def builtin_table(namespace):
    """The built-in objects of one modelling namespace, by name (an allow-list)."""
    import fkeras
    from fkeras.optimizers import schedules

    if namespace == "activations":
        return dict(fkeras.activations._BY_NAME)
    if namespace == "ops":
        return _public_functions(fkeras.ops, _OPS_EXCLUDED)
    if namespace == "losses":
        return {**fkeras.losses.FUNCTIONS, **fkeras.losses.CLASSES}
    if namespace == "layers":
        return dict(fkeras.layers.LAYER_CLASSES)
    if namespace == "models":
        return {"Functional": fkeras.models.Functional, "Model": fkeras.models.Model,
                "Sequential": fkeras.models.Sequential}
    if namespace == "schedules":
        return dict(schedules.CLASSES)
    if namespace == "applications":  # the layers the application models define
        from fkeras.applications import convnext, inception_resnet_v2

        return {"CustomScaleLayer": inception_resnet_v2.CustomScaleLayer,
                "LayerScale": convnext.LayerScale, "StochasticDepth": convnext.StochasticDepth}
    module = {"metrics": fkeras.metrics, "initializers": fkeras.initializers,
              "regularizers": fkeras.regularizers, "constraints": fkeras.constraints,
              "optimizers": fkeras.optimizers}.get(namespace)
    if module is None:
        return {}
    table = {**getattr(module, "ALIASES", {}), **module.CLASSES}
    return {name: obj for name, obj in table.items() if callable(obj)}


def public_name(namespace, obj):
    """The name `obj` goes by in a built-in namespace (found by identity: an op's
    `__name__` may differ from its public name), else None."""
    table = builtin_table(namespace)
    name = getattr(obj, "__name__", None)
    if isinstance(name, str) and table.get(name) is obj:
        return name
    for key, value in table.items():
        if value is obj:
            return key
    return None


def check_registered_name(config, name, resolved):
    """A built-in must not carry a foreign `registered_name` (Keras 3 refuses it too)."""
    explicit = config.get("registered_name")
    if explicit and explicit not in (name, config.get("class_name")):
        raise ValueError(
            f"`registered_name={explicit!r}` was provided in the config, but '{resolved}' "
            "resolved to a Keras built-in and does not use registered names. Remove the "
            f"`registered_name` field from the config. Full object config: {config}")


def resolve_function(config, custom_objects=None, namespaces=("activations", "ops")):
    """The function named by `{"class_name": "function", "module": M, "config": NAME}`.

    Looks in the custom/registered objects, then in the built-ins of `namespaces` (the one
    `M` names, or each in turn for Keras 3's `module: "builtins"`).

    Raises:
        TypeError: when nothing allowed goes by that name (Keras 3's message).
    """
    name, module = config.get("config"), config.get("module")
    if not isinstance(name, str):
        raise TypeError(f"Expected a function name in 'config', received {name!r}. Full "
                        f"object config: {config}")
    registered = config.get("registered_name")
    found = object_registration.find_custom(
        custom_objects, registered if registered != "function" else None, name)
    if found is None and module == "builtins" and ">" not in name:
        found = object_registration.find_custom_suffix(custom_objects, name)
    if found is not None:
        return found
    if module in ("builtins", None):
        candidates = namespaces
    else:
        candidates = [n for n in (namespace_of(module),) if n in namespaces]
    for namespace in candidates:
        fn = builtin_table(namespace).get(name)
        if fn is not None and callable(fn):
            check_registered_name(config, name, f"{namespace}.{name}")
            return fn
    raise TypeError(_NOT_LOCATED.format(kind="function", name=name, config=config))


def resolve_class(config, custom_objects=None, namespaces=("layers",)):
    """The class named by a config entry's `registered_name` / `class_name`: a custom or
    registered object, else a built-in of `namespaces`.

    Raises:
        TypeError: when nothing allowed goes by that name.
    """
    name, registered = config.get("class_name"), config.get("registered_name")
    if not isinstance(name, str):
        raise TypeError(f"Expected a class name in 'class_name', received {name!r}. Full "
                        f"object config: {config}")
    found = object_registration.find_custom(custom_objects, registered, name)
    if found is None and registered is None:
        found = object_registration.find_custom_suffix(custom_objects, name)
    if found is not None:
        return found
    for namespace in namespaces:
        cls = builtin_table(namespace).get(name)
        if isinstance(cls, type):
            check_registered_name(config, name, f"{namespace}.{name}")
            return cls
    raise TypeError(_NOT_LOCATED.format(kind="class", name=name, config=config))
