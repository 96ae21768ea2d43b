"""Pooling ops: keras.ops.max_pool and keras.ops.average_pool (1-D and 2-D; 3-D in pooling_nd).

The kernels take NHWC; channels_first inputs are transposed here (see ops/conv.py). 'same'
padding follows TensorFlow: the extra padding goes at the end, max pooling ignores padded
cells, and average pooling divides each window by its count of in-bounds cells.
"""

import numpy as np

from fkeras import config
from fkeras.engine import tape as _tape
from fkeras.ops import shape_utils as su
from fkeras.ops.conv import (
    normalize_padding,
    build_shape,
    check_rank,
    from_nhwc,
    native_layout,
    normalize_tuple,
    spatial_nhwc,
    to_nhwc,
    window_geometry,
)
from fkeras.ops.registry import REGISTRY as _R
from fkeras.ops.registry import Op, apply


class _Pool2D(Op):
    device_native = True

    def native_on(self, inputs, attrs):
        return native_layout(attrs)

    def _geometry(self, xshape, pool_size, strides, padding, data_format):
        N, H, W, C = spatial_nhwc(xshape, data_format)
        R, S = pool_size
        P, pt, Q, pl = window_geometry(H, W, R, S, strides, (1, 1), padding)
        if (P is not None and P <= 0) or (Q is not None and Q <= 0):
            rank = len(xshape)
            raise ValueError(
                "Computed output size would be zero or negative. Received: "
                f"`inputs.shape={tuple(xshape)}` and "
                f"`pool_size={tuple(pool_size[-(rank - 2):])}`.")
        return dict(rank=len(xshape), N=N, H=H, W=W, C=C, P=P, Q=Q, R=R, S=S, pt=pt, pl=pl)

    def output_spec(self, x, pool_size=(2, 2), strides=(2, 2), padding="valid",
                    data_format="channels_last"):
        g = self._geometry(su.shape_of(x), pool_size, strides, padding, data_format)
        return build_shape(g["N"], (g["P"], g["Q"]), g["C"], data_format, g["rank"])


class MaxPool2D(_Pool2D):
    name = "max_pool2d"

    def forward(self, dev, x, pool_size=(2, 2), strides=(2, 2), padding="valid",
                data_format="channels_last"):
        g = self._geometry(x.shape, pool_size, strides, padding, data_format)
        xs = to_nhwc(x, data_format)
        y = dev.empty((g["N"], g["P"], g["Q"], g["C"]))
        # No tape records this call (inference, predict): the host kernels skip the indices,
        # which only the backward reads (an int64 per output: more bytes than y).
        no_grad = dev.is_host and _tape.current_tape() is None
        idx = None if no_grad else dev.empty(y.shape, np.int64)
        dev.kernels["maxpool2d_forward"](y, idx, xs, g["N"], g["H"], g["W"], g["C"], g["P"],
                                         g["Q"], g["R"], g["S"], strides[0], strides[1],
                                         g["pt"], g["pl"])
        return from_nhwc(y, data_format, g["rank"]), (idx, g)

    def backward(self, dev, saved, grad, needs, pool_size=(2, 2), strides=(2, 2),
                 padding="valid", data_format="channels_last"):
        idx, g = saved
        dy = to_nhwc(grad, data_format)
        dx = dev.empty((g["N"], g["H"], g["W"], g["C"]))
        dev.kernels["maxpool2d_backward"](dx, dy, idx, g["N"], g["H"], g["W"], g["C"], g["P"],
                                          g["Q"])
        return (from_nhwc(dx, data_format, g["rank"]),)


class AvgPool2D(_Pool2D):
    name = "average_pool2d"

    def _sizes(self, g, strides):
        return (g["N"], g["H"], g["W"], g["C"], g["P"], g["Q"], g["R"], g["S"], strides[0],
                strides[1], g["pt"], g["pl"])

    def forward(self, dev, x, pool_size=(2, 2), strides=(2, 2), padding="valid",
                data_format="channels_last"):
        g = self._geometry(x.shape, pool_size, strides, padding, data_format)
        xs = to_nhwc(x, data_format)
        y = dev.empty((g["N"], g["P"], g["Q"], g["C"]))
        dev.kernels["avgpool2d_forward"](y, xs, *self._sizes(g, strides))
        return from_nhwc(y, data_format, g["rank"]), g

    def backward(self, dev, g, grad, needs, pool_size=(2, 2), strides=(2, 2), padding="valid",
                 data_format="channels_last"):
        dy = to_nhwc(grad, data_format)
        dx = dev.empty((g["N"], g["H"], g["W"], g["C"]))
        dev.kernels["avgpool2d_backward"](dx, dy, *self._sizes(g, strides))
        return (from_nhwc(dx, data_format, g["rank"]),)


def _pool_args(inputs, pool_size, strides, padding, data_format, name):
    rank = check_rank(inputs, name)
    n = rank - 2
    pool = normalize_tuple(pool_size, n, "pool_size")
    strides = pool if strides is None else normalize_tuple(strides, n, "strides")
    if min(pool) < 1 or min(strides) < 1:
        raise ValueError(f"`{name}`: pool_size and strides must be positive, received "
                         f"pool_size={pool_size}, strides={strides}.")
    if n == 1:
        pool, strides = (1,) + pool, (1,) + strides
    return dict(pool_size=pool, strides=strides, padding=normalize_padding(padding),
                data_format=config.data_format_or_default(data_format))


def max_pool(inputs, pool_size, strides=None, padding="valid", data_format=None):
    """keras.ops.max_pool over 1 or 2 spatial dimensions.

    Args:
        inputs: rank 3 or 4, in `data_format` (None: the configured default).
        pool_size: an int or one int per spatial dimension.
        strides: likewise; None means `pool_size`.
        padding: "valid" or "same".

    Example:
    ```python
    y = fkeras.ops.max_pool(np.ones((1, 7, 7, 3)), 2, padding="same")   # (1, 4, 4, 3)
    ```
    """
    if len(su.shape_of(inputs)) == 5:
        from fkeras.ops import pooling_nd

        return pooling_nd.max_pool3d(inputs, pool_size, strides, padding, data_format)
    return apply(_R["max_pool2d"], inputs,
                 **_pool_args(inputs, pool_size, strides, padding, data_format, "max_pool"))


def average_pool(inputs, pool_size, strides=None, padding="valid", data_format=None):
    """keras.ops.average_pool: like max_pool; 'same' windows average their in-bounds cells."""
    if len(su.shape_of(inputs)) == 5:
        from fkeras.ops import pooling_nd

        return pooling_nd.average_pool3d(inputs, pool_size, strides, padding, data_format)
    return apply(_R["average_pool2d"], inputs,
                 **_pool_args(inputs, pool_size, strides, padding, data_format, "average_pool"))
