"""int8 post-training quantization of Dense (Keras 3's `Dense.quantize("int8")`).

After `quantize("int8")` (or when built under the "int8_from_float32" dtype policy) the layer
holds, as Keras 3.15 does:
- `_kernel` (the `kernel` attribute too): int8 (input_dim, units), not trainable, variable
  name "kernel", codes of the float kernel quantized per output column (abs-max, [-127, 127]);
- `kernel_scale`: float32 (units,), not trainable, codes ~ kernel * kernel_scale;
- `inputs_quantizer`: `AbsMaxQuantizer()`, inputs quantized per row at each call;
and computes activation(float32(q(x) @ kernel) / (kernel_scale * inputs_scale) + bias), the
gradient to the inputs through the dequantized kernel (ops/quantized.py). Saved variables are
in Keras's order: kernel, bias, kernel_scale.
"""

import numpy as np

from fkeras import ops
from fkeras.ops import quantized as _quantized_ops
from fkeras.quantizers import quantization_config as qconfig
from fkeras.quantizers.quantizers import AbsMaxQuantizer


def split_quantized_dtype(dtype):
    """(the float dtype to give Layer.__init__, the QuantizedDTypePolicy or None) of a layer's
    `dtype` argument ("int8_from_float32", a QuantizedDTypePolicy or its config dict)."""
    from fkeras import dtype_policies

    policy = None
    if isinstance(dtype, dtype_policies.QuantizedDTypePolicy):
        policy = dtype
    elif isinstance(dtype, dict) and dtype.get("class_name") == "QuantizedDTypePolicy":
        policy = dtype_policies.deserialize(dtype)
    elif isinstance(dtype, str):
        policy = dtype_policies.quantized_from_name(dtype)
    if policy is None:
        return dtype, None
    dtype_policies.get(policy)  # only int8_from_float32 is supported
    return policy._source_name, policy


class Int8DenseMixin:
    """`quantize`, the int8 build and call, and Keras's saved layout for Dense."""

    _fk_quant_policy = None  # the QuantizedDTypePolicy once quantized
    _is_quantized = False

    def _init_quantization(self, quant_policy, quantization_config):
        self.quantization_config = qconfig.get(quantization_config)
        if self.quantization_config is not None:
            qconfig.resolve(None, self.quantization_config)  # refuses non-int8 configs
        self._fk_quant_policy = quant_policy

    @property
    def quantization_mode(self):
        """"int8" once quantized, else None (Keras 3)."""
        return self._fk_quant_policy.quantization_mode if self._fk_quant_policy else None

    @property
    def weights(self):
        """Trainable, then non-trainable (Keras 3's order: bias, kernel, kernel_scale once
        quantized)."""
        if not self._is_quantized:
            return super().weights
        own = self._trainable_weights
        return ([w for w in own if w.trainable] + [w for w in own if not w.trainable]
                + list(self._non_trainable_weights))

    @property
    def dtype_policy(self):
        return self._fk_quant_policy or super().dtype_policy

    def _quantization_config_entries(self, config):
        """Adds Keras's "dtype" (the quantized policy) and "quantization_config" entries."""
        if self._fk_quant_policy is not None:
            from fkeras.dtype_policies import serialize

            config["dtype"] = serialize(self._fk_quant_policy)
        config["quantization_config"] = qconfig.serialize(self.quantization_config)
        return config

    def quantize(self, mode=None, type_check=True, config=None):
        """Quantizes the built layer's kernel in place (Keras 3): mode "int8" only.

        Args:
            mode: "int8" (Keras's "int4", "float8", "gptq", "awq" raise NotImplementedError).
            type_check: as Keras: a subclass of Dense raises NotImplementedError unless False.
            config: an `Int8QuantizationConfig` (default: per-channel kernel, per-row inputs).
        """
        mode, config = qconfig.resolve(mode, config)
        if type_check and type(self) is not self._fk_quantizable_class():
            raise NotImplementedError(f"Layer {type(self).__name__} does not have a "
                                      "`quantize` method implemented.")
        if not self.built:
            raise ValueError("Cannot quantize a layer that isn't yet built. Layer "
                             f"'{self.name}' (of type '{type(self).__name__}') is not built "
                             "yet.")
        if self._is_quantized:
            raise ValueError(f"Layer '{self.name}' is already quantized with "
                             f"dtype_policy='{self.dtype_policy.name}'. Received: mode={mode}")
        self._check_int8_supported(config)
        weight_quantizer = config.weight_quantizer or AbsMaxQuantizer(axis=0)
        codes, scale = weight_quantizer(self.kernel, axis=0, to_numpy=True)
        position = self._trainable_weights.index(self.kernel) \
            if self.kernel in self._trainable_weights else None
        if position is None:
            self._non_trainable_weights.remove(self.kernel)
        else:
            del self._trainable_weights[position]
        self.quantization_config = config
        self._int8_build(tuple(self.kernel.shape), position)
        self.kernel.assign(ops.convert_to_numpy(codes))
        self.kernel_scale.assign(np.squeeze(ops.convert_to_numpy(scale), axis=0))
        from fkeras.dtype_policies import QuantizedDTypePolicy

        self._fk_quant_policy = QuantizedDTypePolicy(mode, self.dtype_policy.name)

    def _fk_quantizable_class(self):
        from fkeras.layers.core.dense import Dense

        return Dense

    def _check_int8_supported(self, config):
        if self.lora_enabled:
            raise NotImplementedError(f'Layer "{self.name}": int8 quantization of a layer '
                                      "with LoRA enabled is not supported by fkeras.")
        act = config.activation_quantizer
        if not isinstance(act, AbsMaxQuantizer) or not act.is_default():
            raise NotImplementedError(
                f'Layer "{self.name}": fkeras quantizes the inputs of int8 layers with the '
                "default AbsMaxQuantizer (value_range=(-127, 127), epsilon=1e-7) only. "
                f"Received: activation_quantizer={act}")
        if self._fk_bf16:
            raise NotImplementedError(f'Layer "{self.name}": fkeras quantizes float32 '
                                      "layers only (dtype policy 'float32').")

    def _int8_build(self, kernel_shape, position=None):
        """The int8 kernel (at `position` of the variable list: Keras's saved order, kernel
        before bias) and its scale."""
        self.inputs_quantizer = AbsMaxQuantizer()
        kernel = self.add_weight(name="kernel", shape=kernel_shape, initializer="zeros",
                                 dtype="int8", trainable=False)
        # Kept first (Keras's saved order) among the variables and out of the trainable ones
        # (the LoRA mixin's trainable_weights filters on `trainable`).
        self._non_trainable_weights.remove(kernel)
        self._trainable_weights.insert(0 if position is None else position, kernel)
        self.kernel = self._kernel = kernel
        self.kernel_scale = self.add_weight(name="kernel_scale", shape=(kernel_shape[1],),
                                            initializer="ones", trainable=False)
        self._is_quantized = True

    def _int8_call(self, inputs):
        x = _quantized_ops.dense_int8(inputs, self.kernel, self.kernel_scale)
        if self.bias is not None:
            x = ops.add(x, self.bias)
        return self.activation(x) if self.activation is not None else x

    def enable_lora(self, *args, **kwargs):
        if self._is_quantized:
            raise NotImplementedError(f'Layer "{self.name}": LoRA on an int8-quantized layer '
                                      "is not supported by fkeras.")
        return super().enable_lora(*args, **kwargs)
