"""AveragePooling1D, AveragePooling2D, AveragePooling3D: the mean over each window; with
"same" padding each window divides by its count of in-bounds cells (a 3x3 input 1..9, pool 2,
stride 2 gives [[3, 4.5], [7.5, 9]]).

Keras 3 makes `pool_size` required; fkeras keeps Keras 2's defaults (2 per axis), a superset.
"""

from fkeras import ops
from fkeras.layers.pooling.base_pooling import BasePooling
from fkeras.ops.pooling_nd import average_pool3d

_ARGS = """
    Args:
        pool_size: an int or one int per spatial dimension (default 2 per axis).
        strides: likewise, or None (= pool_size).
        padding: "valid" or "same" (padded cells are not counted).
        data_format: "channels_last", "channels_first" or None (the configured default).
"""


class AveragePooling1D(BasePooling):
    __doc__ = """Average pooling over 1-D windows (N, T, C).
    """ + _ARGS + """
    Example:
    ```python
    y = AveragePooling1D(2)(Input(shape=(7, 3)))   # y.shape == (None, 3, 3)
    ```
    """

    rank = 1
    pool_fn = staticmethod(ops.average_pool)

    def __init__(self, pool_size=2, strides=None, padding="valid", data_format=None, name=None,
                 **kwargs):
        super().__init__(pool_size, strides, padding, data_format, name=name, **kwargs)


class AveragePooling2D(BasePooling):
    __doc__ = """Average pooling over 2-D windows.
    """ + _ARGS + """
    Example:
    ```python
    y = AveragePooling2D(2)(Input(shape=(7, 7, 3)))   # y.shape == (None, 3, 3, 3)
    ```
    """

    rank = 2
    pool_fn = staticmethod(ops.average_pool)

    def __init__(self, pool_size=(2, 2), strides=None, padding="valid", data_format=None,
                 name=None, **kwargs):
        super().__init__(pool_size, strides, padding, data_format, name=name, **kwargs)


class AveragePooling3D(BasePooling):
    __doc__ = """Average pooling over 3-D windows.
    """ + _ARGS + """
    Example:
    ```python
    y = AveragePooling3D(2)(Input(shape=(4, 6, 6, 3)))   # y.shape == (None, 2, 3, 3, 3)
    ```
    """

    rank = 3
    pool_fn = staticmethod(average_pool3d)

    def __init__(self, pool_size=(2, 2, 2), strides=None, padding="valid", data_format=None,
                 name=None, **kwargs):
        super().__init__(pool_size, strides, padding, data_format, name=name, **kwargs)
