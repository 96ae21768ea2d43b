"""Dense: activation(inputs @ kernel + bias) over the last axis (any input rank >= 2)."""

from fkeras import activations, constraints, initializers, regularizers
from fkeras import ops
from fkeras.engine.input_spec import InputSpec
from fkeras.layers.layer import Layer
from fkeras.layers.weight_args import serialize_weight_args


class Dense(Layer):
    """Densely-connected layer.

    Args:
        units: Positive integer, dimensionality of the output space.
        activation: Activation function (name or callable); None means linear.
        use_bias: Whether the layer uses a bias vector.
        kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer,
        activity_regularizer, kernel_constraint, bias_constraint: as in Keras.

    Example:
    ```python
    y = Dense(64, activation="relu")(Input(shape=(16,)))   # y.shape == (None, 64)
    ```
    """

    def __init__(self, units, activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, lora_rank=None, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(units, int) or isinstance(units, bool) or units <= 0:
            raise ValueError(
                "Received an invalid value for `units`, expected a positive integer. "
                f"Received: units={units}"
            )
        self.units = units
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.activity_regularizer = regularizers.get(activity_regularizer)
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.bias_constraint = constraints.get(bias_constraint)
        self.input_spec = InputSpec(min_ndim=2)
        self.supports_masking = True

    def build(self, input_shape):
        in_dim = input_shape[-1]
        if in_dim is None:
            raise ValueError(
                f'The last dimension of the inputs to a Dense layer should be defined. '
                f"Found None. Full input shape received: {tuple(input_shape)}"
            )
        self.kernel = self.add_weight(shape=(in_dim, self.units), initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint, name="kernel")
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight(shape=(self.units,), initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer,
                                        constraint=self.bias_constraint, name="bias")
        self.input_spec = InputSpec(min_ndim=2, axes={-1: in_dim})
        self.built = True

    def call(self, inputs):
        code = activations.fused_code(self.activation)
        if code is not None:
            return ops.dense(inputs, self.kernel, self.bias, activation=code,
                             alpha=activations.fused_alpha(self.activation))
        return self.activation(ops.dense(inputs, self.kernel, self.bias))

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)[:-1] + (self.units,)

    def get_config(self):
        config = super().get_config()
        config.update({
            "units": self.units,
            "activation": activations.serialize(self.activation),
            "use_bias": self.use_bias,
            **serialize_weight_args(self),
        })
        return config
