"""save_model / load_model in Keras 3's `.keras` format.

A `.keras` file is a zip archive (entries stored, not compressed, as Keras writes them) of:
- `metadata.json`: {"keras_version": ..., "date_saved": ...} (here "fkeras <version>");
- `config.json`: {"module", "class_name", "config", "registered_name", "build_config",
  "compile_config"}: the model's architecture (Functional: layer entries with their inbound
  nodes; Sequential: the layer list), and the compile arguments (optimizer, loss, metrics...);
- `model.weights.h5`: the variables in Keras 3's `.weights.h5` layout (fkeras/saving/
  weights_h5.py), the optimizer's state under `optimizer/vars`.

Layer entries name the module "keras.layers" and inbound nodes use the Keras 2 list form
`[[layer, node_index, tensor_index, kwargs], ...]`, which Keras 3 still reads; Keras 3's own
node form (`{"args": [__keras_tensor__...], "kwargs": {...}}`) is read as well, and Keras 3
layer configs (DTypePolicy dicts, `quantization_config`, ...) are normalized on load. So a
`.keras` file of a Dense/Conv2D/BatchNormalization/LSTM model written by fkeras loads in
Keras 3, and one written by Keras 3 loads in fkeras. Files are written atomically.
"""

import datetime
import io
import json
import os
import zipfile

from fkeras.saving import file_io, weights_h5

CONFIG = "config.json"
METADATA = "metadata.json"
WEIGHTS = "model.weights.h5"


def save_model(model, filepath, overwrite=True, zipped=None, **kwargs):
    """Saves a model as a `.keras` file (architecture, compile config, weights, optimizer
    state), atomically.

    Args:
        model: a built Functional, Sequential or subclassed model (a subclassed one is
            described by its `get_config()` and rebuilt on load from its build shape;
            fkeras/models/subclass_config.py).
        filepath: str or pathlib.Path ending in `.keras`.
        overwrite: if False and the file exists, raise instead of replacing it.
        zipped: True or None: one `.keras` zip file; False: Keras 3's unzipped layout, a
            directory (whose name must not end in `.keras`) holding the same three files.

    Example:
    ```python
    model.save("model.keras")
    restored = fkeras.models.load_model("model.keras")
    ```
    """
    include_optimizer = kwargs.pop("include_optimizer", True)
    if kwargs.pop("save_format", None):
        raise ValueError("The `save_format` argument is deprecated in Keras 3. Please remove "
                         "this argument and pass a file path with a `.keras` extension.")
    if kwargs:
        raise ValueError(f"The following argument(s) are not supported: {list(kwargs)}")
    filepath = os.fspath(filepath)
    from fkeras.saving import legacy_h5

    if legacy_h5.is_legacy_h5_path(filepath):
        return legacy_h5.save_model(model, filepath, overwrite, include_optimizer)
    if zipped is False:
        return _save_model_dir(model, filepath, overwrite, include_optimizer)
    if not filepath.endswith(".keras"):
        raise ValueError(
            "Invalid filepath extension for saving. Please add a `.keras` extension for the "
            "native Keras format, or `.h5` for the legacy HDF5 format (`save_weights()` "
            f"takes a `.weights.h5` path for the weights only). Received: "
            f"filepath={filepath}."
        )
    if os.path.exists(filepath) and not overwrite:
        raise ValueError(f"File {filepath} exists and overwrite=False.")
    config, metadata, weights, assets = _members(model, include_optimizer)
    file_io.atomic_write(filepath,
                         lambda tmp: write_archive(tmp, config, metadata, weights, assets))


def _members(model, include_optimizer):
    config = model_config(model, include_optimizer)
    weights = _weights_bytes(model, include_optimizer)
    metadata = {"keras_version": _version(),
                "date_saved": datetime.datetime.now().strftime("%Y-%m-%d@%H:%M:%S")}
    from fkeras.saving import assets_io

    return config, metadata, weights, assets_io.collect_assets(model)


def _save_model_dir(model, dirpath, overwrite, include_optimizer):
    """Keras 3's `zipped=False`: the archive's three members as the files of a directory."""
    if dirpath.endswith(".keras"):
        raise ValueError("When using `zipped=False`, the `filepath` argument should not end "
                         f"in `.keras`. Received: filepath={dirpath}")
    if os.path.exists(dirpath) and not overwrite:
        raise ValueError(f"File {dirpath} exists and overwrite=False.")
    if os.path.exists(dirpath) and not os.path.isdir(dirpath):
        raise ValueError(f"`zipped=False` saves a directory, but filepath={dirpath} is a file.")
    config, metadata, weights, assets = _members(model, include_optimizer)
    file_io.atomic_write_dir(dirpath, {METADATA: json.dumps(metadata).encode(),
                                       CONFIG: json.dumps(config).encode(), WEIGHTS: weights,
                                       **assets})


def write_archive(path, config, metadata, weights, assets=None):
    """The zip archive itself (one place, so tests can interrupt it); `assets` maps
    `assets/...` member names to bytes."""
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(METADATA, json.dumps(metadata))
        zf.writestr(CONFIG, json.dumps(config))
        zf.writestr(WEIGHTS, weights)
        for name, data in (assets or {}).items():
            zf.writestr(name, data)


def _version():
    from fkeras import _version

    return f"fkeras {_version.__version__}"


def _weights_bytes(model, include_optimizer):
    buffer = io.BytesIO()
    with weights_h5._h5py().File(buffer, "w") as f:
        weights_h5.write_weights(model, f, include_optimizer)
    return buffer.getvalue()


def load_model(filepath, custom_objects=None, compile=True, safe_mode=None):
    """Loads a model saved with `model.save()` (fkeras or Keras 3, `.keras`).

    Args:
        filepath: path to a `.keras` file, or to a directory saved with `zipped=False`.
        custom_objects: dict of custom classes/functions by name.
        compile: compile the model with the saved compile config (and restore the
            optimizer's state) when there is one.
        safe_mode: True refuses Python bytecode (a `Lambda` holding a `lambda`); False
            allows it, for files you trust. None (the default) means True unless
            `fkeras.config.enable_unsafe_deserialization()` was called; an explicit True
            refuses bytecode even then. Names in the file resolve only to fkeras built-ins
            and custom/registered objects whatever the mode (docs/saving_security.md).

    Returns:
        The model, with its weights (and, when compiled, its optimizer state).

    Raises:
        ValueError: for a missing, malformed or hostile file (unknown classes, functions
            outside the allow-list, members larger than the model can need, weights whose
            shapes or dtypes do not match); no variable is changed then.
    """
    filepath = os.fspath(filepath)
    from fkeras.saving import legacy_h5

    if legacy_h5.is_legacy_h5_path(filepath):
        return legacy_h5.load_model(filepath, custom_objects, compile)
    from fkeras.saving import archive_io

    if os.path.isdir(filepath) and os.path.isfile(os.path.join(filepath, CONFIG)):
        archive = archive_io.DirectoryArchive(filepath, (CONFIG, METADATA, WEIGHTS))
        return _load_archive(archive, filepath, custom_objects, compile, safe_mode)
    if not filepath.endswith(".keras"):
        raise ValueError(
            f"File format not supported: filepath={filepath}. Keras 3 only supports V3 "
            "`.keras` files (fkeras loads `.keras` files; use `load_weights()` for "
            "`.weights.h5` files)."
        )
    if not os.path.exists(filepath):
        raise ValueError(f"File not found: filepath={filepath}. Please ensure the file is an "
                         "accessible `.keras` zip file.")
    if not zipfile.is_zipfile(filepath):
        raise ValueError(f"File format not supported: filepath={filepath}. The file is not a "
                         "`.keras` zip archive.")
    return _load_archive(archive_io.open_archive(filepath), filepath, custom_objects, compile,
                         safe_mode)


def _load_archive(archive, filepath, custom_objects, compile, safe_mode):
    """The model of a checked archive (a zip, or the unzipped directory layout)."""
    from fkeras.saving import archive_io, object_registration, safe_resolve

    with archive as zf:
        if CONFIG not in zf.namelist():
            raise ValueError(f"Invalid `.keras` file: filepath={filepath} has no {CONFIG}.")
        if METADATA in zf.namelist():
            archive_io.read_member(zf, METADATA, archive_io.METADATA_LIMIT,
                                   archive_io.JSON_RATIO)
        config = _parse_json(archive_io.read_member(zf, CONFIG, archive_io.CONFIG_LIMIT,
                                                    archive_io.JSON_RATIO))
        with object_registration.CustomObjectScope(custom_objects), \
                safe_resolve.SafeModeScope(safe_mode):
            model = _model_from_file_config(config, custom_objects, compile)
        if WEIGHTS in zf.namelist():
            weights = archive_io.read_member(zf, WEIGHTS, archive_io.weights_limit(model))
            _read_weights_bytes(model, weights)
        from fkeras.saving import assets_io

        assets_io.load_assets(model, zf)
    return model


def _parse_json(data):
    try:
        config = json.loads(data)
    except (ValueError, RecursionError) as e:
        raise ValueError(f"Invalid `.keras` file: {CONFIG} is not valid JSON ({e}).") from None
    if not isinstance(config, dict):
        raise ValueError(f"Invalid `.keras` file: {CONFIG} must hold a JSON object.")
    return config


def _model_from_file_config(config, custom_objects, compile):
    from fkeras.saving.config_convert import model_from_file_config

    model = model_from_file_config(config, custom_objects)
    compile_config = config.get("compile_config")
    if compile and compile_config:
        if not isinstance(compile_config, dict):
            raise ValueError("Invalid `.keras` file: `compile_config` must be a JSON object, "
                             f"received {type(compile_config).__name__}.")
        compile_model_from_config(model, compile_config, custom_objects)
    return model


def compile_model_from_config(model, compile_config, custom_objects=None):
    """`model.compile_from_config(compile_config)` (a user override included, as Keras 3
    calls it) with `custom_objects` in scope."""
    from fkeras.saving.object_registration import CustomObjectScope

    with CustomObjectScope(custom_objects or {}):
        model.compile_from_config(compile_config)


def load_archive_weights(model, filepath, skip_mismatch=False):
    """Loads only the weights (and optimizer state) of a `.keras` file into `model`, as
    Keras 3's `model.load_weights("x.keras")`: the architecture in the file is not read."""
    from fkeras.saving import archive_io

    if not os.path.exists(filepath) or not zipfile.is_zipfile(filepath):
        raise ValueError(f"File not found or not a `.keras` zip archive: filepath={filepath}")
    with archive_io.open_archive(filepath) as zf:
        if WEIGHTS not in zf.namelist():
            raise ValueError(f"Invalid `.keras` file: filepath={filepath} has no {WEIGHTS}.")
        weights = archive_io.read_member(zf, WEIGHTS, archive_io.weights_limit(model))
    _read_weights_bytes(model, weights, skip_mismatch)


def _read_weights_bytes(model, weights, skip_mismatch=False):
    weights_h5.read_weights_from(model, io.BytesIO(weights), skip_mismatch,
                                 f"`.keras` member {WEIGHTS}")


def model_config(model, include_optimizer=True):
    """config.json's content for `model` (Keras 3 layout)."""
    from fkeras.saving.config_convert import keras3_model_config

    config = keras3_model_config(model)
    if include_optimizer and getattr(model, "compiled", False):
        from fkeras.saving.serialization_lib import serialize_keras_object

        # get_compile_config may be a user override returning objects (Keras 3 serializes)
        config["compile_config"] = serialize_keras_object(model.get_compile_config())
    return config


def _serialize_entry(obj, module):
    from fkeras import losses, metrics

    if obj is None or isinstance(obj, (str, int, float, bool)):
        return obj
    if isinstance(obj, dict):
        return {k: _serialize_entry(v, module) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_serialize_entry(v, module) for v in obj]
    if hasattr(obj, "get_config"):
        serialize = losses.serialize if module == "keras.losses" else metrics.serialize
        return serialize(obj)
    name = getattr(obj, "__name__", None)
    if name is None:
        raise ValueError(f"Cannot serialize {obj!r} in the compile config.")
    return {"module": module, "class_name": "function", "config": name,
            "registered_name": name}


def compile_config(model):
    """The model's compile arguments, serialized as Keras 3 writes them."""
    from fkeras import optimizers

    c = model._compile_config
    return {"optimizer": optimizers.serialize(model.optimizer),
            "loss": _serialize_entry(c["loss"], "keras.losses"),
            "loss_weights": c["loss_weights"],
            "metrics": _serialize_entry(c["metrics"], "keras.metrics"),
            "weighted_metrics": _serialize_entry(c["weighted_metrics"], "keras.metrics"),
            "run_eagerly": bool(c.get("run_eagerly", False)),
            "steps_per_execution": c.get("steps_per_execution", 1),
            "jit_compile": bool(c.get("jit_compile") is True)}


def _deserialize_entry(obj, kind, custom_objects):
    """A loss/metric entry: names stay names (resolved by compile through the built-in
    tables) unless a custom or registered object goes by them."""
    from fkeras import losses, metrics
    from fkeras.saving import object_registration

    if obj is None or isinstance(obj, (int, float, bool)):
        return obj
    if isinstance(obj, str):
        found = object_registration.find_custom(custom_objects, obj)
        return found if found is not None else obj
    if isinstance(obj, list):
        return [_deserialize_entry(v, kind, custom_objects) for v in obj]
    if not isinstance(obj, dict):
        raise ValueError(f"Invalid {kind} entry in the compile config: {obj!r}")
    if "class_name" not in obj:
        return {k: _deserialize_entry(v, kind, custom_objects) for k, v in obj.items()}
    if obj.get("class_name") == "function":
        name, registered = obj.get("config"), obj.get("registered_name")
        if not isinstance(name, str):
            raise ValueError(f"Invalid {kind} entry in the compile config: {obj!r}")
        found = object_registration.find_custom(
            custom_objects, registered if registered != "function" else None, name)
        if found is None and ">" not in name:
            found = object_registration.find_custom_suffix(custom_objects, name)
        return found if found is not None else _builtin_name(name, kind, obj)
    module = losses if kind == "loss" else metrics
    return module.deserialize(obj, custom_objects)


# Metric names compile() resolves from the loss and the output (not in the metric tables).
_COMPILE_METRIC_NAMES = ("accuracy", "acc", "crossentropy", "ce")


def _builtin_name(name, kind, entry):
    """`name` when it names a built-in loss/metric function, else Keras's TypeError."""
    from fkeras import losses, metrics

    if kind == "metric" and name in _COMPILE_METRIC_NAMES:
        return name
    try:
        (losses if kind == "loss" else metrics).get(name)
    except ValueError:
        raise TypeError(f"Could not locate function '{name}'. Make sure custom classes and "
                        "functions are decorated with "
                        "`@fkeras.saving.register_keras_serializable()`. Full object config: "
                        f"{entry}") from None
    return name


def compile_from_config(config, custom_objects=None):
    """compile() keyword arguments from a saved compile config."""
    from fkeras import optimizers

    optimizer = config.get("optimizer")
    if isinstance(optimizer, dict):
        optimizer = optimizers.deserialize(optimizer, custom_objects)
    out = {"optimizer": optimizer or "rmsprop",
           "loss": _deserialize_entry(config.get("loss"), "loss", custom_objects),
           "loss_weights": config.get("loss_weights"),
           "metrics": _deserialize_entry(config.get("metrics"), "metric", custom_objects),
           "weighted_metrics": _deserialize_entry(config.get("weighted_metrics"), "metric",
                                                  custom_objects)}
    for key in ("run_eagerly", "steps_per_execution", "jit_compile"):
        if key in config:
            out[key] = config[key]
    return out
