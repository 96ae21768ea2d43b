"""Multiply: the elementwise product of a list of tensors (broadcast on the non-batch axes)."""

from fkeras import ops
from fkeras.layers.merging.base_merge import Merge


class Multiply(Merge):
    """Multiplies a list of inputs elementwise.

    Example:
    ```python
    y = Multiply()([Input(shape=(4, 5)), Input(shape=(4, 1))])   # y.shape == (None, 4, 5)
    ```
    """

    def _merge(self, inputs):
        inputs = self._expand_to_same_rank(inputs)
        out = inputs[0]
        for x in inputs[1:]:
            out = ops.multiply(out, x)
        return out


def multiply(inputs, **kwargs):
    """Functional form of `Multiply`: `Multiply(**kwargs)(inputs)`."""
    return Multiply(**kwargs)(inputs)
