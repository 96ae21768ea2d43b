"""The dropout op on the elementwise kernels (fkeras.random.dropout is the public form).

The kernel draws the mask from an explicit seed with a counter-based generator, so every device
draws the same mask for the same seed; the mask is saved for the backward. With a
`noise_shape` the mask is drawn at that shape and broadcast over the input.
"""

import numpy as np

from fkeras.ops import shape_utils as su
from fkeras.ops.registry import REGISTRY as _R
from fkeras.ops.registry import Op, apply


class Dropout(Op):
    """y = x * mask, mask = keep / (1 - rate), keep drawn with probability 1 - rate."""

    name = "dropout"
    device_native = True

    def native_on(self, inputs, attrs):
        return attrs.get("noise_shape") is None  # a broadcast mask multiplies on the host

    def output_spec(self, x, rate=0.5, seed=0, noise_shape=None):
        return su.shape_of(x)

    def forward(self, dev, x, rate=0.5, seed=0, noise_shape=None):
        if noise_shape is None or tuple(noise_shape) == x.shape:
            y, mask = dev.empty(x.shape), dev.empty(x.shape)
            dev.kernels["dropout_forward"](y, mask, x, x.size, rate, seed)
            return y, mask
        ones = dev.empty(noise_shape)
        ones[...] = 1
        drawn, mask = dev.empty(noise_shape), dev.empty(noise_shape)
        dev.kernels["dropout_forward"](drawn, mask, ones, ones.size, rate, seed)
        return np.multiply(x, mask), mask

    def backward(self, dev, mask, g, needs, rate=0.5, seed=0, noise_shape=None):
        if mask.shape == g.shape:
            dx = dev.empty(g.shape)
            dev.kernels["dropout_backward"](dx, dev.contiguous(g), mask, g.size)
            return (dx,)
        return (np.multiply(g, mask),)


def check_rate(rate, what="rate"):
    if isinstance(rate, bool) or not isinstance(rate, (int, float, np.floating)) or \
            not 0 <= rate <= 1:
        raise ValueError(f"Invalid value received for argument `{what}`. Expected a float value "
                         f"between 0 and 1. Received: {what}={rate}")
    return float(rate)


def resolve_noise_shape(noise_shape, shape):
    """noise_shape with None entries taken from `shape` (Keras rule); None stays None."""
    if noise_shape is None:
        return None
    noise_shape = tuple(noise_shape)
    if len(noise_shape) != len(shape):
        raise ValueError(f"`noise_shape` {noise_shape} must have the rank of the input "
                         f"{tuple(shape)}.")
    out = tuple(s if n is None else int(n) for n, s in zip(noise_shape, shape))
    for n, s in zip(out, shape):
        if n not in (1, s) and s is not None:
            raise ValueError(f"`noise_shape` {noise_shape} does not broadcast to the input "
                             f"shape {tuple(shape)}.")
    return out


def dropout(x, rate, noise_shape=None, seed=0):
    """Dropout with an explicit integer seed (see fkeras.random.dropout for the public form)."""
    rate = check_rate(rate)
    if rate == 1.0:
        return apply(_R["multiply"], x, np.zeros((), np.float32))
    noise_shape = resolve_noise_shape(noise_shape, su.shape_of(x))
    return apply(_R["dropout"], x, rate=rate, seed=int(seed), noise_shape=noise_shape)
