"""ActivityRegularization: the identity, adding an L1/L2 penalty on its output to the losses."""

from fkeras import ops
from fkeras.engine.keras_tensor import KerasTensor
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
        super().__init__(**kwargs)
        for name, value in (("l1", l1), ("l2", l2)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise ValueError(f"Invalid value for argument `{name}`: expected a non-negative "
                                 f"float. Received: {name}={value!r}")
        self.l1, self.l2 = float(l1), float(l2)
        self.supports_masking = True
        self.built = True

    def call(self, inputs):
        if not isinstance(inputs, KerasTensor) and (self.l1 or self.l2):
            loss = None
            if self.l1:
                loss = ops.multiply(ops.sum(ops.absolute(inputs)), self.l1)
            if self.l2:
                term = ops.multiply(ops.sum(ops.square(inputs)), self.l2)
                loss = term if loss is None else ops.add(loss, term)
            batch = inputs.shape[0] if len(inputs.shape) else 1
            self.add_loss(ops.divide(loss, float(max(batch, 1))))
        return inputs

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        config = super().get_config()
        config.update({"l1": self.l1, "l2": self.l2})
        return config
