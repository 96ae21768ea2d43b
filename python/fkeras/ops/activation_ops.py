"""Activation ops beyond the kernel-table ones (keras.ops names and Keras 3.15 formulas):
relu6, celu, glu, hard_silu, hard_tanh, log_sigmoid, mish, squareplus, sparse_plus,
sparse_sigmoid, sparsemax, soft_shrink, hard_shrink, tanh_shrink, threshold.

Elementwise ones are `_Elementwise` ops (NumPy forward, derivative from x and y); `glu` and
`sparsemax` work along an axis. Subgradients at kinks follow torch (Keras's torch backend).
"""

import numpy as np

from fkeras.ops import shape_utils as su
from fkeras.ops.elementwise import _define, _float_input
from fkeras.ops.registry import REGISTRY as _R
from fkeras.ops.registry import Op, apply


def _softplus(x):
    return np.logaddexp(0.0, x)


def _sigmoid(x):
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def _mish_deriv(x, y):
    sp = _softplus(x)
    t = np.tanh(sp)
    return t + x * (1.0 - t * t) * _sigmoid(x)


_define("relu6", lambda x: np.clip(x, 0.0, 6.0),
        lambda x, y: ((x > 0) & (x < 6)).astype(x.dtype))
_define("celu",
        lambda x, alpha=1.0: np.maximum(x, 0.0) + alpha * np.expm1(np.minimum(x, 0.0) / alpha),
        lambda x, y, alpha=1.0: np.where(x > 0, 1.0, np.exp(np.minimum(x, 0.0) / alpha)))
_define("hard_silu", lambda x: x * np.clip(x + 3.0, 0.0, 6.0) / 6.0,
        lambda x, y: np.where(x <= -3.0, 0.0, np.where(x >= 3.0, 1.0, (2.0 * x + 3.0) / 6.0)))
_define("hard_tanh", lambda x: np.clip(x, -1.0, 1.0),
        lambda x, y: ((x > -1) & (x < 1)).astype(x.dtype))
_define("log_sigmoid", lambda x: -_softplus(-x), lambda x, y: _sigmoid(-x))
_define("mish", lambda x: x * np.tanh(_softplus(x)), _mish_deriv)
_define("squareplus", lambda x, b=4.0: 0.5 * (x + np.sqrt(x * x + b)),
        lambda x, y, b=4.0: 0.5 * (1.0 + x / np.sqrt(x * x + b)))
_define("sparse_plus",
        lambda x: np.where(x <= -1.0, 0.0, np.where(x >= 1.0, x, 0.25 * (x + 1.0) ** 2)),
        lambda x, y: np.where(x <= -1.0, 0.0, np.where(x >= 1.0, 1.0, 0.5 * (x + 1.0))))
_define("sparse_sigmoid", lambda x: np.clip(0.5 * (x + 1.0), 0.0, 1.0),
        lambda x, y: np.where((x > -1.0) & (x < 1.0), 0.5, 0.0))
_define("soft_shrink",
        lambda x, threshold=0.5: np.where(x > threshold, x - threshold,
                                          np.where(x < -threshold, x + threshold, 0.0)),
        lambda x, y, threshold=0.5: (np.abs(x) > threshold).astype(x.dtype))
_define("hard_shrink", lambda x, threshold=0.5: np.where(np.abs(x) > threshold, x, 0.0),
        lambda x, y, threshold=0.5: (np.abs(x) > threshold).astype(x.dtype))
_define("tanh_shrink", lambda x: x - np.tanh(x), lambda x, y: np.tanh(x) ** 2)
_define("threshold",
        lambda x, threshold=0.0, default_value=0.0: np.where(x > threshold, x, default_value),
        lambda x, y, threshold=0.0, default_value=0.0: (x > threshold).astype(x.dtype))


class Glu(Op):
    """glu(x, axis): a * sigmoid(b) for the two halves a, b of x along `axis`."""

    name = "glu"

    def output_spec(self, x, axis=-1):
        shape = list(su.shape_of(x))
        ax = su.normalize_axis(axis, len(shape), "glu")
        if shape[ax] is not None:
            if shape[ax] % 2:
                raise ValueError(f"`glu`: axis {axis} of x must have an even size; received "
                                 f"shape {tuple(shape)}.")
            shape[ax] //= 2
        return tuple(shape)

    def forward(self, dev, x, axis=-1):
        self.output_spec(x, axis)
        a, b = np.split(x, 2, axis=axis)
        s = _sigmoid(b)
        return (a * s).astype(x.dtype, copy=False), (a, s)

    def backward(self, dev, saved, g, needs, axis=-1):
        a, s = saved
        return (np.concatenate([g * s, g * a * s * (1.0 - s)], axis=axis),)


class Sparsemax(Op):
    """The Euclidean projection of x onto the probability simplex along `axis`."""

    name = "sparsemax"

    def output_spec(self, x, axis=-1):
        shape = su.shape_of(x)
        su.normalize_axis(axis, len(shape), "sparsemax")
        return shape

    def forward(self, dev, x, axis=-1):
        z = np.moveaxis(x, axis, -1)
        zs = -np.sort(-z, axis=-1)
        k = np.arange(1, z.shape[-1] + 1, dtype=x.dtype)
        cum = np.cumsum(zs, axis=-1)
        support = 1.0 + k * zs > cum
        kz = support.sum(axis=-1, keepdims=True)
        tau = (np.take_along_axis(cum, kz - 1, axis=-1) - 1.0) / kz
        y = np.maximum(z - tau, 0.0).astype(x.dtype, copy=False)
        y = np.ascontiguousarray(np.moveaxis(y, -1, axis))
        return y, y

    def backward(self, dev, y, g, needs, axis=-1):
        mask = y > 0
        gm = g * mask
        mean = gm.sum(axis=axis, keepdims=True) / np.maximum(mask.sum(axis=axis, keepdims=True), 1)
        return ((gm - mean * mask).astype(g.dtype, copy=False),)


def relu6(x):
    """min(max(x, 0), 6) (keras.ops.relu6)."""
    return apply(_R["relu6"], _float_input(x))


def celu(x, alpha=1.0):
    """max(x, 0) + alpha * (exp(min(x, 0) / alpha) - 1) (keras.ops.celu)."""
    return apply(_R["celu"], _float_input(x), alpha=float(alpha))


def hard_silu(x):
    """x * relu6(x + 3) / 6 (keras.ops.hard_silu, alias hard_swish)."""
    return apply(_R["hard_silu"], _float_input(x))


hard_swish = hard_silu


def hard_tanh(x):
    """clip(x, -1, 1) (keras.ops.hard_tanh)."""
    return apply(_R["hard_tanh"], _float_input(x))


def log_sigmoid(x):
    """log(sigmoid(x)) = -softplus(-x) (keras.ops.log_sigmoid)."""
    return apply(_R["log_sigmoid"], _float_input(x))


def mish(x):
    """x * tanh(softplus(x)) (keras.activations.mish)."""
    return apply(_R["mish"], _float_input(x))


def squareplus(x, b=4):
    """(x + sqrt(x^2 + b)) / 2 (keras.ops.squareplus)."""
    return apply(_R["squareplus"], _float_input(x), b=float(b))


def sparse_plus(x):
    """0 for x <= -1, (x + 1)^2 / 4 for |x| < 1, x for x >= 1 (keras.ops.sparse_plus)."""
    return apply(_R["sparse_plus"], _float_input(x))


def sparse_sigmoid(x):
    """clip((x + 1) / 2, 0, 1) (keras.ops.sparse_sigmoid)."""
    return apply(_R["sparse_sigmoid"], _float_input(x))


def soft_shrink(x, threshold=0.5):
    """x - threshold above it, x + threshold below -threshold, else 0 (keras.ops.soft_shrink)."""
    return apply(_R["soft_shrink"], _float_input(x), threshold=float(threshold))


def hard_shrink(x, threshold=0.5):
    """x where |x| > threshold, else 0 (keras.ops.hard_shrink)."""
    return apply(_R["hard_shrink"], _float_input(x), threshold=float(threshold))


def tanh_shrink(x):
    """x - tanh(x) (keras.ops.tanh_shrink)."""
    return apply(_R["tanh_shrink"], _float_input(x))


def threshold(x, threshold, default_value):
    """x where x > threshold, else default_value (keras.ops.threshold)."""
    return apply(_R["threshold"], _float_input(x), threshold=float(threshold),
                 default_value=float(default_value))


def glu(x, axis=-1):
    """a * sigmoid(b) for the halves a, b of x along `axis` (keras.ops.glu)."""
    return apply(_R["glu"], _float_input(x), axis=axis)


def sparsemax(x, axis=-1):
    """The projection of x onto the probability simplex along `axis` (keras.ops.sparsemax)."""
    return apply(_R["sparsemax"], _float_input(x), axis=axis)
