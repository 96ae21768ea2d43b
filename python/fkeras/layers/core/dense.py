"""Dense: activation(inputs @ kernel + bias) over the last axis (any input rank >= 2)."""

import numpy as np

from fkeras import activations, ops
from fkeras.engine.input_spec import InputSpec
from fkeras.layers.core.int8_quantize import Int8DenseMixin, split_quantized_dtype
from fkeras.layers.core.lora import LoRAMixin
from fkeras.layers.layer import Layer
from fkeras.layers.weight_args import (
    add_arg_weight,
    serialize_weight_args,
    store_weight_args,
)


class Dense(Int8DenseMixin, LoRAMixin, Layer):
    """Densely-connected layer: `activation(dot(inputs, kernel) + bias)`.

    Inputs of rank > 2 are contracted over their last axis only (kernel (input_dim, units)),
    as in every Keras generation.

    Args:
        units: Positive integer, dimensionality of the output space.
        activation: Activation function (name or callable); None means linear.
        use_bias: Whether the layer uses a bias vector.
        kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer,
        kernel_constraint, bias_constraint: as in Keras.
        activity_regularizer: a regularizer of the output; its value divided by the batch size
            is added to the losses at each call (Keras 3).
        lora_rank: optional positive int: LoRA, as Keras 3's `enable_lora`: the kernel is
            frozen and the layer uses kernel + (lora_alpha / lora_rank) * A @ B with trainable
            A (input_dim, rank), He-uniform, and B (rank, units), zeros.
        lora_alpha: the LoRA scale numerator (default: lora_rank).
        quantization_config: an `Int8QuantizationConfig` (or its dict) used by `quantize` and
            by a layer built under the "int8_from_float32" dtype policy (int8_quantize.py).

    Example:
    ```python
    y = Dense(64, activation="relu")(Input(shape=(16,)))   # y.shape == (None, 64)
    ```
    """

    _fk_float_inputs = True

    def __init__(self, units, activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, lora_rank=None, lora_alpha=None,
                 quantization_config=None, **kwargs):
        kwargs["dtype"], quant_policy = split_quantized_dtype(kwargs.get("dtype"))
        super().__init__(**kwargs)
        if not _positive_int(units):
            raise ValueError("Received an invalid value for `units`, expected a positive "
                             f"integer. Received: units={units}")
        self._init_quantization(quant_policy, quantization_config)
        self.units = int(units)
        self.activation = activations.get(activation)
        self.use_bias = bool(use_bias)
        store_weight_args(self, ("kernel", "bias"), kernel_initializer=kernel_initializer,
                          bias_initializer=bias_initializer, kernel_regularizer=kernel_regularizer,
                          bias_regularizer=bias_regularizer,
                          activity_regularizer=activity_regularizer,
                          kernel_constraint=kernel_constraint, bias_constraint=bias_constraint)
        self._init_lora(lora_rank, lora_alpha)
        self.input_spec = InputSpec(min_ndim=2)
        self.supports_masking = True

    def build(self, input_shape):
        in_dim = input_shape[-1]
        if in_dim is None:
            raise ValueError(
                "The last dimension of the inputs to a Dense layer should be defined. "
                f"Found None. Full input shape received: {tuple(input_shape)}"
            )
        if self.quantization_mode:  # built as Keras's int8 layer (loading a quantized model)
            self._int8_build((in_dim, self.units))
        else:
            self.kernel = add_arg_weight(self, "kernel", (in_dim, self.units))
        self.bias = add_arg_weight(self, "bias", (self.units,)) if self.use_bias else None
        self.input_spec = InputSpec(min_ndim=2, axes={-1: in_dim})
        self.built = True
        self._build_lora()

    def call(self, inputs):
        if self._is_quantized:  # a plain attribute: this runs on every call
            return self._int8_call(inputs)
        kernel = self._lora_weight()
        code, alpha = activations.fused(self.activation)
        if code is not None:
            out = ops.dense(inputs, kernel, self.bias, activation=code, alpha=alpha)
        else:
            out = self.activation(ops.dense(inputs, kernel, self.bias))
        return out  # the base Layer adds activity_regularizer(out) / batch to the losses

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
        return self._lora_config(self._quantization_config_entries(config))


def _positive_int(v):
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v > 0
