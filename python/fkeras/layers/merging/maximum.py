"""Maximum and Minimum: the elementwise max / min of a list of tensors (broadcast; ties send
the gradient to the earlier input)."""

from fkeras import ops
from fkeras.layers.merging.base_merge import ElementwiseMerge


class Maximum(ElementwiseMerge):
    """The elementwise maximum of a list of inputs.

    Example:
    ```python
    y = Maximum()([Input(shape=(8,)), Input(shape=(8,))])   # y.shape == (None, 8)
    ```
    """

    _op = staticmethod(ops.maximum)


class Minimum(ElementwiseMerge):
    """The elementwise minimum of a list of inputs.

    Example:
    ```python
    y = Minimum()([Input(shape=(8,)), Input(shape=(8,))])   # y.shape == (None, 8)
    ```
    """

    _op = staticmethod(ops.minimum)


def maximum(inputs, **kwargs):
    """Functional form of `Maximum`: `Maximum(**kwargs)(inputs)`."""
    return Maximum(**kwargs)(inputs)


def minimum(inputs, **kwargs):
    """Functional form of `Minimum`: `Minimum(**kwargs)(inputs)`."""
    return Minimum(**kwargs)(inputs)
