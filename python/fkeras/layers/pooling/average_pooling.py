"""AveragePooling1D, AveragePooling2D, AveragePooling3D: the mean over each window; with
"same" padding each window divides by its count of in-bounds cells (a 3x3 input 1..9, pool 2,
stride 2 gives [[3, 4.5], [7.5, 9]]).

Keras 3 makes `pool_size` required; fkeras keeps Keras 2's defaults (2 per axis), a superset.
"""

from fkeras import ops
from fkeras.layers.pooling.base_pooling import Pooling1D, Pooling2D, Pooling3D, pooling_doc
from fkeras.ops.pooling_nd import average_pool3d

_ARGS = """
    Args:
        pool_size: an int or one int per spatial dimension (default 2 per axis).
        strides: likewise, or None (= pool_size).
        padding: "valid" or "same" (padded cells are not counted).
        data_format: "channels_last", "channels_first" or None (the configured default).
"""


class AveragePooling1D(Pooling1D):
    __doc__ = pooling_doc("Average pooling over 1-D windows (N, T, C).", _ARGS,
                          "y = AveragePooling1D(2)(Input(shape=(7, 3)))   # y.shape == (None, 3, 3)")
    pool_fn = staticmethod(ops.average_pool)


class AveragePooling2D(Pooling2D):
    __doc__ = pooling_doc("Average pooling over 2-D windows.", _ARGS,
                          "y = AveragePooling2D(2)(Input(shape=(7, 7, 3)))   "
                          "# y.shape == (None, 3, 3, 3)")
    pool_fn = staticmethod(ops.average_pool)


class AveragePooling3D(Pooling3D):
    __doc__ = pooling_doc("Average pooling over 3-D windows.", _ARGS,
                          "y = AveragePooling3D(2)(Input(shape=(4, 6, 6, 3)))   "
                          "# y.shape == (None, 2, 3, 3, 3)")
    pool_fn = staticmethod(average_pool3d)
