"""Raw `fkeras.ops` calls recorded in a Functional graph (OpLayer nodes: `x + y`,
`ops.concatenate`, `x[:, 1:3]`, ...): the common elementwise, reduction and rearranging ops.
Constant operands (Python numbers, NumPy arrays) become float32 initializers."""

import numpy as np

from fkeras.backend import codes
from fkeras.export.converters.activations import emit_activation, emit_gelu
from fkeras.export.converters.base import converts
from fkeras.layers.op_layer import OpLayer

_BINARY = {"add": "Add", "subtract": "Sub", "multiply": "Mul", "divide": "Div",
           "true_divide": "Div", "maximum": "Max", "minimum": "Min", "power": "Pow",
           "matmul": "MatMul"}
_UNARY = {"exp": "Exp", "log": "Log", "sqrt": "Sqrt", "abs": "Abs", "absolute": "Abs",
          "negative": "Neg", "tanh": "Tanh", "sin": "Sin", "cos": "Cos", "floor": "Floor",
          "ceil": "Ceil", "sign": "Sign", "erf": "Erf", "reciprocal": "Reciprocal"}
_ACTIVATIONS = {"relu", "sigmoid", "softplus", "softsign", "silu", "swish", "relu6", "elu",
                "selu", "hard_sigmoid", "hard_silu", "log_sigmoid", "mish", "celu"}
_REDUCE = {"mean": "ReduceMean", "sum": "ReduceSum", "max": "ReduceMax", "min": "ReduceMin",
           "prod": "ReduceProd", "amax": "ReduceMax", "amin": "ReduceMin"}

_CODE_NAMES = {v: k for k, v in codes.ACTIVATION_CODES.items() if k not in ("swish", "gelu_tanh")}

SUPPORTED_OPS = tuple(sorted(set(_BINARY) | set(_UNARY) | _ACTIVATIONS | set(_REDUCE) | {
    "activation",
    "square", "softmax", "log_softmax", "concatenate", "reshape", "transpose",
    "expand_dims", "squeeze", "getitem"}))


def _operands(call):
    """The op's positional arguments as ONNX names (constants become initializers)."""
    args = call.args
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = list(args[0])
    out = []
    for a in args:
        if isinstance(a, str) and a in call.inputs:
            out.append(a)
        else:
            out.append(call.b.const(np.asarray(a, np.float32), "constant"))
    return out


def _axes(axis, rank):
    if axis is None:
        return list(range(rank))
    axis = axis if isinstance(axis, (list, tuple)) else [axis]
    return [int(a) % rank for a in axis]


def _getitem(call, x, key):
    """Basic indexing: slices (any step), integers, `...` and None (new axes)."""
    key = key if isinstance(key, tuple) else (key,)
    if sum(k is Ellipsis for k in key) > 1:
        raise call.fail("an index with several `...` has no ONNX conversion")
    used = sum(1 for k in key if k is not None and k is not Ellipsis)
    if Ellipsis in key:
        i = key.index(Ellipsis)
        key = key[:i] + (slice(None),) * (call.rank - used) + key[i + 1:]
    starts, ends, axes, steps, squeeze, new_axes = [], [], [], [], [], []
    big = np.iinfo(np.int64).max
    axis = out_axis = 0
    for k in key:
        if k is None:
            new_axes.append(out_axis)
            out_axis += 1
            continue
        if isinstance(k, slice):
            if k != slice(None):
                step = 1 if k.step is None else int(k.step)
                starts.append(int(k.start) if k.start is not None else (0 if step > 0 else -1))
                ends.append(int(k.stop) if k.stop is not None else (big if step > 0 else -big))
                axes.append(axis)
                steps.append(step)
            out_axis += 1
        elif isinstance(k, (int, np.integer)):
            starts.append(int(k))
            ends.append(int(k) + 1 if int(k) != -1 else big)
            axes.append(axis)
            steps.append(1)
            squeeze.append(axis)
        else:
            raise call.fail(f"indexing with {type(k).__name__} has no ONNX conversion")
        axis += 1
    b = call.b
    y = b.slice(x, starts, ends, axes, steps) if axes else x
    y = b.squeeze(y, squeeze) if squeeze else y
    return b.unsqueeze(y, new_axes) if new_axes else y


def _activation_code(call, x, code, alpha):
    """The fused activation op (`ops.relu`, `ops.gelu`, ...) by its kernel code."""
    b = call.b
    if code == codes.ELU:
        return b.op("Elu", [x], alpha=alpha)
    if code == codes.LEAKY_RELU:
        return b.op("LeakyRelu", [x], alpha=alpha)
    if code == codes.GELU_TANH:
        return emit_gelu(b, x, approximate=True)
    if code not in _CODE_NAMES:
        raise call.fail(f"activation code {code} has no ONNX conversion")
    return emit_activation(b, _CODE_NAMES[code], x, call.layer)


@converts(OpLayer)
def convert_op(call):
    b, layer = call.b, call.layer
    name, attrs = layer.op.name, layer.attrs
    xs = _operands(call)
    rank = call.rank if call.in_shapes else 0
    if name in _BINARY:
        return [b.op(_BINARY[name], xs, hint=layer.name)]
    if name in _UNARY:
        return [b.op(_UNARY[name], xs, hint=layer.name)]
    if name in _ACTIVATIONS:
        return [emit_activation(b, name, xs[0], layer)]
    if name == "activation":
        return [_activation_code(call, xs[0], int(attrs["code"]), float(attrs.get("alpha", 0)))]
    if name == "square":
        return [b.op("Mul", [xs[0], xs[0]], hint=layer.name)]
    if name in ("softmax", "log_softmax"):
        op = "Softmax" if name == "softmax" else "LogSoftmax"
        return [b.op(op, [xs[0]], axis=int(attrs.get("axis", -1)), hint=layer.name)]
    if name in _REDUCE:
        return [b.reduce(_REDUCE[name], xs[0], _axes(attrs.get("axis"), rank),
                         keepdims=int(bool(attrs.get("keepdims", False))))]
    if name == "concatenate":
        return [b.op("Concat", xs, axis=int(attrs.get("axis", 0)), hint=layer.name)]
    if name == "reshape":
        shape = [int(d) for d in attrs["newshape"]]
        if 0 in shape:
            raise call.fail("a target dimension of size 0 is not supported")
        return [b.reshape(xs[0], shape, hint=layer.name)]
    if name == "transpose":
        axes = attrs.get("axes")
        perm = list(reversed(range(rank))) if axes is None else [int(a) % rank for a in axes]
        return [b.transpose(xs[0], perm, hint=layer.name)]
    if name == "expand_dims":
        return [b.unsqueeze(xs[0], _axes(attrs["axis"], rank + 1))]
    if name == "squeeze":
        axis = attrs.get("axis")
        if axis is None:
            axis = [i for i, d in enumerate(call.shape) if d == 1]
        return [b.squeeze(xs[0], _axes(axis, rank))]
    if name == "getitem":
        return [_getitem(call, xs[0], attrs["key"])]
    raise call.fail(f'the raw op "{name}" has no ONNX conversion (exportable ops: '
                    f"{', '.join(SUPPORTED_OPS)})")
