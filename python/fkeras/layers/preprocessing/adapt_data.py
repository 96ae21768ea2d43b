"""The batches an `adapt()` call reads: Keras 3's accepted data kinds, one loop for all.

`adapt(data)` takes a NumPy array (or anything array-like: a Tensor, a nested list of
numbers) as one dataset, or a batched dataset: a `PyDataset` (its `x` part when batches are
`(x, y)` tuples), a list of arrays or any iterable yielding arrays (generators included).
`batch_size` splits an array into batches; `steps` bounds how many batches are read.
"""

import numpy as np

from fkeras.backend import devices as _devices
from fkeras.utils.py_dataset import PyDataset


def _x_part(batch):
    """Keras 3 adapts on the inputs of an `(x, y[, sample_weight])` batch."""
    return batch[0] if isinstance(batch, tuple) else batch


def _is_array_like(data):
    if isinstance(data, np.ndarray) or hasattr(data, "__array__"):
        return True
    if isinstance(data, (list, tuple)):
        # A (nested) list of numbers or strings is one array; a list of arrays or of
        # (x, y) tuples is batches.
        return bool(data) and not any(isinstance(d, tuple) or hasattr(d, "__array__")
                                      for d in data)
    return isinstance(data, (int, float, str, bytes, np.generic))


def iter_batches(data, layer_name, batch_size=None, steps=None):
    """Yields the NumPy batches of `data` (see the module docstring)."""
    if steps is not None and (not isinstance(steps, (int, np.integer)) or steps < 1):
        raise ValueError(f'Layer "{layer_name}": `steps` in adapt() must be a positive '
                         f"integer or None. Received: steps={steps}")
    if batch_size is not None and (not isinstance(batch_size, (int, np.integer))
                                   or batch_size < 1):
        raise ValueError(f'Layer "{layer_name}": `batch_size` in adapt() must be a positive '
                         f"integer or None. Received: batch_size={batch_size}")
    if isinstance(data, dict) or data is None:
        raise TypeError(f'Layer "{layer_name}": unsupported data type for adapt(): '
                        f"{type(data).__name__}. adapt() supports NumPy arrays, PyDatasets "
                        "and iterables of batches (e.g. a list of arrays or a generator).")
    if _is_array_like(data):
        yield from _array_batches(_devices.host_array(data), batch_size, steps)
        return
    if isinstance(data, PyDataset):
        source = (data[i] for i in range(len(data)))
    elif hasattr(data, "__iter__"):
        source = iter(data)
    else:
        raise TypeError(f'Layer "{layer_name}": unsupported data type for adapt(): '
                        f"{type(data).__name__}. adapt() supports NumPy arrays, PyDatasets "
                        "and iterables of batches (e.g. a list of arrays or a generator).")
    count = 0
    for batch in source:
        if steps is not None and count >= steps:
            break
        batch = _x_part(batch)
        if not (hasattr(batch, "__array__") or _is_array_like(batch)):
            raise TypeError(f'Layer "{layer_name}": adapt() expects an iterable that yields '
                            "arrays (or tensors). Got an element of type "
                            f"{type(batch).__name__}.")
        count += 1
        yield np.asarray(batch)
    if count == 0:
        raise ValueError(f'Layer "{layer_name}": adapt() received an empty iterable (no '
                         "batches). Expected at least one batch.")


def _array_batches(array, batch_size, steps):
    if batch_size is None or array.ndim == 0:
        yield array
        return
    for i, start in enumerate(range(0, max(len(array), 1), batch_size)):
        if steps is not None and i >= steps:
            return
        yield array[start:start + batch_size]
