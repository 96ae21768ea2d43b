"""OnnxBuilder: the nodes and initializers of one ONNX graph, built with `onnx.helper`.

Converters add nodes through `op(...)` and constants through `const(...)`/`ints(...)`; every
name is unique in the graph. The `onnx` package is imported when a builder is made (by
`export_onnx`), never when fkeras is imported.
"""

import hashlib

import numpy as np


class OnnxBuilder:
    """Collects ONNX nodes and initializers under unique names.

    Args:
        opset: the ONNX opset version of the default domain.
    """

    def __init__(self, opset):
        import onnx
        from onnx import helper, numpy_helper

        self.onnx, self.helper, self.numpy_helper = onnx, helper, numpy_helper
        self.opset = int(opset)
        self.nodes, self.initializers = [], []
        self._used = set()
        self._const_cache = {}

    def fresh(self, hint):
        """A graph-unique name starting with `hint`."""
        base = "".join(c if c.isalnum() or c in "_./:-" else "_" for c in str(hint)) or "t"
        name, k = base, 1
        while name in self._used:
            name, k = f"{base}_{k}", k + 1
        self._used.add(name)
        return name

    def reserve(self, name):
        """Marks `name` used (graph inputs); returns it unchanged."""
        if name in self._used:
            raise ValueError(f'The ONNX name "{name}" is used twice.')
        self._used.add(name)
        return name

    def const(self, value, hint="const", dtype=np.float32):
        """An initializer holding `value` (cast to `dtype`); returns its name."""
        array = np.array(value, dtype=dtype, order="C")  # keeps 0-d scalars 0-d
        # Equal constants are stored once (shapes, scalars, a shared layer's weights).
        key = (array.dtype.str, array.shape, hashlib.sha256(array.tobytes()).digest())
        if key in self._const_cache:
            return self._const_cache[key]
        name = self.fresh(hint)
        self.initializers.append(self.numpy_helper.from_array(array, name=name))
        self._const_cache[key] = name
        return name

    def ints(self, values, hint="shape"):
        """An int64 1-D initializer (shapes, axes, pads); returns its name."""
        return self.const(np.asarray(values, np.int64).reshape(-1), hint, np.int64)

    def op(self, op_type, inputs, outputs=1, hint=None, **attrs):
        """Adds one node; returns its output name (or the list of names when outputs > 1).

        `inputs` may hold "" for an omitted optional input; attributes that are None are left
        out."""
        hint = hint or op_type.lower()
        names = [self.fresh(hint if outputs == 1 else f"{hint}_{i}") for i in range(outputs)]
        attrs = {k: v for k, v in attrs.items() if v is not None}
        self.nodes.append(self.helper.make_node(op_type, list(inputs), names,
                                                name=self.fresh(f"{hint}_node"), **attrs))
        return names[0] if outputs == 1 else names

    # ---- small compositions used by many converters ----
    def transpose(self, x, perm, hint="transpose"):
        perm = [int(p) for p in perm]
        if perm == list(range(len(perm))):
            return x
        return self.op("Transpose", [x], hint=hint, perm=perm)

    def reshape(self, x, shape, hint="reshape"):
        """Reshape to `shape` (ONNX rules: 0 copies the input's dimension, -1 is inferred)."""
        return self.op("Reshape", [x, self.ints(shape)], hint=hint)

    def scalar(self, value, dtype=np.float32):
        return self.const(np.asarray(value, dtype), "scalar", dtype)

    def unsqueeze(self, x, axes):
        return self.op("Unsqueeze", [x, self.ints(axes, "axes")])

    def squeeze(self, x, axes):
        return self.op("Squeeze", [x, self.ints(axes, "axes")])

    def reduce(self, op_type, x, axes, keepdims=1):
        """ReduceMean/ReduceSum/ReduceMax/... over `axes` (opset 18: axes are an input)."""
        return self.op(op_type, [x, self.ints(axes, "axes")], keepdims=int(keepdims))

    def slice(self, x, starts, ends, axes, steps=None):
        inputs = [x, self.ints(starts, "starts"), self.ints(ends, "ends"), self.ints(axes, "axes")]
        if steps is not None:
            inputs.append(self.ints(steps, "steps"))
        return self.op("Slice", inputs)

    def reverse_axis(self, x, axis):
        """`x` reversed along `axis` (a Slice with step -1)."""
        big = np.iinfo(np.int64).max
        return self.slice(x, [-1], [-big], [axis], [-1])

    def dims(self, x, start, end=None):
        """The 1-D int64 tensor `shape(x)[start:end]` (for dynamic reshapes)."""
        return self.op("Shape", [x], start=int(start), end=None if end is None else int(end))

    def concat_shape(self, parts):
        """Concatenates 1-D int64 pieces: names of shape tensors or lists of ints."""
        names = [p if isinstance(p, str) else self.ints(p) for p in parts]
        return names[0] if len(names) == 1 else self.op("Concat", names, axis=0)
