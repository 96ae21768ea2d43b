"""Flatten: (N, d1, ..., dk) -> (N, d1 * ... * dk), channels-last order in both data formats."""

import numpy as np

from fkeras import config, ops
from fkeras.engine.input_spec import InputSpec
from fkeras.engine.keras_tensor import KerasTensor
from fkeras.layers.layer import Layer


class Flatten(Layer):
    """Flattens the input, keeping the batch dimension.

    With `data_format="channels_first"` (the default when image_data_format is channels_first)
    the input is first transposed to channels-last order, as Keras does, so a following Dense
    layer's weights mean the same thing in both formats.

    Args:
        data_format: "channels_last", "channels_first" or None (the configured default).

    Example:
    ```python
    y = Flatten()(Input(shape=(4, 4, 3)))   # y.shape == (None, 48)
    ```
    """

    def __init__(self, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = config.data_format_or_default(data_format)
        self.input_spec = InputSpec(min_ndim=1)
        self.built = True

    def compute_output_shape(self, input_shape):
        rest = tuple(input_shape)[1:]
        size = None if None in rest else int(np.prod(rest))
        return (tuple(input_shape)[0], size)

    def call(self, inputs):
        if isinstance(inputs, KerasTensor):
            return KerasTensor(self.compute_output_shape(inputs.shape), inputs.dtype)
        shape = np.shape(inputs)
        if self.data_format == "channels_first" and len(shape) > 2:
            inputs = ops.transpose(inputs, (0,) + tuple(range(2, len(shape))) + (1,))
        return ops.reshape(inputs, (shape[0], int(np.prod(shape[1:]))))

    def get_config(self):
        config_ = super().get_config()
        config_["data_format"] = self.data_format
        return config_
