"""Subtract: inputs[0] - inputs[1] (exactly two inputs, broadcast on the non-batch axes)."""

from fkeras import ops
from fkeras.layers.merging.base_merge import Merge


class Subtract(Merge):
    """Subtracts the second of two inputs from the first.

    Example:
    ```python
    y = Subtract()([Input(shape=(8,)), Input(shape=(8,))])   # y.shape == (None, 8)
    ```
    """

    def compute_output_shape(self, input_shape):
        if len(input_shape) != 2:
            raise ValueError("A `Subtract` layer should be called on exactly 2 inputs. "
                             f"Received: input_shape={[tuple(s) for s in input_shape]}")
        return super().compute_output_shape(input_shape)

    def _merge(self, inputs):
        a, b = self._expand_to_same_rank(inputs)
        return ops.subtract(a, b)


def subtract(inputs, **kwargs):
    """Functional form of `Subtract`: `Subtract(**kwargs)(inputs)`."""
    return Subtract(**kwargs)(inputs)
