"""RepeatVector: (N, D) -> (N, n, D), the input repeated n times along a new axis 1."""

from fkeras import ops
from fkeras.engine.input_spec import InputSpec
from fkeras.layers.layer import Layer
from fkeras.ops import reshape_ops as fshape


class RepeatVector(Layer):
    """Repeats the input `n` times.

    Args:
        n: positive int, the repetition factor.

    Example:
    ```python
    y = RepeatVector(3)(Input(shape=(32,)))   # y.shape == (None, 3, 32)
    ```
    """

    def __init__(self, n, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(n, int) or isinstance(n, bool):
            raise TypeError(f"Expected an integer value for `n`, got {type(n)}.")
        if n <= 0:
            raise ValueError(f"Argument `n` should be a positive integer. Received: n={n}")
        self.n = n
        self.input_spec = InputSpec(ndim=2)
        self.built = True

    def compute_output_shape(self, input_shape):
        return (tuple(input_shape)[0], self.n, tuple(input_shape)[1])

    def call(self, inputs):
        return fshape.repeat(ops.expand_dims(inputs, 1), self.n, axis=1)

    def get_config(self):
        config = super().get_config()
        config["n"] = self.n
        return config
