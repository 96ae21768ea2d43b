"""The converter table and the `Call` each converter receives.

A converter is `fn(call) -> list of output names` (one per output tensor of the layer call,
in the order of the call's flattened outputs). It reads the layer's weights and settings from
`call.layer`, its inputs from `call.inputs` (ONNX names) and `call.in_shapes` (the symbolic
shapes, batch as None), and adds nodes through `call.b` (an `OnnxBuilder`).
"""

import numpy as np

CONVERTERS = {}


def converts(*classes):
    """Registers the decorated function as the converter of `classes` (exact classes)."""
    def register(fn):
        for cls in classes:
            CONVERTERS[cls] = fn
        return fn
    return register


def describe(layer):
    return f'layer "{layer.name}" (of class {type(layer).__name__})'


def no_conversion(layer, why=None):
    """The ValueError for a layer (or a setting of it) that has no ONNX conversion."""
    reason = f": {why}" if why else "."
    return ValueError(f"Cannot export {describe(layer)} to ONNX: it has no ONNX "
                      f"conversion{reason}")


def find_converter(layer):
    """The converter of `layer`'s class, or of a built-in base class whose `call` the layer's
    class does not override (a subclass that only changes `__init__` exports as its base)."""
    cls = type(layer)
    fn = CONVERTERS.get(cls)
    if fn is not None:
        return fn
    for base in cls.__mro__[1:]:
        if base in CONVERTERS and getattr(cls, "call", None) is getattr(base, "call", None):
            return CONVERTERS[base]
    raise no_conversion(layer)


class Call:
    """One call of one layer, as the converters see it.

    Attributes:
        b: the OnnxBuilder.
        layer: the layer.
        inputs: ONNX names of the call's tensor inputs, in flattened order.
        in_shapes: their symbolic shapes (tuples, None for unknown sizes).
        out_shapes: the symbolic shapes of the call's outputs.
        args, kwargs: the call's arguments with each tensor replaced by its ONNX name.
        masked: whether any input carries a Keras mask.
    """

    def __init__(self, b, layer, inputs, in_shapes, out_shapes, args=None, kwargs=None,
                 masked=False):
        self.b, self.layer = b, layer
        self.inputs, self.in_shapes, self.out_shapes = list(inputs), list(in_shapes), \
            list(out_shapes)
        self.args = list(args) if args is not None else [inputs[0]] if inputs else []
        self.kwargs = dict(kwargs or {})
        self.masked = masked

    @property
    def x(self):
        return self.inputs[0]

    @property
    def shape(self):
        return self.in_shapes[0]

    @property
    def rank(self):
        return len(self.in_shapes[0])

    def fail(self, why):
        return no_conversion(self.layer, why)

    def refuse_mask(self):
        if self.masked:
            raise self.fail("its input carries a Keras mask (Masking, Embedding(mask_zero="
                            "True)), and masks are not part of the exported graph")

    def weight(self, variable, dtype=np.float32):
        """The value of a layer variable as a NumPy array."""
        return np.asarray(variable.numpy() if hasattr(variable, "numpy") else variable,
                          dtype=dtype)

    def sub(self, layer, inputs, in_shapes, out_shapes, **kwargs):
        """Converts a sub-layer (wrappers, attention projections) on the given inputs."""
        call = Call(self.b, layer, inputs, in_shapes, out_shapes, kwargs=kwargs,
                    masked=self.masked)
        return find_converter(layer)(call)


def channels_to_front(b, x, rank):
    """(N, *spatial, C) -> (N, C, *spatial) for a tensor of `rank` dimensions."""
    return b.transpose(x, [0, rank - 1] + list(range(1, rank - 1)))


def channels_to_back(b, x, rank):
    """(N, C, *spatial) -> (N, *spatial, C)."""
    return b.transpose(x, [0] + list(range(2, rank)) + [1])
