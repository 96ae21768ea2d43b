"""Multiply: the elementwise product of a list of tensors (broadcast on the non-batch axes)."""

from fkeras import ops
from fkeras.layers.merging.base_merge import ElementwiseMerge


class Multiply(ElementwiseMerge):
    """Multiplies a list of inputs elementwise.

    Example:
    ```python
    y = Multiply()([Input(shape=(4, 5)), Input(shape=(4, 1))])   # y.shape == (None, 4, 5)
    ```
    """

    _op = staticmethod(ops.multiply)


def multiply(inputs, **kwargs):
    """Functional form of `Multiply`: `Multiply(**kwargs)(inputs)`."""
    return Multiply(**kwargs)(inputs)
