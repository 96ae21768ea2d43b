"""Neural-network ops on the kernel tables: dense, activations, softmax (keras.ops names).

Convolution, pooling, normalization, recurrent and dropout ops live in their own modules.
"""

import numpy as np

from fkeras.backend import codes
from fkeras.ops import shape_utils as su
from fkeras.ops.registry import REGISTRY as _R
from fkeras.ops.registry import Op, apply

FUSABLE = frozenset((codes.LINEAR, codes.RELU, codes.SIGMOID, codes.TANH, codes.HARD_SIGMOID,
                     codes.ELU, codes.SELU, codes.SOFTPLUS, codes.SOFTSIGN, codes.EXPONENTIAL,
                     codes.LEAKY_RELU))


class Dense(Op):
    """y = act(x @ kernel + bias) over the last axis of x (any rank >= 2), one fused kernel."""

    name = "dense"
    device_native = True

    def output_spec(self, x, kernel, bias=None, activation=codes.LINEAR, alpha=0.0):
        xs, ks = su.shape_of(x), su.shape_of(kernel)
        if xs[-1] is not None and xs[-1] != ks[0]:
            raise ValueError(f"`dense`: the last axis of x ({xs}) must equal the kernel's first "
                             f"axis ({ks}).")
        return xs[:-1] + (ks[1],)

    def forward(self, dev, x, kernel, bias=None, activation=codes.LINEAR, alpha=0.0):
        K, N = kernel.shape
        M = x.size // K if K else int(np.prod(x.shape[:-1]))
        y = dev.empty(x.shape[:-1] + (N,))
        dev.kernels["dense_forward"](y, x, kernel, bias, M, N, K, activation, alpha)
        return y, (x, kernel, y, bias is not None)

    def backward(self, dev, saved, g, needs, activation=codes.LINEAR, alpha=0.0):
        x, kernel, y, has_bias = saved
        K, N = kernel.shape
        M = y.size // N if N else int(np.prod(y.shape[:-1]))
        dx = dev.empty(x.shape) if needs[0] else None
        dk = dev.empty(kernel.shape) if needs[1] else None
        db = dev.empty((N,)) if has_bias and needs[2] else None
        dev.kernels["dense_backward"](dx, dk, db, dev.contiguous(g), x, y, kernel,
                                      M, N, K, activation, alpha)
        return dx, dk, db


class Activation(Op):
    """An elementwise activation by code (fkeras.backend.codes)."""

    name = "activation"
    device_native = True

    def output_spec(self, x, code=codes.LINEAR, alpha=0.0):
        return su.shape_of(x)

    def forward(self, dev, x, code=codes.LINEAR, alpha=0.0):
        y = dev.empty(x.shape)
        dev.kernels["activation_forward"](y, x, x.size, code, alpha)
        return y, (x, y)

    def backward(self, dev, saved, g, needs, code=codes.LINEAR, alpha=0.0):
        x, y = saved
        dx = dev.empty(x.shape)
        dev.kernels["activation_backward"](dx, dev.contiguous(g), x, y, x.size, code, alpha)
        return (dx,)


class _SoftmaxBase(Op):
    fwd = bwd = None
    device_native = True

    def native_on(self, inputs, attrs):
        ndim = len(inputs[0].shape)  # the last axis only: other axes transpose on the host
        return su.normalize_axis(attrs.get("axis", -1), ndim, self.name) == ndim - 1

    def output_spec(self, x, axis=-1):
        shape = su.shape_of(x)
        su.normalize_axis(axis, len(shape), self.name)
        return shape

    def forward(self, dev, x, axis=-1):
        ax = su.normalize_axis(axis, x.ndim, self.name)
        xt = x if ax == x.ndim - 1 else np.ascontiguousarray(np.moveaxis(x, ax, -1))
        cols = xt.shape[-1]
        rows = xt.size // cols if cols else 0
        y = dev.empty(xt.shape)
        dev.kernels[self.fwd](y, xt, rows, cols)
        out = y if ax == x.ndim - 1 else np.ascontiguousarray(np.moveaxis(y, -1, ax))
        return out, (y, ax)

    def backward(self, dev, saved, g, needs, axis=-1):
        y, ax = saved
        gt = dev.contiguous(g if ax == g.ndim - 1 else np.moveaxis(g, ax, -1))
        cols = y.shape[-1]
        rows = y.size // cols if cols else 0
        dx = dev.empty(y.shape)
        dev.kernels[self.bwd](dx, gt, y, rows, cols)
        return (dx if ax == y.ndim - 1 else np.ascontiguousarray(np.moveaxis(dx, -1, ax)),)


class Softmax(_SoftmaxBase):
    name = "softmax"
    fwd, bwd = "softmax_forward", "softmax_backward"


class LogSoftmax(_SoftmaxBase):
    name = "log_softmax"
    fwd, bwd = "log_softmax_forward", "log_softmax_backward"


# ---- public functions ----

def dense(x, kernel, bias=None, activation="linear", alpha=0.0):
    """act(x @ kernel + bias): the Dense layer's op (fused when the activation allows)."""
    code = codes.ACTIVATION_CODES[activation] if isinstance(activation, str) else int(activation)
    if code in FUSABLE:
        return apply(_R["dense"], x, kernel, bias, activation=code, alpha=float(alpha))
    y = apply(_R["dense"], x, kernel, bias, activation=codes.LINEAR, alpha=0.0)
    return apply(_R["activation"], y, code=code, alpha=float(alpha))


def _act(name, code, alpha=0.0):
    def fn(x):
        return apply(_R["activation"], x, code=code, alpha=alpha)

    # Its real name: a layer's `activation=ops.relu` serializes by `__name__`.
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"keras.ops.{name}: the {name} activation, elementwise."
    return fn


relu = _act("relu", codes.RELU)
sigmoid = _act("sigmoid", codes.SIGMOID)
tanh = _act("tanh", codes.TANH)
selu = _act("selu", codes.SELU)
softplus = _act("softplus", codes.SOFTPLUS)
softsign = _act("softsign", codes.SOFTSIGN)
silu = _act("silu", codes.SWISH)
swish = silu
hard_sigmoid = _act("hard_sigmoid", codes.HARD_SIGMOID)
exponential = _act("exponential", codes.EXPONENTIAL)


def elu(x, alpha=1.0):
    return apply(_R["activation"], x, code=codes.ELU, alpha=float(alpha))


def leaky_relu(x, negative_slope=0.2):
    return apply(_R["activation"], x, code=codes.LEAKY_RELU, alpha=float(negative_slope))


def gelu(x, approximate=True):
    """Keras 3 default: approximate=True (the tanh form)."""
    return apply(_R["activation"], x, code=codes.GELU_TANH if approximate else codes.GELU,
                 alpha=0.0)


def linear(x):
    return x


def softmax(x, axis=-1):
    return apply(_R["softmax"], x, axis=axis)


def log_softmax(x, axis=-1):
    return apply(_R["log_softmax"], x, axis=axis)


# keras.ops.nn's other names resolve to the fkeras.ops functions (ops/groupings.py)
from fkeras.ops import groupings as _groupings  # noqa: E402

__getattr__ = _groupings.resolver(_groupings.NN, __name__)
