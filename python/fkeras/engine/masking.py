"""Keras masks attached to tensors: `get_keras_mask(x)` / `set_keras_mask(x, mask)`.

A mask (boolean, e.g. (batch, timesteps) from `Masking` or `Embedding(mask_zero=True)`) travels
with the tensor it describes, as in Keras 3. A KerasTensor holds it in its `_keras_mask`
attribute. A NumPy array cannot take attributes, so eager masks live in a side table keyed by
the array's id, with a weak reference that both checks identity (ids are reused after an
array dies) and removes the entry when the array is collected.
"""

import weakref

from fkeras.engine.keras_tensor import KerasTensor

_EAGER = {}  # id(array) -> (weakref to the array, mask)


def get_keras_mask(x):
    """The mask attached to `x`, or None."""
    if isinstance(x, KerasTensor):
        return getattr(x, "_keras_mask", None)
    entry = _EAGER.get(id(x))
    if entry is None or entry[0]() is not x:
        return None
    return entry[1]


def set_keras_mask(x, mask):
    """Attaches `mask` to `x` (None removes it). Objects that cannot be tracked are skipped."""
    if isinstance(x, KerasTensor):
        x._keras_mask = mask
        return
    key = id(x)
    if mask is None:
        _EAGER.pop(key, None)
        return
    try:
        ref = weakref.ref(x, lambda _, key=key: _forget(key))
    except TypeError:
        return  # Python scalars and the like carry no mask
    _EAGER[key] = (ref, mask)


def _forget(key):
    entry = _EAGER.get(key)
    if entry is not None and entry[0]() is None:
        del _EAGER[key]
