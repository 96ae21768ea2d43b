"""InputLayer and the `Input` function (Keras 2 and 3 signatures)."""

from fkeras.engine.dtypes import standardize_dtype
from fkeras.engine.keras_tensor import KerasTensor
from fkeras.engine.node import Node
from fkeras.layers.layer import Layer


def _as_shape(shape, what):
    if isinstance(shape, int):  # Keras 2 accepts Input(shape=5)
        return (shape,)
    try:
        return tuple(None if d is None else int(d) for d in shape)
    except TypeError:
        raise ValueError(f"Cannot convert '{shape}' to a shape ({what}).") from None


class InputLayer(Layer):
    """The entry point of a functional model: owns one node and one output tensor."""

    def __init__(self, shape=None, batch_size=None, dtype=None, sparse=None, ragged=None,
                 batch_shape=None, input_tensor=None, optional=False, name=None,
                 input_shape=None, batch_input_shape=None, **kwargs):
        if shape is None:
            shape = input_shape
        if batch_shape is None:
            batch_shape = batch_input_shape
        if shape is not None and batch_shape is not None:
            raise ValueError("You cannot pass both `shape` and `batch_shape` at the same time.")
        if batch_shape is not None:
            batch_shape = _as_shape(batch_shape, "batch_shape")
        elif shape is not None:
            batch_shape = (batch_size,) + _as_shape(shape, "shape")
        elif input_tensor is None:
            raise ValueError(
                "Please provide to Input either a `shape` or a `batch_shape` argument. Note "
                "that `shape` does not include the batch dimension."
            )
        if input_tensor is not None and dtype is None:
            dtype = input_tensor.dtype
        super().__init__(name=name, dtype=standardize_dtype(dtype), **kwargs)
        if input_tensor is not None:
            batch_shape = input_tensor.shape
        self.batch_shape = tuple(batch_shape)
        self._batch_input_shape = self.batch_shape
        self.sparse = bool(sparse)
        self.optional = optional
        self.built = True
        tensor = KerasTensor(self.batch_shape, dtype=self.dtype, name=self.name)
        Node(self, (), {}, tensor)
        self._output = tensor

    def call(self, inputs):
        return inputs

    def get_config(self):
        return {"batch_shape": self.batch_shape, "dtype": self.dtype, "sparse": self.sparse,
                "name": self.name}


def Input(shape=None, batch_size=None, dtype=None, sparse=None, batch_shape=None, name=None,
          tensor=None, optional=False, ragged=None, **kwargs):
    """Creates an InputLayer and returns its symbolic output tensor.

    Example:
    ```python
    x = Input(shape=(32,))      # x.shape == (None, 32)
    ```
    """
    if "batch_input_shape" in kwargs and batch_shape is None:
        batch_shape = kwargs.pop("batch_input_shape")
    if kwargs:
        raise ValueError(f"Unrecognized keyword arguments passed to Input: {kwargs}")
    layer = InputLayer(shape=shape, batch_size=batch_size, dtype=dtype, sparse=sparse,
                       batch_shape=batch_shape, input_tensor=tensor, optional=optional,
                       name=name)
    return layer._output
