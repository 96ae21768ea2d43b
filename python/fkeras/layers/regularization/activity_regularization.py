"""ActivityRegularization: the identity, adding an L1/L2 penalty on its output to the losses."""

from fkeras import regularizers
from fkeras.layers.layer import Layer


class ActivityRegularization(Layer):
    """Returns its input and adds (l1 * sum|x| + l2 * sum x^2) / batch_size to the layer's
    losses on each eager call (Keras 2 and 3 divide by the batch size); `fit` adds it to the
    training loss, and its gradient flows back into the layers before.

    Args:
        l1: L1 factor (0).
        l2: L2 factor (0).

    Example:
    ```python
    y = ActivityRegularization(l1=1e-4)(Dense(8)(inputs))
    ```
    """

    def __init__(self, l1=0.0, l2=0.0, **kwargs):
        kwargs.pop("activity_regularizer", None)
        for name, value in (("l1", l1), ("l2", l2)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise ValueError(f"Invalid value for argument `{name}`: expected a non-negative "
                                 f"float. Received: {name}={value!r}")
        super().__init__(activity_regularizer=regularizers.L1L2(l1=l1, l2=l2), **kwargs)
        self.l1, self.l2 = float(l1), float(l2)
        self.supports_masking = True
        self.built = True

    def call(self, inputs):
        return inputs  # the base Layer adds the activity loss after each eager call

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        config = super().get_config()
        config.update({"l1": self.l1, "l2": self.l2})
        return config
