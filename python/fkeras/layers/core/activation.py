"""Activation: applies an activation function to its input."""

from fkeras import activations
from fkeras.layers.layer import Layer


class Activation(Layer):
    """Applies `activation` (a name or callable) elementwise. Has no weights."""

    _fk_float_inputs = True

    def __init__(self, activation, **kwargs):
        super().__init__(**kwargs)
        self.activation = activations.get(activation)
        self.supports_masking = True
        self.built = True

    def call(self, inputs):
        return self.activation(inputs)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        config = super().get_config()
        config["activation"] = activations.serialize(self.activation)
        return config
