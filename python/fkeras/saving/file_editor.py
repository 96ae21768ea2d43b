"""keras.saving.KerasFileEditor: inspect and edit the weights of a saved model file.

The file is read once through the bounded archive reader (archive_io) and the h5 checks
Keras applies (no soft/external links, no external or virtual datasets, bounded dataset
sizes); edits change the in-memory tree; `save` writes a `.weights.h5` atomically.
"""

import io
import math
import os

import numpy as np

from fkeras.saving import archive_io

MAX_DATASET_BYTES = 1 << 32   # 4 GiB per dataset, as Keras
MAX_TOTAL_BYTES = 1 << 34     # and 16 GiB in all
_CONFIG = "config.json"
_METADATA = "metadata.json"
_WEIGHTS = "model.weights.h5"


def _h5py():
    from fkeras.saving.weights_h5 import _h5py as load

    return load()


class _Budget:
    def __init__(self):
        self.total = 0

    def take(self, nbytes, where):
        self.total += nbytes
        if self.total > MAX_TOTAL_BYTES:
            raise ValueError(f"Not allowed: the H5 file holds more than "
                             f"{archive_io.format_size(MAX_TOTAL_BYTES)} of weights (at "
                             f"{where}); refusing to read it.")


def _extract(group, budget, metadata, path=""):
    """The nested dict of a weights group: sub-objects as dicts, weights as arrays; a group
    holding "vars" stands for its variables; empty groups are dropped."""
    h5py = _h5py()
    attrs = dict(group.attrs.items())
    if attrs:
        metadata[path] = attrs
    tree = {}
    for key in group.keys():
        where = f"{path}/{key}"
        link = group.get(key, getlink=True)
        if not isinstance(link, h5py.HardLink):
            raise ValueError(f"Not allowed: H5 file with {type(link).__name__} at '{where}'")
        value = group[key]
        if isinstance(value, h5py.Group):
            if len(value) == 0:
                continue
            if "vars" in value.keys():
                inner = value.get("vars", getlink=True)
                if not isinstance(inner, h5py.HardLink):
                    raise ValueError(f"Not allowed: H5 file with {type(inner).__name__} at "
                                     f"'{where}/vars'")
                if len(value["vars"]) == 0:
                    continue
                tree[key] = _extract(value["vars"], budget, metadata, where)
            else:
                tree[key] = _extract(value, budget, metadata, where)
            continue
        if not isinstance(value, h5py.Dataset):
            continue
        if value.external:
            raise ValueError(f"Not allowed: H5 file Dataset with external links at '{where}'")
        if value.is_virtual:
            raise ValueError(f"Not allowed: H5 file with virtual Dataset at '{where}'")
        if len(value.shape) > 64 or any(d < 0 for d in value.shape):
            raise ValueError(f"Malformed HDF5 dataset shape {value.shape} at '{where}'.")
        nbytes = math.prod(value.shape) * value.dtype.itemsize
        if nbytes > MAX_DATASET_BYTES:
            raise ValueError(f"HDF5 dataset too large to load safely ({nbytes} bytes; limit "
                             f"is {MAX_DATASET_BYTES}) at '{where}'.")
        budget.take(nbytes, where)
        tree[key] = value[()]
    return tree


def _read_h5(source):
    h5py = _h5py()
    metadata = {}
    with h5py.File(source, "r") as f:
        tree = _extract(f, _Budget(), metadata)
    return tree, metadata


def _count(tree, name):
    found = 1 if name in tree else 0
    return found + sum(_count(v, name) for v in tree.values() if isinstance(v, dict))


def _check_weights_arg(weights):
    if not isinstance(weights, dict):
        raise ValueError("Argument `weights` should be a dict where keys are weight names "
                         "(usually '0', '1', etc.) and values are NumPy arrays. "
                         f"Received: type(weights)={type(weights)}")


class KerasFileEditor:
    """Reads a `.keras` or `.weights.h5` file to list, compare and edit its weights.

    The weights form a tree: objects (layers, the optimizer, nested layers) are dicts, their
    variables arrays keyed "0", "1", ... (`weights_dict`). Objects are named by a leaf name
    when it is unique in the tree, or by a path "layers/dense".

    Args:
        filepath: a `.keras` archive or a `.weights.h5` file.

    Example:
    ```python
    editor = fkeras.saving.KerasFileEditor("model.keras")
    editor.summary()
    editor.compare(new_model)                 # {"status": "error", ...}
    editor.rename_object("dense_3", "dense")
    editor.delete_weight("dense", "1")
    editor.save("fixed.weights.h5")
    new_model.load_weights("fixed.weights.h5")
    ```
    """

    def __init__(self, filepath):
        self.filepath = os.fspath(filepath)
        self.config = self.metadata = None
        if self.filepath.endswith(".keras"):
            import json

            with archive_io.open_archive(self.filepath) as zf:
                names = zf.namelist()
                if _WEIGHTS not in names or _CONFIG not in names:
                    raise ValueError(f"Invalid `.keras` file: filepath={self.filepath} lacks "
                                     f"{_CONFIG} or {_WEIGHTS}.")
                self.config = json.loads(archive_io.read_member(
                    zf, _CONFIG, archive_io.CONFIG_LIMIT, archive_io.JSON_RATIO))
                if _METADATA in names:
                    self.metadata = json.loads(archive_io.read_member(
                        zf, _METADATA, archive_io.METADATA_LIMIT, archive_io.JSON_RATIO))
                data = archive_io.read_member(zf, _WEIGHTS, MAX_TOTAL_BYTES)
            self.weights_dict, self.object_metadata = _read_h5(io.BytesIO(data))
        elif self.filepath.endswith(".weights.h5"):
            self.weights_dict, self.object_metadata = _read_h5(self.filepath)
        else:
            raise ValueError("Invalid filename: expected a `.keras` `.weights.h5` extension. "
                             f"Received: filepath={self.filepath}")
        print(f"Keras model file '{self.filepath}'")
        if self.metadata is not None:
            print(f"Saved with Keras {self.metadata.get('keras_version')} - date: "
                  f"{self.metadata.get('date_saved')}")

    # ---------------------------------------------------------------- inspection
    def summary(self):
        """Prints the tree of objects and the shape and dtype of each weight."""
        def show(tree, depth):
            for key, value in tree.items():
                if isinstance(value, dict):
                    print(f"{'  ' * depth}{key}")
                    show(value, depth + 1)
                else:
                    print(f"{'  ' * depth}{key}: shape={value.shape}, dtype={value.dtype}")

        print(f"Weights structure of '{self.filepath}'")
        show(self.weights_dict, 0)

    def weights_summary(self):
        """Same as `summary()`."""
        self.summary()

    def compare(self, reference_model):
        """Checks that the file's weights fit `reference_model` (same objects, same shapes).

        Prints each difference. Returns `{"status": "success" or "error", "error_count": n,
        "match_count": m}`.
        """
        reference = _model_tree(reference_model)
        seen = set()

        def walk(target, ref, path, target_name, ref_name, errors, matches):
            # Counts as Keras 3.15 returns them: a nested object's walk starts from the
            # running totals and its result is added to them.
            for key, value in ref.items():
                where = f"{path}/{key}"
                if where in seen:
                    continue
                if key not in target:
                    errors += 1
                    seen.add(where)
                    kind = "Object" if isinstance(value, dict) else "Weight"
                    print(f"...{kind} {where} present in {ref_name}, missing from "
                          f"{target_name}")
                elif isinstance(value, dict):
                    more_errors, more_matches = walk(target[key], value, where, target_name,
                                                     ref_name, errors, matches)
                    errors += more_errors
                    matches += more_matches
                elif np.shape(target[key]) != np.shape(value):
                    errors += 1
                    seen.add(where)
                    print(f"...Weight shape mismatch for {where}\n    In {ref_name}: "
                          f"shape={np.shape(value)}\n    In {target_name}: "
                          f"shape={np.shape(target[key])}")
                else:
                    matches += 1
            return errors, matches

        errors, matches = walk(self.weights_dict, reference, "", "saved file",
                               "reference model", 0, 0)
        errors += walk(reference, self.weights_dict, "", "reference model", "saved file",
                       0, 0)[0]
        if errors == 0:
            print("Comparison successful: saved file is compatible with the reference model\n"
                  f"    Found {matches} matching weight{'' if matches == 1 else 's'}")
        else:
            print(f"Found {errors} error{'' if errors == 1 else 's'}: saved file is not "
                  "compatible with the reference model")
        return {"status": "success" if errors == 0 else "error", "error_count": errors,
                "match_count": matches}

    # ---------------------------------------------------------------- edits
    def _edit(self, fn, source_name, target_name=None):
        if target_name is not None and "/" in target_name:
            raise ValueError("Argument `target_name` should be a leaf name, not a full path "
                             f"name. Received: target_name='{target_name}'")
        if "/" in source_name:
            parts = source_name.split("/")
            node = self.weights_dict
            for part in parts[:-1]:
                if not isinstance(node.get(part), dict):
                    raise ValueError(f"Path '{source_name}' not found in model.")
                node = node[part]
            if parts[-1] not in node:
                raise ValueError(f"Path '{source_name}' not found in model.")
            fn(node, parts[-1], target_name)
            return
        found = _count(self.weights_dict, source_name)
        if found > 1:
            raise ValueError(f"Name '{source_name}' occurs more than once in the model; try "
                             "passing a complete path")
        if found == 0:
            raise ValueError(f"Source name '{source_name}' does not appear in the model. Use "
                             "`editor.weights_summary()` to list all objects.")

        def visit(tree):
            if source_name in tree:
                fn(tree, source_name, target_name)
                return True
            return any(visit(v) for v in list(tree.values()) if isinstance(v, dict))

        visit(self.weights_dict)

    def rename_object(self, object_name, new_name):
        """Renames the object `object_name` (a unique leaf name or a path) to `new_name`."""
        def rename(tree, source, target):
            tree[target] = tree.pop(source)

        self._edit(rename, object_name, new_name)

    def delete_object(self, object_name):
        """Removes the object `object_name` and all its weights."""
        self._edit(lambda tree, source, _: tree.pop(source), object_name)

    def add_object(self, object_path, weights):
        """Adds an object at `object_path` (its parent must exist) holding `weights`, a dict
        of weight names ("0", "1", ...) to arrays."""
        _check_weights_arg(weights)
        parts = object_path.split("/")
        node = self.weights_dict
        for part in parts[:-1]:
            if not isinstance(node.get(part), dict):
                raise ValueError(f"Path '{'/'.join(parts[:-1])}' not found in model.")
            node = node[part]
        node[parts[-1]] = {str(k): np.asarray(v) for k, v in weights.items()}

    def delete_weight(self, object_name, weight_name):
        """Removes the weight `weight_name` ("0", "1", ...) of the object `object_name`."""
        def delete(tree, source, _):
            if weight_name not in tree[source]:
                raise ValueError(f"Weight {weight_name} not found in object {object_name}. "
                                 f"Weights found: {list(tree[source].keys())}")
            tree[source].pop(weight_name)

        self._edit(delete, object_name)

    def add_weights(self, object_name, weights):
        """Adds (or replaces) weights of the object `object_name` from a dict of weight names
        to arrays."""
        _check_weights_arg(weights)
        self._edit(lambda tree, source, _: tree[source].update(
            {str(k): np.asarray(v) for k, v in weights.items()}), object_name)

    # ---------------------------------------------------------------- writing
    def save(self, filepath):
        """Writes the edited weights as a `.weights.h5` file (atomically), loadable with
        `model.load_weights`."""
        from fkeras.saving.file_io import atomic_write

        filepath = os.fspath(filepath)
        if not filepath.endswith(".weights.h5"):
            raise ValueError("Invalid `filepath` argument: expected a `.weights.h5` extension. "
                             f"Received: filepath={filepath}")
        h5py = _h5py()

        def write(tmp):
            with h5py.File(tmp, "w") as f:
                _write_tree(f, self.weights_dict, "")

        atomic_write(filepath, write)

    def resave_weights(self, filepath):
        """Same as `save(filepath)`."""
        self.save(filepath)


def _write_tree(f, tree, path):
    leaves = {k: v for k, v in tree.items() if not isinstance(v, dict)}
    for key, value in tree.items():
        if isinstance(value, dict) and value:
            _write_tree(f, value, f"{path}/{key}" if path else key)
    if leaves:
        group = f.require_group(f"{path}/vars" if path else "vars")
        for key, value in leaves.items():
            group.create_dataset(key, data=np.asarray(value))


def _model_tree(model):
    """The weights tree of `model` (its variables as the file would hold them), built by
    writing them to an in-memory h5 and reading that back."""
    from fkeras.saving.weights_h5 import write_weights

    h5py = _h5py()
    buffer = io.BytesIO()
    config = h5py.get_config()
    previous = config.track_order
    config.track_order = True  # keys in the model's walk order, as Keras's spec lists them
    try:
        with h5py.File(buffer, "w") as f:
            write_weights(model, f, include_optimizer=False)
        buffer.seek(0)
        return _read_h5(buffer)[0]
    finally:
        config.track_order = previous
