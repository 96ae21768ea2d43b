"""Model configs between fkeras and Keras 3's config.json.

Writing: fkeras's Functional/Sequential get_config, wrapped as Keras 3 writes a model
({"module", "class_name", "config", "registered_name", "build_config"}), layer entries under
module "keras.layers", a single input/output written as one `[layer, node, tensor]` triple (as
Keras 3 does for a model built on one tensor, so it reloads as a one-tensor model). A
subclassed model's entry is its class, `get_config()` and `build_config`, as Keras 3 writes
it; on load it is rebuilt by `from_config` then `build_from_config`.

Reading (either writer): Keras 3 node dicts `{"args": [...], "kwargs": {...}}` become the
list form fkeras's from_config takes, DTypePolicy dicts become dtype names, and Keras 3 config
keys that fkeras layers do not take are dropped when they hold their neutral value (None,
False; e.g. `quantization_config`, `optional`, `ragged`); any other unknown key still raises.
"""

import copy
import inspect

KERAS_MODULES = {"Functional": "keras.src.models.functional",
                 "Sequential": "keras.src.models.sequential"}

# Arguments fkeras layers take (Keras 2's, or shared with a sibling class) that Keras 3's
# class rejects: left out of the file when they hold their neutral value, kept otherwise
# (Keras 3 then refuses the file rather than silently building another model).
NOT_IN_KERAS3 = {
    "BatchNormalization": {"fused": None, "virtual_batch_size": None, "adjustment": None},
    "SimpleRNN": {"use_cudnn": "auto", "implementation": 2},
}

# fkeras namespaces for Keras 3's serialized sub-objects (initializers, regularizers, ...).
SUB_OBJECT_NAMESPACES = {"keras.initializers": "initializers",
                         "keras.regularizers": "regularizers",
                         "keras.constraints": "constraints"}


def keras3_model_config(model):
    from fkeras.models.functional import Functional
    from fkeras.models.sequential import Sequential
    from fkeras.saving.object_registration import get_registered_name

    if not isinstance(model, Functional):
        return subclassed_model_entry(model)
    config = copy.deepcopy(model.get_config())
    config["layers"] = [_keras3_layer_entry(e) for e in config["layers"]]
    _mark_registered(config["layers"], model.layers)
    _add_user_build_configs(config["layers"], model.layers)
    if isinstance(model, Sequential):
        class_name = "Sequential"
    else:
        class_name = "Functional" if type(model) is Functional else type(model).__name__
        for key, structure in (("input_layers", model._inputs_structure),
                               ("output_layers", model._outputs_structure)):
            if not isinstance(structure, (list, tuple, dict)) and len(config[key]) == 1:
                config[key] = config[key][0]
    registered = get_registered_name(type(model))
    return {"module": KERAS_MODULES.get(class_name, type(model).__module__),
            "class_name": class_name, "config": config,
            "registered_name": (registered if ">" in registered else
                                class_name if class_name != "Sequential" else None),
            "build_config": {"input_shape": None}}


def subclassed_model_entry(model):
    """A subclassed model's entry, as Keras 3 writes one: its class's module (None for
    `__main__`) and registered name ("Package>Name", else the class name), `get_config()`,
    and the shape it was built with."""
    from fkeras.saving.object_registration import get_registered_name

    cls = type(model)
    config = model.get_config()
    if not isinstance(config, dict):
        raise TypeError(f"The `get_config()` method of {model} should return a dict. It "
                        f"returned: {config}")
    entry = {"module": None if cls.__module__ == "__main__" else cls.__module__,
             "class_name": cls.__name__, "config": copy.deepcopy(config),
             "registered_name": get_registered_name(cls)}
    build_config = model.get_build_config() if model.built else None
    if build_config is not None:
        entry["build_config"] = copy.deepcopy(build_config)
    return entry


def _mark_registered(entries, layers):
    """Custom layer classes registered with `register_keras_serializable` are written under
    their registered name ("Package>Name"), as Keras 3 writes them."""
    from fkeras.saving.object_registration import get_registered_name

    by_name = {layer.name: layer for layer in layers}
    for entry in entries:
        layer = by_name.get(entry.get("config", {}).get("name"))
        if layer is not None and entry.get("class_name") == type(layer).__name__:
            registered = get_registered_name(type(layer))
            if ">" in registered:
                entry["registered_name"] = registered


def _add_user_build_configs(entries, layers):
    """A built layer of a user class overriding `get_build_config` or `build_from_config` gets
    its `build_config` in its entry (Keras 3 writes one for every built layer), so loading
    hands it back to its `build_from_config`."""
    from fkeras.engine.tracking import is_user_class
    from fkeras.layers.layer import Layer

    by_name = {layer.name: layer for layer in layers}
    for entry in entries:
        layer = by_name.get(entry.get("config", {}).get("name"))
        cls = type(layer)
        if layer is None or not layer.built or not is_user_class(cls) or (
                cls.get_build_config is Layer.get_build_config
                and cls.build_from_config is Layer.build_from_config):
            continue
        build_config = layer.get_build_config()
        if build_config is not None:
            from fkeras.saving.serialization_lib import serialize_keras_object

            entry["build_config"] = serialize_keras_object(build_config)


def _keras3_layer_entry(entry):
    entry = dict(entry)
    from fkeras.layers import LAYER_CLASSES

    if str(entry.get("module", "")).startswith("keras.src.ops."):
        return entry  # a Keras operation node (KerasOpCall): written exactly as Keras reads it
    if entry.get("class_name") in LAYER_CLASSES:
        entry["module"] = "keras.layers"
    elif entry.get("class_name") in ("Functional", "Model", "Sequential"):
        entry["module"] = "keras"  # a nested model, as Keras 3 writes it
    config = entry.get("config", {})
    for key, neutral in NOT_IN_KERAS3.get(entry.get("class_name"), {}).items():
        if key in config and config[key] == neutral:
            del config[key]
    entry["registered_name"] = None
    if "layers" in entry.get("config", {}) and entry["class_name"] in ("Functional", "Model",
                                                                         "Sequential"):
        entry["config"]["layers"] = [_keras3_layer_entry(e) for e in entry["config"]["layers"]]
    return entry


# ---- reading ----
def model_from_file_config(config, custom_objects=None):
    """model_from_config for a config read from a file: a config nested past Python's
    recursion limit, or holding values of the wrong type where its structure is fixed (a
    missing key, a string where a list belongs), raises one ValueError instead of the
    RecursionError / KeyError / AttributeError / IndexError it would meet."""
    try:
        return model_from_config(config, custom_objects)
    except RecursionError:
        raise ValueError("Invalid model file: the model config is nested too deeply.") \
            from None
    except (KeyError, AttributeError, IndexError, OverflowError) as e:
        raise ValueError(f"Invalid model file: malformed model config "
                         f"({type(e).__name__}: {e}).") from e


def model_from_config(config, custom_objects=None):
    """A model from config.json's content (fkeras or Keras 3). The model class is a custom or
    registered one, or Functional/Model/Sequential; any other `class_name` is refused."""
    from fkeras import models
    from fkeras.saving import object_registration, safe_resolve

    if not isinstance(config, dict) or not isinstance(config.get("config") or {}, dict):
        raise ValueError("Invalid model config: expected a dict with 'class_name' and a "
                         f"'config' dict. Received: {_short(config)}")
    class_name = config.get("class_name")
    try:
        cls = safe_resolve.resolve_class(config, custom_objects, ("models",))
    except TypeError as e:
        raise ValueError(f"Unknown model class: '{class_name}'. fkeras loads Functional and "
                         "Sequential models, and model classes passed in `custom_objects` or "
                         f"registered with `register_keras_serializable`. ({e})") from None
    if not (isinstance(cls, type) and issubclass(cls, models.Model)):
        raise ValueError(f"Unknown model class: '{class_name}': it names {cls!r}, which is "
                         "not a Model subclass.")
    with object_registration.CustomObjectScope(custom_objects):
        inner = config.get("config") or {}
        if cls is models.Sequential:
            return models.Sequential.from_config(normalize_model_config(inner),
                                                 custom_objects)
        if cls in (models.Functional, models.Model):
            return models.Model.from_config(normalize_model_config(inner), custom_objects)
        if "layers" in inner:  # a Functional subclass's graph config
            inner = normalize_model_config(inner)
            return cls.from_config(inner, custom_objects) if _takes_custom(cls) else \
                cls.from_config(inner)
        return _subclassed_from_config(cls, config, custom_objects)


def _subclassed_from_config(cls, config, custom_objects):
    """A subclassed model: `cls.from_config(config)` (Keras's TypeError when the class
    cannot be rebuilt from it), then built from the entry's `build_config`."""
    inner = copy.deepcopy(config.get("config") or {})
    if isinstance(inner.get("dtype"), dict):
        inner["dtype"] = _dtype_name(inner["dtype"])
    try:
        model = cls.from_config(inner, custom_objects) if _takes_custom(cls) else \
            cls.from_config(inner)
    except TypeError as e:
        raise TypeError(
            f"{cls} could not be deserialized properly. Please ensure that components that "
            "are Python object instances (layers, models, etc.) returned by `get_config()` "
            "are explicitly deserialized in the model's `from_config()` method.\n\n"
            f"config={_short(config, 2000)}.\n\nException encountered: {e}") from None
    build_config = config.get("build_config")
    if build_config and not model.built:
        model.build_from_config(build_config)
    return model


def _short(value, limit=200):
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def _takes_custom(cls):
    try:
        return "custom_objects" in inspect.signature(cls.from_config).parameters
    except (TypeError, ValueError):
        return False


def normalize_model_config(config):
    config = copy.deepcopy(config)
    if isinstance(config.get("dtype"), dict):
        del config["dtype"]
    config["layers"] = [normalize_layer_entry(e) for e in config.get("layers", [])]
    for key in ("input_layers", "output_layers"):
        refs = config.get(key)
        if refs is not None:
            config[key] = _flat_refs(refs)
    config.pop("build_input_shape", None)
    return config


def _flat_refs(refs):
    """[[name, node, tensor], ...] from a triple, a list, or a dict of them."""
    if isinstance(refs, dict):
        refs = list(refs.values())
    if len(refs) == 3 and isinstance(refs[0], str):
        return [list(refs)]
    out = []
    for r in refs:
        out.extend(_flat_refs(r))
    return out


def normalize_layer_entry(entry):
    entry = dict(entry)
    config = dict(entry.get("config") or {})
    if entry.get("class_name") in ("Functional", "Sequential", "Model") and "layers" in config:
        config = normalize_model_config(config)
    else:
        config = _normalize_layer_config(entry.get("class_name"), config)
    entry["config"] = config
    if "inbound_nodes" in entry:
        entry["inbound_nodes"] = [_legacy_node(n) for n in entry["inbound_nodes"]]
    return entry


def _dtype_name(dtype):
    if isinstance(dtype, dict) and dtype.get("class_name") == "QuantizedDTypePolicy":
        inner = dtype.get("config") or {}  # Keras 3: {"mode": "int8", "source_name": ...}
        return f"{inner.get('mode')}_from_{inner.get('source_name') or 'float32'}"
    if isinstance(dtype, dict):
        inner = dtype.get("config") or {}
        return inner.get("name", "float32")
    return dtype


def _normalize_layer_config(class_name, config):
    from fkeras.layers import LAYER_CLASSES

    if "dtype" in config:
        config["dtype"] = _dtype_name(config["dtype"])
    for key, value in config.items():
        if isinstance(value, dict) and "class_name" in value:
            config[key] = _normalize_sub_object(class_name, value)
    cls = LAYER_CLASSES.get(class_name)
    if cls is None:
        return config
    accepted = _accepted_keys(cls)
    if accepted is None:
        return config
    for key in list(config):
        if key not in accepted and config[key] in (None, False):
            del config[key]
    return config


def _normalize_sub_object(layer_class, obj):
    """A function entry (an activation) resolved through the allow-list (a Lambda resolves
    its own); an initializer/regularizer/constraint entry with Keras 3-only neutral keys
    dropped (GlorotUniform's `input_axes`/`output_axes` in Keras 3.15, ...)."""
    from fkeras.saving import safe_resolve

    if obj.get("class_name") == "function" and layer_class != "Lambda":
        return safe_resolve.resolve_function(obj, None, ("activations", "ops"))
    namespace = SUB_OBJECT_NAMESPACES.get(obj.get("module"))
    config = obj.get("config")
    if namespace is None or not isinstance(config, dict):
        return obj
    cls = safe_resolve.builtin_table(namespace).get(str(obj.get("class_name")))
    if not isinstance(cls, type):
        return obj
    try:
        params = inspect.signature(cls.__init__).parameters
    except (TypeError, ValueError):
        return obj
    if any(p.kind == p.VAR_KEYWORD for p in params.values()):
        return obj
    obj = dict(obj)
    obj["config"] = {k: v for k, v in config.items() if k in params or v not in (None, False)}
    return obj


def _accepted_keys(cls):
    from fkeras.layers.layer import _BASE_KWARGS

    try:
        params = inspect.signature(cls.__init__).parameters
    except (TypeError, ValueError):
        return None
    keys = {name for name, p in params.items() if p.kind not in (p.VAR_POSITIONAL,
                                                                  p.VAR_KEYWORD)}
    return keys | set(_BASE_KWARGS) | {"name", "trainable", "dtype"}


def _tensor_ref(arg):
    if isinstance(arg, dict) and arg.get("class_name") == "__keras_tensor__":
        return list(arg["config"]["keras_history"])
    return None


def _legacy_node(node):
    """Keras 3's {"args": [...], "kwargs": {...}} node as [[layer, node, tensor, kwargs]...];
    a call with several tensor arguments, or tensors among its keyword arguments, stays in
    the dict form (fkeras's functional from_config reads both)."""
    from fkeras.models.node_config import node_refs

    if not isinstance(node, dict):
        return node
    args, kwargs = node.get("args") or [], dict(node.get("kwargs") or {})
    if len(args) > 1 or node_refs({"kwargs": kwargs}):
        return node
    first = args[0] if args else None
    tensors = first if isinstance(first, (list, tuple)) else [first]
    refs = [_tensor_ref(t) for t in tensors]
    if not refs or any(r is None for r in refs) or len(args) > 1:
        raise ValueError(f"Cannot load a layer call with non-tensor positional arguments: "
                         f"{node}")
    kwargs = {k: v for k, v in kwargs.items() if _tensor_ref(v) is None and v is not None}
    return [r + [kwargs] for r in refs]
