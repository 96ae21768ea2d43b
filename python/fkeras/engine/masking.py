"""Keras masks attached to tensors: `get_keras_mask(x)` / `set_keras_mask(x, mask)`.

A mask (boolean, e.g. (batch, timesteps) from `Masking` or `Embedding(mask_zero=True)`) travels
with the tensor it describes, as in Keras 3. A KerasTensor or an eager Tensor holds it in its
`_keras_mask` attribute (Keras 3's name). A NumPy array cannot take attributes, so eager masks live in a side table keyed by
the array's id, with a weak reference that both checks identity (ids are reused after an
array dies) and removes the entry when the array is collected.
"""

import weakref

import numpy as np

from fkeras.backend import devices as _devices
from fkeras.engine.keras_tensor import KerasTensor
from fkeras.engine.tensor import Tensor

_EAGER = {}  # id(array) -> (weakref to the array, mask)


def get_keras_mask(x):
    """The mask attached to `x`, or None."""
    if isinstance(x, (KerasTensor, Tensor)):
        return getattr(x, "_keras_mask", None)
    entry = _EAGER.get(id(x))
    if entry is None or entry[0]() is not x:
        return None
    return entry[1]


def set_keras_mask(x, mask):
    """Attaches `mask` to `x` (None removes it). Objects that cannot be tracked are skipped."""
    if isinstance(x, (KerasTensor, Tensor)):
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


def apply_mask(sample_weight, mask, reduction):
    """Keras 3's rule for a Keras mask on y_pred: masked entries weigh 0; for the mean
    reductions the others weigh total / valid, so the mean runs over the valid entries only.
    Returns the new sample weights (None without a mask and without weights)."""
    if mask is None:
        return sample_weight
    m = _devices.host_array(mask, dtype=np.float64)
    if reduction in ("mean", "sum_over_batch_size"):
        m = m * (m.size / (m.sum() + 1e-7))  # Keras: total / (valid + epsilon)
    if sample_weight is None:
        return m
    sw = np.asarray(sample_weight, dtype=np.float64)
    while sw.ndim < m.ndim:
        sw = sw[..., None]
    while m.ndim < sw.ndim:
        m = m[..., None]
    return sw * m
