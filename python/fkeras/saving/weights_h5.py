"""save_weights / load_weights in Keras 3's `.weights.h5` layout (h5py, imported lazily).

The file is laid out by object path, as Keras 3's saving_lib writes it:
- `vars` (attribute `name` = the model's name): the model's own variables (usually none);
- `layers/<snake_case class name>[_<i>]/vars/<j>`: each layer of a Functional/Sequential
  model, numbered by class in `model.layers` order (`dense`, `dense_1`, ...), its own
  variables in order (trainable first, then non-trainable), the user's layer name in the
  group's `name` attribute; sub-layers held as attributes go under `<layer path>/<attribute>`
  and nested models under `<path>/layers/...`;
- recurrent layers (LSTM, GRU, SimpleRNN) keep their variables in `<path>/cell/vars`, as
  Keras 3's RNN layers hold them in their `cell` sub-layer (`<path>/vars` stays empty);
  files with them in `<path>/vars` (fkeras before this layout) load too;
- `optimizer/vars/<j>`: the optimizer's variables in Keras 3's order, when it is built.
So weights saved by Keras 3 load into the same architecture built with fkeras, and back.
"""

import os
import warnings

import numpy as np


def _h5py():
    try:
        import h5py
    except ImportError as e:
        raise ImportError(
            'Saving and loading weights needs h5py: pip install h5py (or pip install '
            '"fkeras[h5]").'
        ) from e
    return h5py


def _snake(name):
    from fkeras.engine import naming

    return naming.to_snake_case(name)


def _is_layer(obj):
    from fkeras.layers.layer import Layer

    return isinstance(obj, Layer)


def _unique(name, used):
    if name in used:
        used[name] += 1
        return f"{name}_{used[name]}"
    used[name] = 0
    return name


def _attr_key(name):
    return f"~{name}" if name.startswith("_") else name


def _children(layer):
    """(relative path, child layer) pairs in Keras 3's walk order."""
    out = []
    graph_layers = getattr(layer, "_graph_layers", None)
    if graph_layers is not None:
        used = {}
        for child in list(graph_layers):
            out.append((f"layers/{_unique(_snake(type(child).__name__), used)}", child))
        return out
    for attr in sorted(vars(layer), key=_attr_key):
        value = vars(layer)[attr]
        if attr.startswith("__") or attr in ("_layers", "_inbound_nodes", "_outbound_nodes"):
            continue
        if _is_layer(value):
            out.append((attr, value))
        elif isinstance(value, (list, tuple)) and value and all(_is_layer(v) for v in value):
            used = {}
            for v in value:
                out.append((f"{attr}/{_unique(_snake(type(v).__name__), used)}", v))
    return out


def walk(model):
    """(path, layer) for the model and every layer below it, each layer once."""
    seen, out = set(), []
    stack = [("", model)]
    while stack:
        path, layer = stack.pop()
        if id(layer) in seen:
            continue
        seen.add(id(layer))
        out.append((path, layer))
        kids = [(f"{path}/{rel}" if path else rel, child) for rel, child in _children(layer)]
        stack.extend(reversed(kids))
    return out


def _own_variables(layer):
    return list(layer._trainable_weights) + list(layer._non_trainable_weights)


def _cell_name(layer):
    """Keras 3's cell sub-layer name for a recurrent layer ("lstm_cell"), else None."""
    from fkeras.layers.rnn.base_rnn import RecurrentBase

    if isinstance(layer, RecurrentBase):
        return f"{_snake(type(layer).__name__)}_cell"
    return None


def _vars_key(path, layer):
    """Where the layer's own variables live in the file."""
    base = f"{path}/vars" if path else "vars"
    return f"{path}/cell/vars" if _cell_name(layer) and path else base


def save_weights(model, filepath, overwrite=True):
    filepath = os.fspath(filepath)
    if not filepath.endswith(".weights.h5"):
        raise ValueError(f"The filename must end in `.weights.h5`. Received: filepath={filepath}")
    if not overwrite and os.path.exists(filepath):
        raise ValueError(f"File {filepath} exists and overwrite=False.")
    with _h5py().File(filepath, "w") as f:
        write_weights(model, f)


def write_weights(model, f, include_optimizer=True):
    """Writes the model's (and its optimizer's) variables into an open h5py File."""
    if not model.built:
        raise ValueError("You are saving a model that has not yet been built. Try building the "
                         "model first by calling it on some data or by using `build()`.")
    for path, layer in walk(model):
        group = f.create_group(f"{path}/vars" if path else "vars")
        group.attrs["name"] = layer.name
        if _vars_key(path, layer) != group.name.lstrip("/"):
            group = f.create_group(_vars_key(path, layer))
            group.attrs["name"] = _cell_name(layer)
        for i, v in enumerate(_own_variables(layer)):
            group.create_dataset(str(i), data=v.numpy())
    optimizer = getattr(model, "optimizer", None) if include_optimizer else None
    if optimizer is not None and optimizer.built:
        group = f.create_group("optimizer/vars")
        group.attrs["name"] = optimizer.name
        for i, v in enumerate(optimizer.variables):
            group.create_dataset(str(i), data=v.numpy())


def load_weights(model, filepath, skip_mismatch=False):
    filepath = os.fspath(filepath)
    if not filepath.endswith(".weights.h5"):
        raise ValueError("fkeras loads weights from `.weights.h5` files (Keras 3 layout). "
                         f"Received: filepath={filepath}")
    with _h5py().File(filepath, "r") as f:
        read_weights(model, f, skip_mismatch)


def read_weights(model, f, skip_mismatch=False):
    """Loads the variables from an open h5py File; every layer is checked before any
    variable changes (unless skip_mismatch, which skips the mismatched layers)."""
    plan = []
    for path, layer in walk(model):
        variables = _own_variables(layer)
        key = _vars_key(path, layer)
        if key not in f:
            key = f"{path}/vars" if path else "vars"
        group = f[key] if key in f else None
        stored = [] if group is None else [group[str(i)][()] for i in range(len(group))]
        problem = _mismatch(layer, variables, stored)
        if problem:
            if not skip_mismatch:
                raise ValueError(problem)
            warnings.warn(f"Skipping loading weights for layer '{layer.name}': {problem}")
            continue
        plan.append((variables, stored))
    for variables, stored in plan:
        for v, value in zip(variables, stored):
            v.assign(value)
    optimizer = getattr(model, "optimizer", None)
    if optimizer is not None and optimizer.built and "optimizer/vars" in f:
        group = f["optimizer/vars"]
        optimizer.load_own_variables({k: group[k][()] for k in group})


def _mismatch(layer, variables, stored):
    if len(variables) != len(stored):
        return (f"Layer '{layer.name}' expected {len(variables)} variables, but received "
                f"{len(stored)} variables during loading. Expected: "
                f"{[v.name for v in variables]}")
    for v, value in zip(variables, stored):
        if tuple(v.shape) != tuple(np.shape(value)):
            return (f"The shape of the target variable '{v.path}' is {tuple(v.shape)}, but the "
                    f"saved weight has shape {tuple(np.shape(value))}.")
    return None
