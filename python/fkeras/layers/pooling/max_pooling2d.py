"""MaxPooling2D: the maximum over each window (padded cells never win)."""

from fkeras import ops
from fkeras.layers.pooling.base_pooling import BasePooling2D


class MaxPooling2D(BasePooling2D):
    """Max pooling over 2-D windows.

    Args:
        pool_size: an int or a pair (default (2, 2)).
        strides: an int, a pair or None (= pool_size).
        padding: "valid" or "same".
        data_format: "channels_last", "channels_first" or None (the configured default).

    Example:
    ```python
    y = MaxPooling2D(2, padding="same")(Input(shape=(7, 7, 3)))   # y.shape == (None, 4, 4, 3)
    ```
    """

    pool_fn = staticmethod(ops.max_pool)
