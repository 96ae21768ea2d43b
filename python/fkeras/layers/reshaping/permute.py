"""Permute: reorders the non-batch axes of the input."""

from fkeras import ops
from fkeras.engine.input_spec import InputSpec
from fkeras.layers.layer import Layer


class Permute(Layer):
    """Permutes the dimensions of the input according to `dims` (the batch axis stays first).

    Args:
        dims: a tuple of ints, a permutation of 1..rank-1 (1-based: 1 is the first non-batch
            axis). (2, 1) swaps the first two non-batch axes.

    Example:
    ```python
    y = Permute((2, 1))(Input(shape=(10, 64)))   # y.shape == (None, 64, 10)
    ```
    """

    def __init__(self, dims, **kwargs):
        super().__init__(**kwargs)
        try:
            dims = tuple(dims)
        except TypeError:
            dims = (dims,)
        if any(isinstance(d, bool) or not isinstance(d, int) for d in dims) or \
                sorted(dims) != list(range(1, len(dims) + 1)):
            raise ValueError("Invalid permutation argument `dims` for Permute Layer. The set of "
                             "indices in `dims` must be consecutive and start from 1. "
                             f"Received dims={dims}")
        self.dims = dims
        self.input_spec = InputSpec(ndim=len(self.dims) + 1)
        self.built = True

    def compute_output_shape(self, input_shape):
        input_shape = tuple(input_shape)
        return (input_shape[0],) + tuple(input_shape[d] for d in self.dims)

    def call(self, inputs):
        return ops.transpose(inputs, (0,) + self.dims)

    def get_config(self):
        config = super().get_config()
        config["dims"] = self.dims
        return config
