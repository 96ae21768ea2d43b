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

import contextlib
import json
import os
import warnings

import numpy as np

from fkeras.saving import custom_store


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
    """(relative path, child layer) pairs in Keras 3's walk order: a Functional/Sequential
    model's layers; otherwise the attributes sorted by name (private ones last), a subclassed
    model's `layers` list among them, layers in lists/tuples/dicts named by class."""
    graph_layers = getattr(layer, "_graph_layers", None)
    if graph_layers is not None:
        used = {}
        return [(f"layers/{_unique(_snake(type(child).__name__), used)}", child)
                for child in list(graph_layers)]
    attrs = [(attr, value) for attr, value in vars(layer).items()
             if not attr.startswith("__") and attr not in ("_layers", "_inbound_nodes",
                                                           "_outbound_nodes")]
    if _is_subclassed_model(layer):  # Keras walks the `layers` property of a Model
        attrs.append(("layers", list(layer._layers)))
    out = []
    for attr, value in sorted(attrs, key=lambda item: _attr_key(item[0])):
        if _is_layer(value):
            out.append((attr, value))
        elif isinstance(value, (list, tuple, dict)):
            out.extend(_container_children(attr, value, set()))
    return out


def _container_children(path, container, seen):
    """Layers of a list/tuple/dict as `<path>/<snake class name>[_<i>]`, nested containers
    as `<path>/container[_<i>]` (Keras 3's names; a name is used even by a layer already
    saved elsewhere)."""
    if id(container) in seen or len(seen) > 1000:
        return []
    seen.add(id(container))
    used, out = {}, []
    for item in (container.values() if isinstance(container, dict) else container):
        if _is_layer(item):
            out.append((f"{path}/{_unique(_snake(type(item).__name__), used)}", item))
        elif isinstance(item, (list, tuple, dict)):
            out.extend(_container_children(f"{path}/{_unique('container', used)}", item,
                                           seen))
    return out


def _is_subclassed_model(layer):
    from fkeras.models.model import Model

    return isinstance(layer, Model) and getattr(layer, "_graph_layers", None) is None


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
        if custom_store.overrides(layer):
            custom_store.write(layer, group)
            continue
        if _named_shapes(layer) is not None:
            store = {}
            layer.save_own_variables(store)
            for key, value in store.items():
                group.create_dataset(key, data=np.asarray(value))
            continue
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
    if filepath.endswith(".keras"):  # Keras 3: the weights of a whole-model file
        from fkeras.saving import saving_lib

        return saving_lib.load_archive_weights(model, filepath, skip_mismatch)
    if not filepath.endswith(".weights.h5"):
        raise ValueError("fkeras loads weights from `.weights.h5` files (Keras 3 layout) or "
                         f"from `.keras` files. Received: filepath={filepath}")
    read_weights_from(model, filepath, skip_mismatch, filepath)


# A corrupt HDF5 file's structures (heaps, B-trees, link tables, addresses past its end)
# surface from deep inside h5py as RuntimeError, KeyError or OSError, an absurd declared size
# as OverflowError: one ValueError naming the file instead. read_weights assigns nothing
# before every dataset is read, so no variable has changed then.
_CORRUPT = (RuntimeError, KeyError, OSError, OverflowError)


@contextlib.contextmanager
def damage_as_value_error(what):
    """A corrupt file's h5py errors (and a JSON attribute that does not parse) raised inside
    as one ValueError starting with `what` (FileNotFoundError passes through)."""
    try:
        yield
    except FileNotFoundError:
        raise
    except (*_CORRUPT, json.JSONDecodeError) as e:
        raise ValueError(f"{what}: its HDF5 data is corrupt ({type(e).__name__}: {e}).") \
            from e


def read_weights_from(model, source, skip_mismatch, name):
    """read_weights from `source` (a path or a file object such as an in-memory `.keras`
    member), `name` in its errors: a file h5py cannot open, or whose HDF5 data is corrupt,
    raises a ValueError (a missing path: FileNotFoundError)."""
    try:
        f = _h5py().File(source, "r")
    except FileNotFoundError:
        raise
    except (OSError, OverflowError, RuntimeError) as e:
        raise ValueError(f"Invalid weights file {name}: not a readable HDF5 file ({e}).") \
            from None
    with f, damage_as_value_error(f"Invalid weights file {name}"):
        read_weights(model, f, skip_mismatch)


def nbytes(variable):
    """The bytes a variable's value takes."""
    return int(np.prod(variable.shape, dtype=np.int64)) * np.dtype(variable.dtype).itemsize


def read_weights(model, f, skip_mismatch=False):
    """Loads the variables from an open h5py File, all or nothing.

    Every dataset is checked against its variable first (links, external/virtual storage,
    count, shape, numeric dtype) without reading any data, so a dataset that declares more
    than the model holds is never read; then every value is read and converted; only then is
    any variable assigned. With skip_mismatch, mismatched layers are skipped with a warning.
    """
    plan, named_plan, custom_plan = [], [], []
    for path, layer in walk(model):
        if custom_store.overrides(layer):
            custom_plan.append(custom_store.plan(_vars_group(f, path, layer), layer,
                                                 _link_check))
            continue
        if _named_shapes(layer) is not None:
            named_plan.extend(_named_plan(f, path, layer))
            continue
        variables = _own_variables(layer)
        group = _vars_group(f, path, layer)
        datasets = _datasets(group, len(variables))
        problem = _mismatch(layer, variables, datasets)
        if problem:
            if not skip_mismatch:
                raise ValueError(problem)
            warnings.warn(f"Skipping loading weights for layer '{layer.name}': {problem}")
            continue
        plan.extend(zip(variables, datasets))
    optimizer_plan = _optimizer_plan(model, f)
    values = [(v, _read(ds, v)) for v, ds in plan + optimizer_plan]
    named_values = {}
    for layer, key, ds in named_plan:
        named_values.setdefault(id(layer), (layer, {}))[1][key] = _read_named(ds)
    for v, value in values[:len(plan)]:
        v.assign(value)
    for layer, store in named_values.values():
        layer.load_own_variables(store)
    for layer, datasets in custom_plan:
        custom_store.load(layer, datasets)
    if optimizer_plan:
        model.optimizer.load_own_variables(
            {str(i): value for i, (_, value) in enumerate(values[len(plan):])})


def _named_shapes(layer):
    """{key: shape} for a layer whose state is saved under named keys by its own
    `save_own_variables` (the lookup layers' "idf_weights", Keras 3's store keys), else None."""
    method = getattr(layer, "_fk_named_variable_shapes", None)
    return None if method is None else method()


def _named_plan(f, path, layer):
    """(layer, key, dataset) for the named datasets of a layer's vars group, each checked
    against the shape the layer expects before anything is read. A missing group or an empty
    one loads nothing (Keras writes none before the state exists)."""
    h5py = _h5py()
    expected = _named_shapes(layer)
    group = _vars_group(f, path, layer)
    if group is None or len(group) == 0:
        return []
    unknown = sorted(set(group.keys()) - set(expected))
    if unknown:
        raise ValueError(f"Layer '{layer.name}' expected the saved variables "
                         f"{sorted(expected)}, but the file holds {sorted(group.keys())}.")
    out = []
    for key in sorted(group.keys()):
        ds = _link_check(group, key)
        if not isinstance(ds, h5py.Dataset) or ds.is_virtual or ds.external:
            raise ValueError(f"Invalid H5 file: '{group.name}/{key}' is not a plain Dataset.")
        if tuple(ds.shape or ()) != tuple(expected[key]) or ds.dtype.kind not in "fiu":
            raise ValueError(f"Layer '{layer.name}': the saved variable '{key}' has shape "
                             f"{ds.shape} and dtype {ds.dtype}; expected shape "
                             f"{tuple(expected[key])} and a numeric dtype.")
        out.append((layer, key, ds))
    return out


def _read_named(ds):
    try:
        return np.asarray(ds[()], dtype=np.float32)
    except (TypeError, ValueError, OSError) as e:
        raise ValueError(f"Could not read the saved weight '{ds.name}': {e}") from None


def _vars_group(f, path, layer):
    group = _group(f, _vars_key(path, layer))
    if group is None:
        group = _group(f, f"{path}/vars" if path else "vars")
    return group


def _link_check(parent, name):
    """The object `parent[name]` after checking its link is a hard one (None if absent)."""
    h5py = _h5py()
    link = parent.get(name, getlink=True)
    if link is None:
        return None
    if isinstance(link, h5py.SoftLink):
        raise ValueError(f"Not allowed: H5 file with SoftLink at '{parent.name}/{name}'")
    if isinstance(link, h5py.ExternalLink):
        raise ValueError(f"Not allowed: H5 file with ExternalLink at '{parent.name}/{name}'")
    if not isinstance(link, h5py.HardLink):
        raise ValueError(f"Not allowed: H5 file with {type(link).__name__} at "
                         f"'{parent.name}/{name}'")
    return parent[name]


def _group(f, key):
    """The group at `key`, each link on the way checked; None when absent."""
    h5py = _h5py()
    node = f
    for part in key.split("/"):
        node = _link_check(node, part)
        if node is None:
            return None
        if not isinstance(node, h5py.Group):
            raise ValueError(f"Invalid H5 file, expected Group but received {type(node)} at "
                             f"'{node.name}'")
    return node


def _datasets(group, expected):
    """The datasets "0", "1", ... of a vars group, checked but not read. Returns [] for a
    missing group, or a list of the wrong length when the count differs (no dataset opened
    then)."""
    h5py = _h5py()
    if group is None:
        return []
    count = len(group)
    if count != expected:
        return [None] * count
    out = []
    for i in range(count):
        ds = _link_check(group, str(i))
        if not isinstance(ds, h5py.Dataset):
            raise ValueError(f"Invalid H5 file, expected Dataset, received {type(ds)} at "
                             f"'{group.name}/{i}'")
        if ds.is_virtual:
            raise ValueError(f"Not allowed: H5 file with virtual Dataset: '{ds.name}'")
        if ds.external:
            raise ValueError(f"Not allowed: H5 file with external Dataset: '{ds.name}'")
        out.append(ds)
    return out


def _optimizer_plan(model, f):
    """(variable, dataset) pairs for the optimizer's state; [] (with Keras's warning) when
    the counts differ, an error when a shape or dtype does not match."""
    optimizer = getattr(model, "optimizer", None)
    if optimizer is None or not optimizer.built:
        return []
    group = _group(f, "optimizer/vars")
    if group is None:
        return []
    variables = optimizer.variables
    datasets = _datasets(group, len(variables))
    if len(datasets) != len(variables):
        warnings.warn(f"Skipping variable loading for optimizer '{optimizer.name}', because it "
                      f"has {len(variables)} variables whereas the saved optimizer has "
                      f"{len(datasets)} variables.")
        return []
    for v, ds in zip(variables, datasets):
        problem = _value_mismatch(v, ds)
        if problem:
            raise ValueError(f"Optimizer '{optimizer.name}': {problem}")
    return list(zip(variables, datasets))


def _read(ds, variable):
    """The dataset's value as an array of the variable's dtype (checked before reading)."""
    try:
        return np.asarray(ds[()], dtype=variable.dtype)
    except (TypeError, ValueError, OSError) as e:
        raise ValueError(f"Could not read the saved weight '{ds.name}' for variable "
                         f"'{variable.path}': {e}") from None


def _value_mismatch(v, ds):
    shape = tuple(ds.shape) if ds.shape is not None else None
    if tuple(v.shape) != shape:
        return (f"The shape of the target variable '{v.path}' is {tuple(v.shape)}, but the "
                f"saved weight has shape {shape}.")
    dtype = ds.dtype
    if dtype.kind not in "fiub" or dtype.fields is not None or dtype.itemsize > 8:
        return (f"The saved weight for variable '{v.path}' has dtype {dtype}; expected a "
                f"numeric dtype (loading into {v.dtype}).")
    return None


def _mismatch(layer, variables, stored):
    if len(variables) != len(stored):
        return (f"Layer '{layer.name}' expected {len(variables)} variables, but received "
                f"{len(stored)} variables during loading. Expected: "
                f"{[v.name for v in variables]}")
    for v, ds in zip(variables, stored):
        problem = _value_mismatch(v, ds)
        if problem:
            return problem
    return None
