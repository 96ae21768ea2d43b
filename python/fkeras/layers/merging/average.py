"""Average: the elementwise mean of a list of tensors (broadcast on the non-batch axes)."""

from fkeras import ops
from fkeras.layers.merging.base_merge import Merge


class Average(Merge):
    """Averages a list of inputs elementwise: (x_1 + ... + x_n) / n.

    Example:
    ```python
    y = Average()([Input(shape=(8,)), Input(shape=(8,))])   # y.shape == (None, 8)
    ```
    """

    def _merge(self, inputs):
        inputs = self._expand_to_same_rank(inputs)
        out = inputs[0]
        for x in inputs[1:]:
            out = ops.add(out, x)
        return ops.divide(out, float(len(inputs)))


def average(inputs, **kwargs):
    """Functional form of `Average`: `Average(**kwargs)(inputs)`."""
    return Average(**kwargs)(inputs)
