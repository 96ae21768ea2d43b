"""ReLU: max(x, 0) with Keras's max_value, negative_slope and threshold options."""

from fkeras import ops
from fkeras.layers.layer import Layer
from fkeras.ops import math as fmath


class ReLU(Layer):
    """Rectified Linear Unit activation layer.

    f(x) = max_value if x >= max_value; x if threshold <= x < max_value;
    negative_slope * (x - threshold) otherwise.

    Args:
        max_value: float >= 0 or None (unbounded).
        negative_slope: float >= 0, the slope below the threshold (default 0).
        threshold: float >= 0, the threshold (default 0).

    Example:
    ```python
    y = ReLU(max_value=6.0)(np.array([[-1.0, 3.0, 8.0]]))   # [[0., 3., 6.]]
    ```
    """

    _fk_float_inputs = True

    def __init__(self, max_value=None, negative_slope=0.0, threshold=0.0, **kwargs):
        super().__init__(**kwargs)
        if max_value is not None and max_value < 0.0:
            raise ValueError("max_value of a ReLU layer cannot be a negative value. "
                             f"Received: max_value={max_value}")
        if negative_slope is None or negative_slope < 0.0:
            raise ValueError("negative_slope of a ReLU layer cannot be None or a negative "
                             f"value. Received: negative_slope={negative_slope}")
        if threshold is None or threshold < 0.0:
            raise ValueError("threshold of a ReLU layer cannot be None or a negative value. "
                             f"Received: threshold={threshold}")
        self.max_value = max_value
        self.negative_slope = negative_slope
        self.threshold = threshold
        self.supports_masking = True
        self.built = True

    def call(self, inputs):
        if self.max_value is None and self.threshold == 0:
            if self.negative_slope == 0:
                return ops.relu(inputs)          # one activation kernel
            return ops.leaky_relu(inputs, negative_slope=self.negative_slope)
        return fmath.relu_general(inputs, negative_slope=self.negative_slope,
                                  max_value=self.max_value, threshold=self.threshold)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        config = super().get_config()
        config.update({"max_value": self.max_value, "negative_slope": self.negative_slope,
                       "threshold": self.threshold})
        return config
