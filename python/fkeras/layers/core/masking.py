"""Masking: marks the time steps whose features all equal `mask_value` as padding."""

import numpy as np

from fkeras import ops
from fkeras.backend import devices as _devices
from fkeras.engine.keras_tensor import KerasTensor
from fkeras.layers.layer import Layer


class Masking(Layer):
    """Masks a sequence by using a mask value to skip timesteps.

    For each timestep of an input (batch, timesteps, ...) whose features all equal
    `mask_value`, the timestep is masked (skipped) in every downstream layer that supports
    masking (LSTM, GRU, SimpleRNN, Bidirectional, ...). The output is the input with masked
    steps set to zero (Keras 3), and carries the mask (batch, timesteps).

    Args:
        mask_value: the padding value (default 0.0).

    Example:
    ```python
    x = Input(shape=(10, 8))
    y = LSTM(16)(Masking(mask_value=0.0)(x))   # all-zero steps are skipped
    ```
    """

    def __init__(self, mask_value=0.0, **kwargs):
        super().__init__(**kwargs)
        self.mask_value = mask_value
        self.supports_masking = True

    def compute_mask(self, inputs, previous_mask=None):
        if isinstance(inputs, KerasTensor):
            return KerasTensor(inputs.shape[:-1], "bool")
        return np.any(_devices.host_array(inputs) != self.mask_value, axis=-1)

    def call(self, inputs):
        if isinstance(inputs, KerasTensor):
            return ops.multiply(inputs, 1.0)
        keep = self.compute_mask(inputs)
        return ops.multiply(inputs, np.expand_dims(keep, -1).astype(np.float32))

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        config = super().get_config()
        config["mask_value"] = self.mask_value
        return config
