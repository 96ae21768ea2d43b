"""MaxPooling1D, MaxPooling2D, MaxPooling3D: the maximum over each window (padded cells never
win)."""

from fkeras import ops
from fkeras.layers.pooling.base_pooling import BasePooling
from fkeras.ops.pooling_nd import max_pool3d

_ARGS = """
    Args:
        pool_size: an int or one int per spatial dimension.
        strides: likewise, or None (= pool_size).
        padding: "valid" or "same" (TensorFlow's rule: the extra padding goes at the end).
        data_format: "channels_last", "channels_first" or None (the configured default).
"""


class MaxPooling1D(BasePooling):
    __doc__ = """Max pooling over 1-D windows (N, T, C).
    """ + _ARGS + """
    Example:
    ```python
    y = MaxPooling1D(2)(Input(shape=(7, 3)))   # y.shape == (None, 3, 3)
    ```
    """

    rank = 1
    pool_fn = staticmethod(ops.max_pool)

    def __init__(self, pool_size=2, strides=None, padding="valid", data_format=None, name=None,
                 **kwargs):
        super().__init__(pool_size, strides, padding, data_format, name=name, **kwargs)


class MaxPooling2D(BasePooling):
    __doc__ = """Max pooling over 2-D windows.
    """ + _ARGS + """
    Example:
    ```python
    y = MaxPooling2D(2, padding="same")(Input(shape=(7, 7, 3)))   # y.shape == (None, 4, 4, 3)
    ```
    """

    rank = 2
    pool_fn = staticmethod(ops.max_pool)

    def __init__(self, pool_size=(2, 2), strides=None, padding="valid", data_format=None,
                 name=None, **kwargs):
        super().__init__(pool_size, strides, padding, data_format, name=name, **kwargs)


class MaxPooling3D(BasePooling):
    __doc__ = """Max pooling over 3-D windows.
    """ + _ARGS + """
    Example:
    ```python
    y = MaxPooling3D(2)(Input(shape=(4, 6, 6, 3)))   # y.shape == (None, 2, 3, 3, 3)
    ```
    """

    rank = 3
    pool_fn = staticmethod(max_pool3d)

    def __init__(self, pool_size=(2, 2, 2), strides=None, padding="valid", data_format=None,
                 name=None, **kwargs):
        super().__init__(pool_size, strides, padding, data_format, name=name, **kwargs)
