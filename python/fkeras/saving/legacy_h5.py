"""Whole models in the legacy HDF5 layout (`model.save("m.h5")`, `load_model("m.h5")`), as
tf_keras (Keras 2) and Keras 3's legacy writer lay them out, through h5py (imported lazily).

File layout:
- root attributes: `backend`, `keras_version`, `model_config` (JSON: {"class_name",
  "config"}: the model's architecture), `training_config` (JSON, when compiled: "loss",
  "metrics", "loss_weights", "weighted_metrics", ..., "optimizer_config": {"class_name",
  "config"});
- `model_weights`: attribute `layer_names` (every layer of `model.layers`, in order); one group
  per layer with attribute `weight_names` (`<layer>/<variable path>`, trainable weights first,
  then non-trainable) and a dataset per name; an empty `top_level_model_weights` group;
- `optimizer_weights` (when compiled and built): attribute `weight_names` and one dataset per
  optimizer variable, in Keras 3's order (iteration, learning rate, then the slots per variable).

Reading follows hard links only (a soft or external link, a virtual or external dataset, a
non-numeric dataset is refused, as in the `.weights.h5` reader), compares every dataset's
declared shape with its variable before reading any data (so a file cannot make fkeras read
more than the model holds), matches layers by name (then, for files whose names differ, by
order among the layers that have weights, as Keras does), assigns nothing until every shape
has been checked, and restores
the optimizer's state when its variable count matches (a warning otherwise, e.g. for tf_keras
files, whose optimizers keep other variables). Files are written atomically.
"""

import json
import os
import warnings

import numpy as np

from fkeras.saving import file_io, h5_probe, weights_h5
from fkeras.saving.weights_h5 import _h5py, _link_check

H5_EXTENSIONS = (".h5", ".hdf5")


def is_legacy_h5_path(filepath):
    """True for `.h5` / `.hdf5` paths (but not Keras 3's `.weights.h5`)."""
    path = os.fspath(filepath) if not hasattr(filepath, "read") else ""
    return path.endswith(H5_EXTENSIONS) and not path.endswith(".weights.h5")


def _version():
    from fkeras import _version

    return f"fkeras {_version.__version__}"


def _layer_weights(layer):
    return list(layer.trainable_weights) + list(layer.non_trainable_weights)


def _weight_names(prefix, variables):
    names, used = [], set()
    for i, v in enumerate(variables):
        name = f"{prefix}/{getattr(v, 'path', None) or v.name}"
        if name in used:
            name = f"{name}_{i}"
        used.add(name)
        names.append(name)
    return names


def _string_array(names):
    return np.array([n.encode("utf8") for n in names], dtype=object) if names else \
        np.array([], dtype=np.float64)


# ---- writing ----

def save_model(model, filepath, overwrite=True, include_optimizer=True):
    """Writes `model` (architecture, weights, compile config, optimizer state) as legacy HDF5.

    Args:
        model: a built Functional or Sequential model.
        filepath: a path ending in `.h5` or `.hdf5`.
        overwrite: if False and the file exists, raise instead of replacing it.
        include_optimizer: also write the compile config and the optimizer's variables.
    """
    filepath = os.fspath(filepath)
    if os.path.exists(filepath) and not overwrite:
        raise ValueError(f"File {filepath} exists and overwrite=False.")
    if not model.built:
        raise ValueError("You are saving a model that has not yet been built. Try building the "
                         "model first by calling it on some data or by using `build()`.")
    from fkeras.saving import assets_io
    from fkeras.saving.config_convert import keras3_model_config
    from fkeras.saving.saving_lib import compile_config

    if assets_io.collect_assets(model):
        raise ValueError("This model has layer assets (an adapted lookup/text vocabulary), "
                         "which the legacy HDF5 format cannot hold: save it as a `.keras` "
                         f"file instead. Received: filepath={filepath}")
    config = keras3_model_config(model)
    model_config = {"class_name": config["class_name"], "config": config["config"]}
    training_config = None
    if include_optimizer and getattr(model, "compiled", False):
        c = compile_config(model)
        training_config = {k: v for k, v in c.items() if k != "optimizer"}
        opt = c["optimizer"]
        training_config["optimizer_config"] = {"class_name": opt["class_name"],
                                               "config": opt["config"]}

    def write(tmp):
        with _h5py().File(tmp, "w") as f:
            f.attrs["backend"] = "fkeras"
            f.attrs["keras_version"] = _version()
            f.attrs["model_config"] = json.dumps(model_config)
            if training_config is not None:
                f.attrs["training_config"] = json.dumps(training_config)
            _write_model_weights(model, f.create_group("model_weights"))
            optimizer = getattr(model, "optimizer", None)
            if training_config is not None and optimizer is not None and optimizer.built:
                _write_optimizer_weights(optimizer, f.create_group("optimizer_weights"))

    file_io.atomic_write(filepath, write)


def _write_model_weights(model, group):
    group.attrs["backend"] = "fkeras"
    group.attrs["keras_version"] = _version()
    layers = list(model.layers)
    input_layer = getattr(model, "_input_layer", None)  # a Sequential's input is no layer
    if input_layer is not None and input_layer not in layers:
        layers.insert(0, input_layer)
    group.attrs["layer_names"] = _string_array([layer.name for layer in layers])
    for layer in layers:
        variables = _layer_weights(layer)
        names = _weight_names(layer.name, variables)
        g = group.create_group(layer.name)
        g.attrs["weight_names"] = _string_array(names)
        for name, v in zip(names, variables):
            g.create_dataset(name, data=np.asarray(v.numpy()))
    group.create_group("top_level_model_weights").attrs["weight_names"] = _string_array([])


def _write_optimizer_weights(optimizer, group):
    variables = list(optimizer.variables)
    names = _weight_names(optimizer.name, variables)
    group.attrs["weight_names"] = _string_array(names)
    for name, v in zip(names, variables):
        group.create_dataset(name, data=np.asarray(v.numpy()))


# ---- reading ----

def _text(value):
    return value.decode("utf8") if isinstance(value, bytes) else str(value)


def _names(attr):
    return [_text(n) for n in attr]


def _node(group, path):
    """`group[path]` with every link on the way checked to be a hard link."""
    node = group
    for part in str(path).split("/"):
        if not part:
            continue
        if not isinstance(node, _h5py().Group):
            raise ValueError(f"Invalid H5 file: '{node.name}' is not a group (path {path!r}).")
        node = _link_check(node, part)
        if node is None:
            raise ValueError(f"Invalid H5 file: no entry {path!r} in '{group.name}'.")
    return node


def _dataset(group, path):
    """A numeric dataset stored in this file, checked but not read."""
    ds = _node(group, path)
    if not isinstance(ds, _h5py().Dataset):
        raise ValueError(f"Invalid H5 file: expected a dataset at '{ds.name}'.")
    if ds.is_virtual:
        raise ValueError(f"Not allowed: H5 file with virtual Dataset: '{ds.name}'")
    if ds.external:
        raise ValueError(f"Not allowed: H5 file with external Dataset: '{ds.name}'")
    if ds.dtype.kind not in "fiub":
        raise ValueError(f"Invalid H5 file: the dataset '{ds.name}' holds {ds.dtype}, not "
                         "numbers.")
    return ds


def _layer_datasets(group, name):
    g = _node(group, name)
    return [_dataset(g, w) for w in _names(g.attrs.get("weight_names", []))]


def _shape(ds):
    return tuple(ds.shape) if ds.shape is not None else None


def _read_all(plan):
    """Reads the checked datasets of a plan [(variables, datasets)] into arrays."""
    return [(variables, [np.asarray(ds[()]) for ds in datasets]) for variables, datasets in plan]


def load_model(filepath, custom_objects=None, compile=True):
    """Loads a legacy HDF5 model file written by fkeras, tf_keras or Keras 3.

    Args:
        filepath: a `.h5` / `.hdf5` path.
        custom_objects: dict of custom classes/functions by name.
        compile: compile the model with the saved training config (and restore the
            optimizer's state) when there is one.
    """
    filepath = os.fspath(filepath)
    if not os.path.exists(filepath):
        raise ValueError(f"File not found: filepath={filepath}.")
    h5_probe.check_readable(filepath)
    with _damage_as_value_error(filepath):
        return _load_model(filepath, custom_objects, compile)


def _damage_as_value_error(filepath):
    return weights_h5.damage_as_value_error(f"Invalid HDF5 model file {filepath}")


def _load_model(filepath, custom_objects, compile):
    from fkeras.saving.config_convert import model_from_file_config

    with _h5py().File(filepath, "r") as f:
        if "model_config" not in f.attrs:
            raise ValueError(f"No model config found in the file at {filepath}: it holds "
                             "weights only; build the model and call `load_weights`.")
        model = model_from_file_config(json.loads(_text(f.attrs["model_config"])),
                                       custom_objects)
        if "model_weights" in f:
            load_weights_from_group(model, _node(f, "model_weights"))
        training = f.attrs.get("training_config")
        if compile and training is not None:
            _compile(model, json.loads(_text(training)), custom_objects)
            if "optimizer_weights" in f:
                _load_optimizer_weights(model, _node(f, "optimizer_weights"))
    return model


def load_weights(model, filepath, by_name=False, skip_mismatch=False):
    """`model.load_weights` for a legacy `.h5` file: a weights-only file (layer groups at the
    root, as Keras's published application weights are) or a whole-model file (its
    `model_weights` group).

    Args:
        by_name: assign only to the layers whose names are in the file (Keras's `by_name`).
        skip_mismatch: with `by_name`, skip (with a warning) layers whose weight count or
            shapes differ instead of raising.
    """
    filepath = os.fspath(filepath)
    h5_probe.check_readable(filepath)
    with _damage_as_value_error(filepath), _h5py().File(filepath, "r") as f:
        group = f
        if "layer_names" not in f.attrs and "model_weights" in f:
            group = _node(f, "model_weights")
        if "layer_names" not in group.attrs:
            raise ValueError(f"The file at {filepath} is not a Keras HDF5 weights file (no "
                             "`layer_names` attribute).")
        if by_name:
            load_weights_by_name(model, group, skip_mismatch)
        else:
            load_weights_from_group(model, group)


def load_weights_by_name(model, group, skip_mismatch=False):
    """Assigns the stored weights to the model's layers of the same names; layers absent from
    the file keep their values. Every shape is checked before anything is assigned."""
    plan = []
    for layer in model.layers:
        variables = _layer_weights(layer)
        if not variables or layer.name not in group:
            continue
        values = _layer_datasets(group, layer.name)
        problem = None
        if len(values) != len(variables):
            problem = (f"Layer '{layer.name}' expected {len(variables)} weights, but the saved "
                       f"weights have {len(values)} elements.")
        else:
            for v, value in zip(variables, values):
                if tuple(v.shape) != _shape(value):
                    problem = (f"Shape mismatch in layer '{layer.name}' for weight '{v.name}': "
                               f"the weight has shape {tuple(v.shape)}, the saved value has "
                               f"shape {_shape(value)}.")
                    break
        if problem is None:
            plan.append((variables, values))
        elif skip_mismatch:
            warnings.warn(f"Skipping loading weights for layer '{layer.name}': {problem}",
                          stacklevel=3)
        else:
            raise ValueError(problem)
    for variables, values in _read_all(plan):
        for v, value in zip(variables, values):
            v.assign(value)


def load_weights_from_group(model, group):
    """Assigns the weights of a legacy `model_weights` group to `model`'s layers."""
    stored = {}
    for name in _names(group.attrs["layer_names"]):
        stored[name] = _layer_datasets(group, name)
    layers = [layer for layer in model.layers if _layer_weights(layer)]
    by_name = all(layer.name in stored for layer in layers)
    if not by_name:
        saved = [values for values in stored.values() if values]
        if len(saved) != len(layers):
            raise ValueError(f"Layer count mismatch when loading weights from file. Model "
                             f"expected {len(layers)} layers with weights, found {len(saved)} "
                             "saved layers with weights.")
    plan = []
    for i, layer in enumerate(layers):
        values = stored[layer.name] if by_name else saved[i]
        variables = _layer_weights(layer)
        if len(values) != len(variables):
            raise ValueError(f"Layer '{layer.name}' expected {len(variables)} weights, but the "
                             f"saved weights have {len(values)} elements.")
        for v, value in zip(variables, values):
            if tuple(v.shape) != _shape(value):
                raise ValueError(f"Shape mismatch in layer '{layer.name}' for weight "
                                 f"'{v.name}': the weight has shape {tuple(v.shape)}, the "
                                 f"saved value has shape {_shape(value)}.")
        plan.append((variables, values))
    for variables, values in _read_all(plan):
        for v, value in zip(variables, values):
            v.assign(value)


def _compile(model, training, custom_objects):
    from fkeras.saving.saving_lib import compile_from_config

    config = dict(training)
    opt = config.pop("optimizer_config", None)
    if isinstance(opt, dict) and "module" not in opt:
        opt = {"class_name": opt["class_name"], "config": opt.get("config") or {}}
    config["optimizer"] = opt
    model.compile(**compile_from_config(config, custom_objects))


def _load_optimizer_weights(model, group):
    from fkeras.trainers.step_state import get_state

    datasets = [_dataset(group, n) for n in _names(group.attrs["weight_names"])]
    optimizer = model.optimizer
    optimizer.build(get_state(model).variables)
    variables = optimizer.variables
    if len(datasets) != len(variables) or any(tuple(v.shape) != _shape(x)
                                              for v, x in zip(variables, datasets)):
        warnings.warn(f"The optimizer state in the file ({len(datasets)} variables) does not "
                      f"match optimizer '{optimizer.name}' ({len(variables)} variables): the "
                      "optimizer starts from a fresh state.", stacklevel=3)
        return
    values = [np.asarray(ds[()]) for ds in datasets]
    optimizer.load_own_variables({str(i): x for i, x in enumerate(values)})
