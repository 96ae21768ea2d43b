"""KerasTensor: a symbolic tensor (static shape with None for unknown dims, dtype, history).

`_keras_history` is a KerasHistory (layer, node_index, tensor_index) once a layer produced
the tensor; ops on KerasTensors infer shapes through their `output_spec`.
"""

import collections

from fkeras.engine.operators import TensorOperators


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


class KerasTensor(TensorOperators):
    """A symbolic tensor: what flows between layers while a model is being described."""

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

    # Operators route through fkeras.ops (the mixin shared with eager tensors), so `x + y`,
    # `x > 0`, `x[:, 1]` work symbolically; `==` stays identity, as Keras 3's KerasTensor.
    __eq__ = object.__eq__
    __hash__ = object.__hash__

    def __pos__(self):
        return self


def is_keras_tensor(x):
    return isinstance(x, KerasTensor)
