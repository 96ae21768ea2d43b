"""AveragePooling2D: the mean over each window ('same': over its in-bounds cells only)."""

from fkeras import ops
from fkeras.layers.pooling.base_pooling import BasePooling2D


class AveragePooling2D(BasePooling2D):
    """Average pooling over 2-D windows; with "same" padding each window divides by its count
    of in-bounds cells (a 3x3 input, pool 2, stride 2 gives [[3, 4.5], [7.5, 9]] for 1..9).

    Args:
        pool_size, strides, padding, data_format: as MaxPooling2D.
    """

    pool_fn = staticmethod(ops.average_pool)
