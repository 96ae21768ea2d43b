"""Activation functions and activation layers as ONNX nodes.

`emit_activation(b, name, x)` writes one Keras activation (by its serialized name) on `x`.
Functions ONNX has as one op map to it; the others are short compositions of standard ops
(gelu through Erf or Tanh, swish as x * Sigmoid(x), ...).
"""

import math

from fkeras import activations
from fkeras.export.converters.base import converts, no_conversion
from fkeras.layers.activations.elu import ELU
from fkeras.layers.activations.leaky_relu import LeakyReLU
from fkeras.layers.activations.prelu import PReLU
from fkeras.layers.activations.relu import ReLU
from fkeras.layers.activations.softmax import Softmax
from fkeras.layers.core.activation import Activation

# Keras's SELU constants (ONNX's defaults differ in the 8th digit).
_SELU_ALPHA, _SELU_SCALE = 1.6732632423543772, 1.0507009873554805


def emit_gelu(b, x, approximate):
    """0.5 x (1 + erf(x / sqrt 2)), or the tanh approximation."""
    half_x = b.op("Mul", [x, b.scalar(0.5)])
    if approximate:
        cube = b.op("Mul", [b.op("Mul", [x, x]), x])
        inner = b.op("Add", [x, b.op("Mul", [cube, b.scalar(0.044715)])])
        t = b.op("Tanh", [b.op("Mul", [inner, b.scalar(math.sqrt(2.0 / math.pi))])])
    else:
        t = b.op("Erf", [b.op("Mul", [x, b.scalar(1.0 / math.sqrt(2.0))])])
    return b.op("Mul", [half_x, b.op("Add", [t, b.scalar(1.0)])])


def _sparse_plus(b, x):
    quad = b.op("Mul", [b.op("Mul", [b.op("Add", [x, b.scalar(1.0)])] * 2), b.scalar(0.25)])
    low = b.op("LessOrEqual", [x, b.scalar(-1.0)])
    high = b.op("GreaterOrEqual", [x, b.scalar(1.0)])
    y = b.op("Where", [high, x, quad])
    return b.op("Where", [low, b.scalar(0.0), y])


def _glu(b, x):
    a, g = b.op("Split", [x], outputs=2, axis=-1, num_outputs=2)
    return b.op("Mul", [a, b.op("Sigmoid", [g])])


_SIMPLE = {
    "relu": lambda b, x: b.op("Relu", [x]),
    "sigmoid": lambda b, x: b.op("Sigmoid", [x]),
    "tanh": lambda b, x: b.op("Tanh", [x]),
    "softmax": lambda b, x: b.op("Softmax", [x], axis=-1),
    "log_softmax": lambda b, x: b.op("LogSoftmax", [x], axis=-1),
    "elu": lambda b, x: b.op("Elu", [x], alpha=1.0),
    "selu": lambda b, x: b.op("Selu", [x], alpha=_SELU_ALPHA, gamma=_SELU_SCALE),
    "softplus": lambda b, x: b.op("Softplus", [x]),
    "softsign": lambda b, x: b.op("Softsign", [x]),
    "silu": lambda b, x: b.op("Mul", [x, b.op("Sigmoid", [x])]),
    "swish": lambda b, x: b.op("Mul", [x, b.op("Sigmoid", [x])]),
    "leaky_relu": lambda b, x: b.op("LeakyRelu", [x], alpha=0.2),
    "relu6": lambda b, x: b.op("Clip", [x, b.scalar(0.0), b.scalar(6.0)]),
    "hard_sigmoid": lambda b, x: b.op("HardSigmoid", [x], alpha=1.0 / 6.0, beta=0.5),
    "hard_silu": lambda b, x: b.op("HardSwish", [x]),
    "hard_swish": lambda b, x: b.op("HardSwish", [x]),
    "hard_tanh": lambda b, x: b.op("Clip", [x, b.scalar(-1.0), b.scalar(1.0)]),
    "exponential": lambda b, x: b.op("Exp", [x]),
    "linear": lambda b, x: x,
    "celu": lambda b, x: b.op("Celu", [x], alpha=1.0),
    "gelu": lambda b, x: emit_gelu(b, x, approximate=False),
    "hard_shrink": lambda b, x: b.op("Shrink", [x], lambd=0.5, bias=0.0),
    "soft_shrink": lambda b, x: b.op("Shrink", [x], lambd=0.5, bias=0.5),
    "log_sigmoid": lambda b, x: b.op("Neg", [b.op("Softplus", [b.op("Neg", [x])])]),
    "mish": lambda b, x: b.op("Mul", [x, b.op("Tanh", [b.op("Softplus", [x])])]),
    "tanh_shrink": lambda b, x: b.op("Sub", [x, b.op("Tanh", [x])]),
    "squareplus": lambda b, x: b.op("Mul", [b.op("Add", [x, b.op("Sqrt", [
        b.op("Add", [b.op("Mul", [x, x]), b.scalar(4.0)])])]), b.scalar(0.5)]),
    "sparse_plus": _sparse_plus,
    "sparse_sigmoid": lambda b, x: b.op("Clip", [
        b.op("Mul", [b.op("Add", [x, b.scalar(1.0)]), b.scalar(0.5)]),
        b.scalar(0.0), b.scalar(1.0)]),
    "glu": _glu,
}

# Exportable activation names (docs/export.md lists them); sparsemax and threshold are not.
EXPORTABLE_ACTIVATIONS = tuple(sorted(_SIMPLE))


def activation_name(fn):
    """The serialized name of an activation function."""
    return activations.serialize(fn)


def emit_activation(b, fn, x, layer):
    """Writes activation `fn` (a function or a name) on `x`; returns the output name.

    Raises:
        ValueError: naming `layer` when the activation has no ONNX form.
    """
    name = fn if isinstance(fn, str) else activation_name(fn)
    emit = _SIMPLE.get(name)
    if emit is None:
        raise no_conversion(layer, f'its activation "{name}" has no ONNX conversion '
                                   f"(exportable: {', '.join(EXPORTABLE_ACTIVATIONS)})")
    return emit(b, x)


@converts(Activation)
def convert_activation(call):
    return [emit_activation(call.b, call.layer.activation, call.x, call.layer)]


@converts(ReLU)
def convert_relu(call):
    # Keras 3's relu: x kept above the threshold (relu(x) for threshold 0), capped to
    # [0, max_value], minus negative_slope * relu(threshold - x).
    b, layer, x = call.b, call.layer, call.x
    slope, cap, thr = float(layer.negative_slope), layer.max_value, float(layer.threshold)
    if thr == 0.0:
        y = b.op("Relu", [x])
    else:
        keep = b.op("Cast", [b.op("Greater", [x, b.scalar(thr)])], to=1)
        y = b.op("Mul", [x, keep])
    if cap is not None:
        y = b.op("Clip", [y, b.scalar(0.0), b.scalar(float(cap))])
    if slope != 0.0:
        neg = b.op("Relu", [b.op("Sub", [b.scalar(thr), x])])
        y = b.op("Sub", [y, b.op("Mul", [neg, b.scalar(slope)])])
    return [y]


@converts(LeakyReLU)
def convert_leaky_relu(call):
    return [call.b.op("LeakyRelu", [call.x], alpha=float(call.layer.negative_slope))]


@converts(ELU)
def convert_elu(call):
    return [call.b.op("Elu", [call.x], alpha=float(call.layer.alpha))]


@converts(PReLU)
def convert_prelu(call):
    b = call.b
    alpha = b.const(call.weight(call.layer.alpha), f"{call.layer.name}/alpha")
    return [b.op("PRelu", [call.x, alpha])]


@converts(Softmax)
def convert_softmax(call):
    b, axis = call.b, call.layer.axis
    if call.kwargs.get("mask") is not None or call.masked:
        raise call.fail("a softmax mask is not part of the exported graph")
    axes = axis if isinstance(axis, list) else [axis]
    if len(axes) == 1:
        return [b.op("Softmax", [call.x], axis=int(axes[0]))]
    # Several axes: exp(x - max) / sum(exp(x - max)) over all of them.
    shifted = b.op("Sub", [call.x, b.reduce("ReduceMax", call.x, axes)])
    e = b.op("Exp", [shifted])
    return [b.op("Div", [e, b.reduce("ReduceSum", e, axes)])]

