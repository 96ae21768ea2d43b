"""Concatenate: joins a list of tensors along one axis."""

from fkeras import ops
from fkeras.layers.merging.base_merge import Merge
from fkeras.ops.registry import REGISTRY


class Concatenate(Merge):
    """Concatenates a list of inputs along `axis`; every other dimension must match.

    Args:
        axis: the concatenation axis (default -1).

    Example:
    ```python
    y = Concatenate()([Input(shape=(4, 3)), Input(shape=(4, 5))])   # y.shape == (None, 4, 8)
    ```
    """

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        if isinstance(axis, bool) or not isinstance(axis, int):
            raise ValueError(f"`axis` must be an int. Received: axis={axis!r}")
        self.axis = axis

    def compute_output_shape(self, input_shape):
        shapes = [tuple(s) for s in input_shape]
        rank = len(shapes[0])
        if any(len(s) != rank for s in shapes):
            raise ValueError("A `Concatenate` layer requires inputs with matching shapes except "
                             f"for the concatenation axis. Received: input_shape={shapes}")
        if not -rank <= self.axis < rank:
            raise ValueError(f'Invalid axis {self.axis} for layer "{self.name}": the inputs have '
                             f"rank {rank}. Received: input_shape={shapes}")
        return REGISTRY["concatenate"].output_spec(*[_Shaped(s) for s in shapes], axis=self.axis)

    def _merge(self, inputs):
        return ops.concatenate(inputs, axis=self.axis)

    def get_config(self):
        config = super().get_config()
        config["axis"] = self.axis
        return config


class _Shaped:
    def __init__(self, shape):
        self.shape = shape


def concatenate(inputs, axis=-1, **kwargs):
    """Functional form of `Concatenate`: `Concatenate(axis=axis, **kwargs)(inputs)`."""
    return Concatenate(axis=axis, **kwargs)(inputs)
