"""Constant padding and cropping of tensors (ZeroPadding*, Cropping*, causal Conv1D).

`pad` writes x into a zero (or constant) tensor grown by (before, after) per axis; its gradient
crops the cotangent. `crop` slices (begin, end) off per axis; its gradient pads the cotangent
with zeros. The two are each other's adjoint. Internal op names (`constant_pad`, `crop`) keep
clear of a future keras.ops.pad.
"""

import numpy as np

from fkeras.ops import shape_utils as su
from fkeras.ops.registry import REGISTRY as _R
from fkeras.ops.registry import Op, apply


def _check_widths(shape, widths, what):
    if len(widths) != len(shape):
        raise ValueError(f"`{what}` needs one (before, after) pair per axis of the input: "
                         f"received {tuple(widths)} for an input of shape {tuple(shape)}.")
    for pair in widths:
        if len(pair) != 2 or min(pair) < 0:
            raise ValueError(f"`{what}`: every (before, after) pair must hold two non-negative "
                             f"ints, received {tuple(widths)}.")


def _interior(widths, shape):
    """The slices that select the unpadded interior of a padded tensor of the given shape."""
    return tuple(slice(b, n - a) for (b, a), n in zip(widths, shape))


class ConstantPad(Op):
    name = "constant_pad"

    def output_spec(self, x, pad_width=(), constant_value=0.0):
        shape = su.shape_of(x)
        _check_widths(shape, pad_width, "pad")
        return tuple(None if n is None else n + b + a for n, (b, a) in zip(shape, pad_width))

    def forward(self, dev, x, pad_width=(), constant_value=0.0):
        _check_widths(x.shape, pad_width, "pad")
        shape = tuple(n + b + a for n, (b, a) in zip(x.shape, pad_width))
        y = dev.empty(shape)
        y[...] = constant_value
        y[_interior(pad_width, shape)] = x
        return y, None

    def backward(self, dev, saved, g, needs, pad_width=(), constant_value=0.0):
        return (np.ascontiguousarray(g[_interior(pad_width, g.shape)]),)


class Crop(Op):
    name = "crop"

    def output_spec(self, x, cropping=()):
        shape = su.shape_of(x)
        _check_widths(shape, cropping, "crop")
        return tuple(None if n is None else n - b - a for n, (b, a) in zip(shape, cropping))

    def forward(self, dev, x, cropping=()):
        _check_widths(x.shape, cropping, "crop")
        return np.ascontiguousarray(x[_interior(cropping, x.shape)]), x.shape

    def backward(self, dev, shape, g, needs, cropping=()):
        dx = dev.zeros(shape)
        dx[_interior(cropping, shape)] = g
        return (dx,)


def pad(x, pad_width, mode="constant", constant_values=None):
    """keras.ops.pad (constant mode): x grown by pad_width[i] = (before, after) along axis i.

    Args:
        x: a tensor.
        pad_width: an int, a (before, after) pair for every axis, or one pair per axis
            (NumPy's broadcasting of np.pad).
        mode: "constant" (the only mode supported).
        constant_values: the fill value (None: 0).

    Example:
    ```python
    y = fkeras.ops.pad(np.ones((1, 2, 2, 1)), ((0, 0), (1, 1), (0, 2), (0, 0)))
    # y.shape == (1, 4, 4, 1)
    ```
    """
    if mode != "constant":
        raise ValueError(f"`pad`: fkeras supports mode='constant' only. Received: mode={mode}")
    rank = len(su.shape_of(x))
    widths = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (rank, 2))
    widths = tuple((int(b), int(a)) for b, a in widths)
    return apply(_R["constant_pad"], x, pad_width=widths,
                 constant_value=0.0 if constant_values is None else float(constant_values))


def crop(x, cropping):
    """x with cropping[i] = (before, after) elements removed along axis i."""
    widths = tuple((int(b), int(a)) for b, a in cropping)
    return apply(_R["crop"], x, cropping=widths)
