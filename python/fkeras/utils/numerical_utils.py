"""to_categorical and normalize (keras.utils), in NumPy."""

import numpy as np


def to_categorical(x, num_classes=None):
    """One-hot float32 encoding of integer labels; a trailing dimension of 1 is dropped.

    Example:
    ```python
    to_categorical([0, 2], num_classes=3)  # [[1, 0, 0], [0, 0, 1]]
    ```
    """
    x = np.asarray(x, dtype="int64")
    if x.ndim > 1 and x.shape[-1] == 1:
        x = x.reshape(x.shape[:-1])
    if num_classes is None:
        num_classes = int(x.max()) + 1 if x.size else 0
    out = np.zeros(x.shape + (num_classes,), dtype="float32")
    np.put_along_axis(out, x[..., None], 1.0, axis=-1)
    return out


def normalize(x, axis=-1, order=2):
    """x divided by its `order`-norm along `axis` (zeros stay zero)."""
    x = np.asarray(x, dtype="float32")
    norm = np.linalg.norm(x, ord=order, axis=axis, keepdims=True)
    return x / np.where(norm == 0, 1, norm)
