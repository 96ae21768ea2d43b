"""to_categorical and normalize (keras.utils)."""

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
    """`x` divided by its `order`-norm along `axis`, as Keras 3: a NumPy array gives a NumPy
    array (zero norms left at 1, the input's float dtype kept); a tensor goes through
    `fkeras.ops.normalize`, so the result is differentiable (a loss may normalize features).

    Example:
    ```python
    fkeras.utils.normalize(np.array([[3.0, 4.0]]))  # [[0.6, 0.8]]
    ```
    """
    if isinstance(x, np.ndarray):
        norm = np.atleast_1d(np.linalg.norm(x, order, axis))
        norm[norm == 0] = 1
        # (Keras 3 writes `axis or -1`, which breaks axis=0; the axis given is used here)
        return x / np.expand_dims(norm, -1 if axis is None else axis)
    from fkeras import ops

    return ops.normalize(x, axis=axis, order=order)
