"""Merge layers: Add, Subtract, Multiply, Average, Maximum, Minimum (ONNX broadcasting ops,
lower-rank inputs first gain axes at position 1 as Keras does), Concatenate, Dot (Einsum)."""

from fkeras.export.converters.base import converts
from fkeras.layers.merging.add import Add
from fkeras.layers.merging.average import Average
from fkeras.layers.merging.concatenate import Concatenate
from fkeras.layers.merging.dot import Dot
from fkeras.layers.merging.maximum import Maximum, Minimum
from fkeras.layers.merging.multiply import Multiply
from fkeras.layers.merging.subtract import Subtract

_VARIADIC = {Add: "Sum", Average: "Sum", Maximum: "Max", Minimum: "Min"}


def _same_rank(call):
    top = max(len(s) for s in call.in_shapes)
    out = []
    for name, shape in zip(call.inputs, call.in_shapes):
        missing = top - len(shape)
        out.append(call.b.unsqueeze(name, list(range(1, 1 + missing))) if missing else name)
    return out


@converts(Add, Average, Maximum, Minimum, Multiply, Subtract)
def convert_elementwise_merge(call):
    b, layer = call.b, call.layer
    xs = _same_rank(call)
    if isinstance(layer, Subtract):
        return [b.op("Sub", xs, hint=layer.name)]
    if isinstance(layer, Multiply):
        y = xs[0]
        for x in xs[1:]:
            y = b.op("Mul", [y, x], hint=layer.name)
        return [y]
    y = b.op(_VARIADIC[type(layer)], xs, hint=layer.name)
    if isinstance(layer, Average):
        y = b.op("Div", [y, b.scalar(float(len(xs)))])
    return [y]


@converts(Concatenate)
def convert_concatenate(call):
    return [call.b.op("Concat", call.inputs, axis=int(call.layer.axis), hint=call.layer.name)]


@converts(Dot)
def convert_dot(call):
    b, layer = call.b, call.layer
    s1, s2 = call.in_shapes
    a1, a2 = layer._pair(s1, s2)
    x1, x2 = call.inputs
    if layer.normalize:
        x1, x2 = _l2_normalize(b, x1, a1), _l2_normalize(b, x2, a2)
    letters = "bcdefghijklmnopqrstuvwxyz"
    left = ["a"] + [letters[i] for i in range(len(s1) - 1)]
    contracted = left[a1]
    right = ["a"] + [letters[len(s1) - 1 + i] for i in range(len(s2) - 1)]
    right[a2] = contracted
    out = [c for c in left if c != contracted] + [c for c in right[1:] if c != contracted]
    equation = f"{''.join(left)},{''.join(right)}->{''.join(out)}"
    y = b.op("Einsum", [x1, x2], equation=equation, hint=layer.name)
    if len(out) == 1:  # Keras gives (batch, 1)
        y = b.unsqueeze(y, [1])
    return [y]


def _l2_normalize(b, x, axis):
    norm = b.op("Sqrt", [b.reduce("ReduceSum", b.op("Mul", [x, x]), [axis])])
    return b.op("Div", [x, b.op("Max", [norm, b.scalar(1e-7)])])
