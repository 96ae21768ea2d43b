"""Maximum and Minimum: the elementwise max / min of a list of tensors (broadcast)."""

from fkeras import ops
from fkeras.layers.merging.base_merge import Merge


class _Extremum(Merge):
    """Folds `_op` over the inputs (ties send the gradient to the earlier input)."""

    _op = None

    def _merge(self, inputs):
        inputs = self._expand_to_same_rank(inputs)
        out = inputs[0]
        for x in inputs[1:]:
            out = self._op(out, x)
        return out


class Maximum(_Extremum):
    """The elementwise maximum of a list of inputs.

    Example:
    ```python
    y = Maximum()([Input(shape=(8,)), Input(shape=(8,))])   # y.shape == (None, 8)
    ```
    """

    _op = staticmethod(ops.maximum)


class Minimum(_Extremum):
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
