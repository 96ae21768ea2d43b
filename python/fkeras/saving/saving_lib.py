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
        model: a built Functional or Sequential model.
        filepath: str or pathlib.Path ending in `.keras`.
        overwrite: if False and the file exists, raise instead of replacing it.
        zipped: must be True or None (unzipped directories are not supported).

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
        raise NotImplementedError("fkeras saves zipped `.keras` files only (zipped=False is "
                                  "not supported).")
    if not filepath.endswith(".keras"):
        raise ValueError(
            "Invalid filepath extension for saving. Please add a `.keras` extension for the "
            "native Keras format, or `.h5` for the legacy HDF5 format (`save_weights()` "
            f"takes a `.weights.h5` path for the weights only). Received: "
            f"filepath={filepath}."
        )
    if os.path.exists(filepath) and not overwrite:
        raise ValueError(f"File {filepath} exists and overwrite=False.")
    config = model_config(model, include_optimizer)
    weights = _weights_bytes(model, include_optimizer)
    metadata = {"keras_version": _version(),
                "date_saved": datetime.datetime.now().strftime("%Y-%m-%d@%H:%M:%S")}
    file_io.atomic_write(filepath, lambda tmp: write_archive(tmp, config, metadata, weights))


def write_archive(path, config, metadata, weights):
    """The zip archive itself (one place, so tests can interrupt it)."""
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(METADATA, json.dumps(metadata))
        zf.writestr(CONFIG, json.dumps(config))
        zf.writestr(WEIGHTS, weights)


def _version():
    from fkeras import _version

    return f"fkeras {_version.__version__}"


def _weights_bytes(model, include_optimizer):
    buffer = io.BytesIO()
    with weights_h5._h5py().File(buffer, "w") as f:
        weights_h5.write_weights(model, f, include_optimizer)
    return buffer.getvalue()


def load_model(filepath, custom_objects=None, compile=True, safe_mode=True):
    """Loads a model saved with `model.save()` (fkeras or Keras 3, `.keras`).

    Args:
        filepath: path to a `.keras` file.
        custom_objects: dict of custom classes/functions by name.
        compile: compile the model with the saved compile config (and restore the
            optimizer's state) when there is one.
        safe_mode: accepted for Keras compatibility (fkeras never deserializes lambdas'
            bytecode).

    Returns:
        The model, with its weights (and, when compiled, its optimizer state).
    """
    filepath = os.fspath(filepath)
    from fkeras.saving import legacy_h5

    if legacy_h5.is_legacy_h5_path(filepath):
        return legacy_h5.load_model(filepath, custom_objects, compile)
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
    with zipfile.ZipFile(filepath, "r") as zf:
        config = json.loads(zf.read(CONFIG))
        weights = zf.read(WEIGHTS) if WEIGHTS in zf.namelist() else None
    from fkeras.saving.config_convert import model_from_config

    model = model_from_config(config, custom_objects)
    compile_config = config.get("compile_config")
    if compile and compile_config:
        model.compile(**compile_from_config(compile_config, custom_objects))
        if model.built:
            from fkeras.trainers.step_state import get_state

            model.optimizer.build(get_state(model).variables)
    if weights is not None:
        with weights_h5._h5py().File(io.BytesIO(weights), "r") as f:
            weights_h5.read_weights(model, f)
    return model


def model_config(model, include_optimizer=True):
    """config.json's content for `model` (Keras 3 layout)."""
    from fkeras.saving.config_convert import keras3_model_config

    config = keras3_model_config(model)
    if include_optimizer and getattr(model, "compiled", False):
        config["compile_config"] = compile_config(model)
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
    from fkeras import losses, metrics

    if obj is None or isinstance(obj, (int, float, bool)):
        return obj
    if isinstance(obj, str):
        found = (custom_objects or {}).get(obj)
        return found if found is not None else obj
    if isinstance(obj, list):
        return [_deserialize_entry(v, kind, custom_objects) for v in obj]
    if isinstance(obj, dict) and "class_name" not in obj:
        return {k: _deserialize_entry(v, kind, custom_objects) for k, v in obj.items()}
    if obj.get("class_name") == "function":
        name = obj.get("config")
        found = (custom_objects or {}).get(name) or (custom_objects or {}).get(
            obj.get("registered_name"))
        return found if found is not None else name
    module = losses if kind == "loss" else metrics
    return module.deserialize(obj, custom_objects)


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
