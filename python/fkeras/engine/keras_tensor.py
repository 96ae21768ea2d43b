"""KerasTensor: a symbolic tensor (static shape with None for unknown dims, dtype, history).

`_keras_history` is a KerasHistory (layer, node_index, tensor_index) once a layer produced
the tensor; ops on KerasTensors infer shapes through their `output_spec`.
"""

import collections


class KerasHistory(collections.namedtuple("KerasHistory", ["layer", "node_index", "tensor_index"])):
    """Where a symbolic tensor came from: layer._inbound_nodes[node_index].outputs[tensor_index]."""

    __slots__ = ()

    @property
    def operation(self):  # Keras 3 name of the field
        return self.layer


def _shape_tuple(shape):
    out = []
    for d in shape:
        if d is None:
            out.append(None)
        else:
            d = int(d)
            if d < 0:
                raise ValueError(f"Negative dimension in shape {tuple(shape)}.")
            out.append(d)
    return tuple(out)


class KerasTensor:
    """A symbolic tensor: what flows between layers while a model is being described."""

    __array_priority__ = 100  # numpy defers to our operators

    def __init__(self, shape, dtype="float32", name=None, history=None):
        self.shape = _shape_tuple(shape)
        self.dtype = str(dtype)
        self.name = name or "keras_tensor"
        self._keras_history = history

    @property
    def ndim(self):
        return len(self.shape)

    def __repr__(self):
        return f"<KerasTensor shape={self.shape}, dtype={self.dtype}, name={self.name}>"

    def __len__(self):
        raise TypeError("A symbolic KerasTensor has no len(); use its .shape.")

    def __iter__(self):
        raise TypeError("A symbolic KerasTensor is not iterable.")

    def __bool__(self):
        raise TypeError("A symbolic KerasTensor cannot be used as a Python bool.")

    def numpy(self):
        raise ValueError(
            "A KerasTensor is symbolic: it holds a shape and dtype, not values. Build a Model "
            "from it and call the model on data to get values."
        )

    # Arithmetic routes through fkeras.ops, so `x + y` works in a functional graph.
    def _op(self, name, *args):
        from fkeras import ops

        return getattr(ops, name)(*args)

    def __add__(self, other):
        return self._op("add", self, other)

    def __radd__(self, other):
        return self._op("add", other, self)

    def __sub__(self, other):
        return self._op("subtract", self, other)

    def __rsub__(self, other):
        return self._op("subtract", other, self)

    def __mul__(self, other):
        return self._op("multiply", self, other)

    def __rmul__(self, other):
        return self._op("multiply", other, self)

    def __truediv__(self, other):
        return self._op("divide", self, other)

    def __rtruediv__(self, other):
        return self._op("divide", other, self)

    def __matmul__(self, other):
        return self._op("matmul", self, other)

    def __rmatmul__(self, other):
        return self._op("matmul", other, self)

    def __neg__(self):
        return self._op("negative", self)

    def __pow__(self, other):
        return self._op("power", self, other)

    def __rpow__(self, other):
        return self._op("power", other, self)

    def __floordiv__(self, other):
        return self._op("floor_divide", self, other)

    def __rfloordiv__(self, other):
        return self._op("floor_divide", other, self)

    def __mod__(self, other):
        return self._op("mod", self, other)

    def __rmod__(self, other):
        return self._op("mod", other, self)

    def __pos__(self):
        return self

    def __abs__(self):
        return self._op("absolute", self)

    def __invert__(self):
        return self._op("logical_not" if self.dtype == "bool" else "bitwise_invert", self)

    def _logic(self, kind, a, b):
        from fkeras.engine.operators import _logic

        return _logic(kind, a, b)

    def __and__(self, other):
        return self._logic("and", self, other)

    def __rand__(self, other):
        return self._logic("and", other, self)

    def __or__(self, other):
        return self._logic("or", self, other)

    def __ror__(self, other):
        return self._logic("or", other, self)

    def __xor__(self, other):
        return self._logic("xor", self, other)

    def __rxor__(self, other):
        return self._logic("xor", other, self)

    # Ordering comparisons build graph nodes as in Keras 3; `==`/`!=` keep Python identity
    # semantics here (KerasTensors are dictionary keys in the graph code).
    def __lt__(self, other):
        return self._op("less", self, other)

    def __le__(self, other):
        return self._op("less_equal", self, other)

    def __gt__(self, other):
        return self._op("greater", self, other)

    def __ge__(self, other):
        return self._op("greater_equal", self, other)

    def __getitem__(self, key):
        from fkeras import ops

        return ops.getitem(self, key)


def is_keras_tensor(x):
    return isinstance(x, KerasTensor)
