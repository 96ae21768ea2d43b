"""Add: the elementwise sum of a list of tensors (broadcast on the non-batch axes)."""

from fkeras import ops
from fkeras.layers.merging.base_merge import ElementwiseMerge


class Add(ElementwiseMerge):
    """Adds a list of inputs, all of the same shape up to broadcasting.

    Example:
    ```python
    y = Add()([Input(shape=(4, 1)), Input(shape=(4, 5))])   # y.shape == (None, 4, 5)
    ```
    """

    _op = staticmethod(ops.add)


def add(inputs, **kwargs):
    """Functional form of `Add`: `Add(**kwargs)(inputs)`."""
    return Add(**kwargs)(inputs)
