"""Average: the elementwise mean of a list of tensors (broadcast on the non-batch axes)."""

from fkeras import ops
from fkeras.layers.merging.base_merge import ElementwiseMerge


class Average(ElementwiseMerge):
    """Averages a list of inputs elementwise: (x_1 + ... + x_n) / n.

    Example:
    ```python
    y = Average()([Input(shape=(8,)), Input(shape=(8,))])   # y.shape == (None, 8)
    ```
    """

    _fk_float_inputs = True
    _op = staticmethod(ops.add)

    def _merge(self, inputs):
        return ops.divide(super()._merge(inputs), float(len(inputs)))


def average(inputs, **kwargs):
    """Functional form of `Average`: `Average(**kwargs)(inputs)`."""
    return Average(**kwargs)(inputs)
