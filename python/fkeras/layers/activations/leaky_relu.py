"""LeakyReLU: x for x >= 0, negative_slope * x otherwise."""

import warnings

from fkeras import ops
from fkeras.layers.layer import Layer


class LeakyReLU(Layer):
    """Leaky version of a Rectified Linear Unit.

    Args:
        negative_slope: float >= 0, the slope for x < 0 (default 0.3). Keras 2's name `alpha`
            is accepted too (with Keras 3's deprecation warning).

    Example:
    ```python
    y = LeakyReLU(negative_slope=0.5)(np.array([[-2.0, 3.0]]))   # [[-1., 3.]]
    ```
    """

    _fk_float_inputs = True

    def __init__(self, negative_slope=0.3, **kwargs):
        if "alpha" in kwargs:
            negative_slope = kwargs.pop("alpha")
            warnings.warn("Argument `alpha` is deprecated. Use `negative_slope` instead.",
                          stacklevel=2)
        super().__init__(**kwargs)
        if negative_slope is None or negative_slope < 0:
            raise ValueError("The negative_slope value of a Leaky ReLU layer cannot be None or "
                             f"negative value. Expected a float. Received: "
                             f"negative_slope={negative_slope}")
        self.negative_slope = negative_slope
        self.supports_masking = True
        self.built = True

    def call(self, inputs):
        return ops.leaky_relu(inputs, negative_slope=self.negative_slope)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        config = super().get_config()
        config["negative_slope"] = self.negative_slope
        return config
