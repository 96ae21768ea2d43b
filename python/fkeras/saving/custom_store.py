"""Layers that override `save_own_variables` / `load_own_variables` (Keras 3's state-saving
hooks; the customizing-saving guide): their vars group holds whatever keys their
`save_own_variables` writes into the store, and loading hands those datasets back to their
`load_own_variables` as a dict of arrays, after every other layer's checks passed.

fkeras's own layers keep their fixed layouts (weights_h5.py); only a class defined outside
fkeras that overrides either hook goes through here.
"""

import numpy as np

from fkeras.engine.tracking import is_user_class

# A hostile file must not make loading allocate without bound: the arrays a custom store may
# read total at most this, or 16 times the layer's own variables when that is more.
_MIN_LIMIT = 256 * 2**20


def overrides(layer):
    """Whether `layer`'s class is user code overriding either state-saving hook."""
    from fkeras.layers.layer import Layer

    cls = type(layer)
    return is_user_class(cls) and (
        cls.save_own_variables is not Layer.save_own_variables
        or cls.load_own_variables is not Layer.load_own_variables)


def write(layer, group):
    """Runs `layer.save_own_variables(store)` and writes each entry as a dataset."""
    store = {}
    layer.save_own_variables(store)
    for key, value in store.items():
        if not isinstance(key, str) or not key or "/" in key or key in (".", ".."):
            raise ValueError(f"Layer '{layer.name}': `save_own_variables` wrote the key "
                             f"{key!r}; keys must be non-empty strings without '/'.")
        group.create_dataset(key, data=np.asarray(getattr(value, "numpy", lambda: value)()))


def plan(group, layer, link_check):
    """(layer, {key: dataset}) for the layer's group, each dataset checked (a hard link to a
    plain numeric Dataset, the total size bounded) but not read."""
    import h5py

    if group is None:
        return layer, {}
    own = sum(int(np.prod(v.shape, dtype=np.int64)) * np.dtype(v.dtype).itemsize
              for v in layer._trainable_weights + layer._non_trainable_weights)
    limit, total, out = max(_MIN_LIMIT, 16 * own), 0, {}
    for key in sorted(group.keys()):
        ds = link_check(group, key)
        if not isinstance(ds, h5py.Dataset) or ds.is_virtual or ds.external \
                or ds.dtype.kind not in "fiub":
            raise ValueError(f"Invalid H5 file: '{group.name}/{key}' is not a plain numeric "
                             "Dataset.")
        total += int(ds.size) * ds.dtype.itemsize
        if total > limit:
            raise ValueError(f"Invalid H5 file: the saved variables of layer '{layer.name}' "
                             f"exceed {limit} bytes.")
        out[key] = ds
    return layer, out


def load(layer, datasets):
    """Reads the checked datasets and calls `layer.load_own_variables(store)`."""
    store = {}
    for key, ds in datasets.items():
        try:
            store[key] = np.asarray(ds[()])
        except (TypeError, ValueError, OSError) as e:
            raise ValueError(f"Could not read the saved weight '{ds.name}': {e}") from None
    layer.load_own_variables(store)
