"""MaxPooling1D, MaxPooling2D, MaxPooling3D: the maximum over each window (padded cells never
win)."""

from fkeras import ops
from fkeras.layers.pooling.base_pooling import Pooling1D, Pooling2D, Pooling3D, pooling_doc
from fkeras.ops.pooling_nd import max_pool3d

_ARGS = """
    Args:
        pool_size: an int or one int per spatial dimension.
        strides: likewise, or None (= pool_size).
        padding: "valid" or "same" (TensorFlow's rule: the extra padding goes at the end).
        data_format: "channels_last", "channels_first" or None (the configured default).
"""


class MaxPooling1D(Pooling1D):
    __doc__ = pooling_doc("Max pooling over 1-D windows (N, T, C).", _ARGS,
                          "y = MaxPooling1D(2)(Input(shape=(7, 3)))   # y.shape == (None, 3, 3)")
    pool_fn = staticmethod(ops.max_pool)


class MaxPooling2D(Pooling2D):
    __doc__ = pooling_doc("Max pooling over 2-D windows.", _ARGS,
                          "y = MaxPooling2D(2, padding=\"same\")(Input(shape=(7, 7, 3)))   "
                          "# y.shape == (None, 4, 4, 3)")
    pool_fn = staticmethod(ops.max_pool)


class MaxPooling3D(Pooling3D):
    __doc__ = pooling_doc("Max pooling over 3-D windows.", _ARGS,
                          "y = MaxPooling3D(2)(Input(shape=(4, 6, 6, 3)))   "
                          "# y.shape == (None, 2, 3, 3, 3)")
    pool_fn = staticmethod(max_pool3d)
