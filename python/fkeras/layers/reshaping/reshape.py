"""Reshape: gives the non-batch dimensions a new shape (at most one -1, inferred)."""

import numpy as np

from fkeras import ops
from fkeras.engine.keras_tensor import KerasTensor
from fkeras.layers.layer import Layer


def reshape_output_shape(input_shape, target_shape):
    """The non-batch output shape (Keras 3's rule and texts; None where it cannot be inferred)."""
    input_shape, target_shape = tuple(input_shape), tuple(target_shape)
    if None in input_shape:
        return tuple(None if d == -1 else d for d in target_shape)
    size = int(np.prod(input_shape))
    if -1 not in target_shape:
        if size != int(np.prod(target_shape)):
            raise ValueError("The total size of the tensor must be unchanged. Received: "
                             f"input_shape={input_shape}, target_shape={target_shape}")
        return target_shape
    known = int(np.prod([d for d in target_shape if d != -1]))
    if known == 0 or size % known:
        # "cannot by divided" is Keras 3's wording, kept verbatim for users matching on it.
        raise ValueError(
            "The total size of the tensor must be unchanged, however, the input size cannot by "
            "divided by the specified dimensions in target_shape. Received: "
            f"input_shape={input_shape}, target_shape={target_shape}")
    return tuple(size // known if d == -1 else d for d in target_shape)


class Reshape(Layer):
    """Reshapes its input to `target_shape` (batch dimension excluded).

    Args:
        target_shape: a tuple of ints; one entry may be -1 (inferred from the input size).

    Example:
    ```python
    y = Reshape((-1, 3))(Input(shape=(32, 28, 3)))   # y.shape == (None, 896, 3)
    ```
    """

    def __init__(self, target_shape, **kwargs):
        super().__init__(**kwargs)
        try:
            target = tuple(int(d) for d in target_shape)
        except (TypeError, ValueError):
            raise ValueError("`target_shape` must be a tuple of integers. Received: "
                             f"target_shape={target_shape}") from None
        if target.count(-1) > 1:
            raise ValueError("There must be at most one unknown dimension (-1) in "
                             f"`target_shape`. Received: target_shape={target}.")
        if any(d < -1 for d in target):
            raise ValueError("Each dimension in `target_shape` must be a non-negative integer, "
                             "or `-1` for a single unknown dimension. Received: "
                             f"target_shape={target}.")
        self.target_shape = target
        self.built = True

    def compute_output_shape(self, input_shape):
        input_shape = tuple(input_shape)
        return (input_shape[0],) + reshape_output_shape(input_shape[1:], self.target_shape)

    def call(self, inputs):
        if isinstance(inputs, KerasTensor):
            return KerasTensor(self.compute_output_shape(inputs.shape), inputs.dtype)
        shape = np.shape(inputs)
        return ops.reshape(inputs, (shape[0],) + reshape_output_shape(shape[1:],
                                                                      self.target_shape))

    def get_config(self):
        config = super().get_config()
        config["target_shape"] = self.target_shape
        return config
