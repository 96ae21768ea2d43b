"""EinsumDense: `activation(einsum(equation, inputs, kernel) + bias)`, computed as one GEMM."""

import numpy as np

from fkeras import activations, initializers, ops
from fkeras.engine.input_spec import InputSpec
from fkeras.engine.keras_tensor import KerasTensor
from fkeras.layers.core.einsum_plan import EinsumPlan
from fkeras.layers.core.int8_quantize import Int8EinsumDenseMixin, split_quantized_dtype
from fkeras.layers.core.lora import LoRAMixin
from fkeras.layers.layer import Layer
from fkeras.layers.weight_args import serialize_weight_args, store_weight_args


class EinsumDense(Int8EinsumDenseMixin, LoRAMixin, Layer):
    """A dense layer of any rank, described by an einsum equation (Keras 3).

    Args:
        equation: `"I,W->O"`: the input's axes, the kernel's axes and the output's axes, one
            letter each; `...` may stand for leading (`"...b,bc->...c"`) or trailing axes.
            fkeras computes it as one matrix product (see `einsum_plan`), which covers every
            equation where each letter is kept from the input, contracted with the kernel, or
            produced by the kernel; others raise a ValueError.
        output_shape: the output shape without the batch axis (an int for one axis); None
            entries take the input's size.
        activation: applied to the result (None: linear).
        bias_axes: letters of the output that carry a bias (None: no bias).
        kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer,
        kernel_constraint, bias_constraint: as in Keras. A VarianceScaling initializer
            (glorot, he, lecun) counts fans over the kernel's input and output axes, as Keras.
        lora_rank: optional positive int: LoRA, as Keras 3's `enable_lora`: the kernel is
            frozen and the layer uses kernel + (lora_alpha / lora_rank) * A @ B with trainable
            A (kernel.shape[:-1] + (rank,)) and B (rank, kernel.shape[-1]).
        lora_alpha: the LoRA scale numerator (default: lora_rank).
        quantization_config: an `Int8QuantizationConfig` (or its dict) used by `quantize` and
            by a layer built under the "int8_from_float32" dtype policy (int8_quantize.py:
            Keras 3's int8 EinsumDense; int4 / float8 / GPTQ / AWQ are refused: ValueError).
        gptq_unpacked_column_size: accepted as None only (GPTQ is not implemented).

    Example:
    ```python
    layer = EinsumDense("abc,cde->abde", output_shape=(None, 4, 8), bias_axes="de")
    layer(Input(shape=(10, 16))).shape   # (None, 10, 4, 8)
    ```
    """

    _fk_float_inputs = True

    def __init__(self, equation, output_shape, activation=None, bias_axes=None,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, lora_rank=None, lora_alpha=None,
                 gptq_unpacked_column_size=None, quantization_config=None, **kwargs):
        kwargs["dtype"], quant_policy = split_quantized_dtype(kwargs.get("dtype"))
        super().__init__(**kwargs)
        if gptq_unpacked_column_size is not None:
            raise ValueError(
                f'Layer "{self.name}": `gptq_unpacked_column_size` is not supported by fkeras\'s '
                "EinsumDense (GPTQ is not implemented). Received: "
                f"gptq_unpacked_column_size={gptq_unpacked_column_size}")
        self._init_quantization(quant_policy, quantization_config)
        EinsumPlan(equation, _spec_rank(equation), self.name)  # checks the text early
        self.equation = equation
        self.partial_output_shape = (output_shape,) if isinstance(output_shape, int) else \
            tuple(output_shape)
        self.bias_axes = bias_axes
        self.activation = activations.get(activation)
        self._init_lora(lora_rank, lora_alpha)
        store_weight_args(self, ("kernel", "bias"), kernel_initializer=kernel_initializer,
                          bias_initializer=bias_initializer, kernel_regularizer=kernel_regularizer,
                          bias_regularizer=bias_regularizer, kernel_constraint=kernel_constraint,
                          bias_constraint=bias_constraint)
        self._plan = None

    def _plan_for(self, rank):
        if self._plan is None or len(self._plan.input_spec) != rank:
            self._plan = EinsumPlan(self.equation, rank, self.name)
        return self._plan

    def build(self, input_shape):
        plan = self._plan_for(len(input_shape))
        kernel_shape, bias_shape, _, in_axes, out_axes = plan.shapes(
            input_shape, self.partial_output_shape, self.bias_axes)
        self.input_spec = InputSpec(ndim=len(input_shape))
        init = self.kernel_initializer
        if isinstance(init, initializers.VarianceScaling):
            init = _FansOverAxes(init, in_axes, out_axes)
        if self.quantization_mode:  # built as Keras's int8 layer (loading a quantized model)
            self._int8_build(tuple(kernel_shape))
        else:
            self.kernel = self.add_weight(shape=kernel_shape, name="kernel", initializer=init,
                                          regularizer=self.kernel_regularizer,
                                          constraint=self.kernel_constraint)
        self.bias = None
        if bias_shape is not None:
            self.bias = self.add_weight(shape=bias_shape, name="bias",
                                        initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer,
                                        constraint=self.bias_constraint)
        self.built = True
        self._build_lora()

    def call(self, inputs, training=None):
        if isinstance(inputs, KerasTensor):
            return KerasTensor(self.compute_output_shape(inputs.shape), inputs.dtype)
        if self._is_quantized:  # a plain attribute: this runs on every call
            return self._int8_call(inputs)
        out = self._plan_for(len(inputs.shape)).contract_add(ops, inputs, self._lora_weight(),
                                                             self.bias)
        return self.activation(out)

    def compute_output_shape(self, input_shape):
        plan = self._plan_for(len(input_shape))
        return plan.shapes(input_shape, self.partial_output_shape, self.bias_axes)[2]

    def get_config(self):
        config = super().get_config()
        weight_args = serialize_weight_args(self)
        config.update({
            "output_shape": self.partial_output_shape,
            "equation": self.equation,
            "activation": activations.serialize(self.activation),
            "bias_axes": self.bias_axes,
            **{k: weight_args[k] for k in ("kernel_initializer", "bias_initializer",
                                           "kernel_regularizer", "bias_regularizer",
                                           "activity_regularizer", "kernel_constraint",
                                           "bias_constraint")},
        })
        return self._lora_config(self._quantization_config_entries(config))


class _FansOverAxes:
    """A VarianceScaling initializer whose fans are the products of the kernel's input and
    output axes (Keras 3's EinsumDense), not the conv-style receptive-field rule."""

    def __init__(self, initializer, input_axes, output_axes):
        self.initializer, self.input_axes, self.output_axes = initializer, input_axes, \
            output_axes

    def __call__(self, shape, dtype=None):
        fan_in = int(np.prod([shape[a] for a in self.input_axes], dtype=np.int64))
        fan_out = int(np.prod([shape[a] for a in self.output_axes], dtype=np.int64))
        values = np.asarray(self.initializer((fan_in, fan_out)), np.float32)
        return values.reshape(shape)


def _spec_rank(equation):
    """The input rank an equation names without ellipsis (any rank >= it with one)."""
    if not isinstance(equation, str) or "," not in equation:
        return 0
    ins = equation.replace(" ", "").split(",")[0]
    return len(ins.replace("...", "")) + (1 if "..." in ins else 0)
