"""ELU: x for x > 0, alpha * (exp(x) - 1) otherwise."""

from fkeras import ops
from fkeras.layers.layer import Layer


class ELU(Layer):
    """Exponential Linear Unit.

    Args:
        alpha: float, the scale of the negative section (default 1.0).

    Example:
    ```python
    y = ELU(alpha=0.5)(np.array([[-1.0, 2.0]]))   # [[0.5 * (exp(-1) - 1), 2.]]
    ```
    """

    _fk_float_inputs = True

    def __init__(self, alpha=1.0, **kwargs):
        super().__init__(**kwargs)
        self.alpha = alpha
        self.supports_masking = True
        self.built = True

    def call(self, inputs):
        return ops.elu(inputs, alpha=self.alpha)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        config = super().get_config()
        config["alpha"] = self.alpha
        return config
