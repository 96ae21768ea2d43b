"""3-D max and average pooling: the 2-D pooling kernels over (H, W), then NumPy over depth.

Both poolings separate by axis: the maximum over a (d, h, w) window is the maximum over its
in-bounds depth planes of the (h, w) window maxima, and the in-bounds average is the average
over in-bounds depth planes of the (h, w) in-bounds averages (each plane's (h, w) window has
the same in-bounds count). So the input (N, D, H, W, C) is pooled as N * D images by
maxpool2d/avgpool2d, then along depth here. 'same' padding follows TensorFlow (extra padding
at the end; padded cells never win a maximum and never count in an average).
"""

import numpy as np

from fkeras import config
from fkeras.ops import shape_utils as su
from fkeras.ops.conv import normalize_padding, normalize_tuple
from fkeras.ops.conv_nd import from_ndhwc, join_shape, split_shape, to_ndhwc
from fkeras.ops.conv_utils import conv_output_size_and_padding
from fkeras.ops.registry import REGISTRY as _R
from fkeras.ops.registry import Op, apply


def _out_sizes(xshape, pool_size, strides, padding):
    out, pads = [], []
    for size, k, s in zip(xshape, pool_size, strides):
        o, p = (None, 0) if size is None else conv_output_size_and_padding(size, k, s, 1, padding)
        out.append(o)
        pads.append(p)
    return out, pads


def _depth_taps(D, Pd, k, s, pad):
    """(Pd, k) input planes of each output plane's window, and their in-bounds mask."""
    idx = np.arange(Pd)[:, None] * s + np.arange(k)[None, :] - pad
    valid = (idx >= 0) & (idx < D)
    return np.clip(idx, 0, D - 1), valid


def _depth_max(y2, k, s, pad, Pd):
    """y2 (N, D, ...) -> (max over each depth window (N, Pd, ...), chosen plane (N, Pd, ...))."""
    idx, valid = _depth_taps(y2.shape[1], Pd, k, s, pad)
    taps = np.where(valid.reshape((1, Pd, k) + (1,) * (y2.ndim - 2)), y2[:, idx], -np.inf)
    arg = np.argmax(taps, axis=2)
    y = np.take_along_axis(taps, arg[:, :, None], axis=2)[:, :, 0]
    return y.astype(y2.dtype), idx[np.arange(Pd).reshape((1, Pd) + (1,) * (y2.ndim - 2)), arg]


def _depth_max_backward(dev, g, chosen, D):
    dx = dev.zeros((g.shape[0], D) + g.shape[2:])
    n = np.arange(g.shape[0]).reshape((-1, 1) + (1,) * (g.ndim - 2))
    rest = np.indices(g.shape[2:]).reshape((len(g.shape) - 2, 1, 1) + g.shape[2:])
    np.add.at(dx, (n, chosen) + tuple(rest), g)
    return dx


def _depth_avg(y2, k, s, pad, Pd):
    idx, valid = _depth_taps(y2.shape[1], Pd, k, s, pad)
    weight = valid / valid.sum(axis=1, keepdims=True)  # (Pd, k)
    y = np.zeros((y2.shape[0], Pd) + y2.shape[2:], dtype=y2.dtype)
    for j in range(k):
        y += y2[:, idx[:, j]] * weight[:, j].reshape((Pd,) + (1,) * (y2.ndim - 2))
    return y


def _depth_avg_backward(dev, g, k, s, pad, D):
    Pd = g.shape[1]
    idx, valid = _depth_taps(D, Pd, k, s, pad)
    weight = valid / valid.sum(axis=1, keepdims=True)
    dx = dev.zeros((g.shape[0], D) + g.shape[2:])
    for j in range(k):
        contrib = g * weight[:, j].reshape((Pd,) + (1,) * (g.ndim - 2))
        np.add.at(dx, (slice(None), idx[:, j]), contrib)
    return dx


class _Pool3D(Op):
    def _geometry(self, xshape, pool_size, strides, padding, data_format):
        N, sp, C = split_shape(tuple(xshape), data_format)
        out, pads = _out_sizes(sp, pool_size, strides, padding)
        if any(o is not None and o <= 0 for o in out):
            raise ValueError("Computed output size would be zero or negative. Received: "
                             f"`inputs.shape={tuple(xshape)}` and "
                             f"`pool_size={tuple(pool_size)}`.")
        return dict(N=N, C=C, sp=sp, out=out, pads=pads)

    def output_spec(self, x, pool_size=(2, 2, 2), strides=(2, 2, 2), padding="valid",
                    data_format="channels_last"):
        g = self._geometry(su.shape_of(x), pool_size, strides, padding, data_format)
        return join_shape(g["N"], g["out"], g["C"], data_format)

    def _sizes2d(self, g, pool_size, strides):
        (D, H, W), (Pd, P, Q) = g["sp"], g["out"]
        return (g["N"] * D, H, W, g["C"], P, Q, pool_size[1], pool_size[2], strides[1],
                strides[2], g["pads"][1], g["pads"][2])

    def _start_forward(self, dev, x, pool_size, strides, padding, data_format):
        """What both forwards start with: the geometry, the input as depth slices
        (N * D, H, W, C), an empty 2-D pooled output (N * D, P, Q, C), and the 2-D kernel
        sizes."""
        g = self._geometry(x.shape, pool_size, strides, padding, data_format)
        (D, H, W), (Pd, P, Q) = g["sp"], g["out"]
        x2 = to_ndhwc(x, data_format).reshape(-1, H, W, g["C"])
        y2 = dev.empty((g["N"] * D, P, Q, g["C"]))
        return g, x2, y2, self._sizes2d(g, pool_size, strides)


class MaxPool3D(_Pool3D):
    name = "max_pool3d"

    def forward(self, dev, x, pool_size=(2, 2, 2), strides=(2, 2, 2), padding="valid",
                data_format="channels_last"):
        g, x2, y2, sizes = self._start_forward(dev, x, pool_size, strides, padding, data_format)
        (D, _, _), (Pd, P, Q) = g["sp"], g["out"]
        idx2 = np.empty(y2.shape, dtype=np.int64)
        dev.kernels["maxpool2d_forward"](y2, idx2, x2, *sizes)
        y, chosen = _depth_max(y2.reshape(g["N"], D, P, Q, g["C"]), pool_size[0], strides[0],
                               g["pads"][0], Pd)
        return from_ndhwc(np.ascontiguousarray(y), data_format, 5), (idx2, chosen, g, sizes)

    def backward(self, dev, saved, grad, needs, pool_size=(2, 2, 2), strides=(2, 2, 2),
                 padding="valid", data_format="channels_last"):
        idx2, chosen, g, sizes = saved
        (D, H, W), (Pd, P, Q) = g["sp"], g["out"]
        g2 = _depth_max_backward(dev, to_ndhwc(grad, data_format), chosen, D)
        dx = dev.empty((g["N"] * D, H, W, g["C"]))
        dev.kernels["maxpool2d_backward"](dx, np.ascontiguousarray(g2).reshape(-1, P, Q, g["C"]),
                                          idx2, *sizes[:6])
        return (from_ndhwc(dx.reshape(g["N"], D, H, W, g["C"]), data_format, 5),)


class AvgPool3D(_Pool3D):
    name = "average_pool3d"

    def forward(self, dev, x, pool_size=(2, 2, 2), strides=(2, 2, 2), padding="valid",
                data_format="channels_last"):
        g, x2, y2, sizes = self._start_forward(dev, x, pool_size, strides, padding, data_format)
        (D, _, _), (Pd, P, Q) = g["sp"], g["out"]
        dev.kernels["avgpool2d_forward"](y2, x2, *sizes)
        y = _depth_avg(y2.reshape(g["N"], D, P, Q, g["C"]), pool_size[0], strides[0],
                       g["pads"][0], Pd)
        return from_ndhwc(y, data_format, 5), (g, sizes)

    def backward(self, dev, saved, grad, needs, pool_size=(2, 2, 2), strides=(2, 2, 2),
                 padding="valid", data_format="channels_last"):
        g, sizes = saved
        (D, H, W), (Pd, P, Q) = g["sp"], g["out"]
        g2 = _depth_avg_backward(dev, to_ndhwc(grad, data_format), pool_size[0], strides[0],
                                 g["pads"][0], D)
        dx = dev.empty((g["N"] * D, H, W, g["C"]))
        dev.kernels["avgpool2d_backward"](dx, np.ascontiguousarray(g2).reshape(-1, P, Q, g["C"]),
                                          *sizes)
        return (from_ndhwc(dx.reshape(g["N"], D, H, W, g["C"]), data_format, 5),)


def _pool3d_args(inputs, pool_size, strides, padding, data_format, name):
    if len(su.shape_of(inputs)) != 5:
        raise ValueError(f"`{name}` expects a rank-5 input, received a tensor of shape "
                         f"{su.shape_of(inputs)}.")
    pool = normalize_tuple(pool_size, 3, "pool_size")
    strides = pool if strides is None else normalize_tuple(strides, 3, "strides")
    if min(pool) < 1 or min(strides) < 1:
        raise ValueError(f"`{name}`: pool_size and strides must be positive, received "
                         f"pool_size={pool_size}, strides={strides}.")
    return dict(pool_size=pool, strides=strides, padding=normalize_padding(padding),
                data_format=config.data_format_or_default(data_format))


def max_pool3d(inputs, pool_size, strides=None, padding="valid", data_format=None):
    """Max pooling over 3 spatial dimensions (rank-5 input in `data_format`)."""
    return apply(_R["max_pool3d"], inputs,
                 **_pool3d_args(inputs, pool_size, strides, padding, data_format, "max_pool"))


def average_pool3d(inputs, pool_size, strides=None, padding="valid", data_format=None):
    """Average pooling over 3 spatial dimensions; 'same' windows average in-bounds cells."""
    return apply(_R["average_pool3d"], inputs,
                 **_pool3d_args(inputs, pool_size, strides, padding, data_format,
                                "average_pool"))
