"""int8 post-training quantization of a layer's main weight (Keras 3's `quantize("int8")`),
shared by Dense, EinsumDense (Dense's int8 product on the equation's GEMM view: see
`Int8EinsumDenseMixin`) and Embedding.

After `quantize("int8")` (or when built under the "int8_from_float32" dtype policy) the layer
holds, as Keras 3.15 does:
- its weight (`kernel` / `embeddings`, also `_kernel` / `_embeddings`): int8, not trainable,
  same variable name, abs-max codes in [-127, 127] reduced over `_int8_axis` (Dense: per output
  column; Embedding: per row);
- the scale (`kernel_scale` (units,) / `embeddings_scale` (input_dim,)): float32, not
  trainable, codes ~ weight * scale.
Dense also gets `inputs_quantizer` (`AbsMaxQuantizer()`: inputs quantized per row at each
call) and computes activation(float32(q(x) @ kernel) / (kernel_scale * inputs_scale) + bias),
the gradient to the inputs through the dequantized kernel (ops/quantized.py); Embedding
gathers int8 rows and divides them by their scales. The int8 weight keeps its place before the
other variables (Keras's saved order: kernel, bias, kernel_scale).
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


class Int8QuantizeMixin:
    """`quantize("int8")`, the int8 build and Keras's saved layout. A layer names its weight
    (`_int8_weight`), its scale (`_int8_scale`) and the axis the scale reduces
    (`_int8_axis`), and implements `_int8_call`."""

    _int8_weight = "kernel"
    _int8_scale = "kernel_scale"
    _int8_axis = 0
    _int8_inputs_quantized = True  # Dense quantizes its inputs; Embedding's are indices
    _int8_any_inputs_quantizer = False  # only the default AbsMaxQuantizer (the fused kernel)

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
            mode: "int8" (Keras's "int4", "float8", "gptq", "awq" are refused: ValueError).
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
        weight = getattr(self, self._int8_weight)
        axis = self._int8_weight_axis()
        weight_quantizer = config.weight_quantizer or AbsMaxQuantizer(axis=axis)
        codes, scale = weight_quantizer(weight, axis=axis, to_numpy=True)
        position = self._trainable_weights.index(weight) \
            if weight in self._trainable_weights else None
        if position is None:
            self._non_trainable_weights.remove(weight)
        else:
            del self._trainable_weights[position]
        self.quantization_config = config
        self._int8_build(tuple(weight.shape), position)
        getattr(self, self._int8_weight).assign(ops.convert_to_numpy(codes))
        getattr(self, self._int8_scale).assign(
            self._int8_stored_scale(ops.convert_to_numpy(scale)))
        from fkeras.dtype_policies import QuantizedDTypePolicy

        self._fk_quant_policy = QuantizedDTypePolicy(mode, self.dtype_policy.name)

    def _int8_weight_axis(self):
        """The axis (or axes) of the weight that its scale reduces."""
        return self._int8_axis

    def _int8_stored_scale(self, scale):
        """The weight quantizer's scale (reduced axes kept with size 1) in the stored layout."""
        return np.squeeze(scale, axis=self._int8_axis)

    def _int8_scale_shape(self, shape):
        """The stored scale's shape for a weight of `shape`: one entry per kept index."""
        return (shape[1 - self._int8_axis if self._int8_axis >= 0 else 0],)

    def _check_int8_supported(self, config):
        if self.lora_enabled:
            raise ValueError(f'Layer "{self.name}": int8 quantization of a layer '
                             "with LoRA enabled is not supported by fkeras.")
        act = config.activation_quantizer
        if self._int8_inputs_quantized and not self._int8_any_inputs_quantizer and (
                not isinstance(act, AbsMaxQuantizer) or not act.is_default()):
            raise ValueError(
                f'Layer "{self.name}": fkeras quantizes the inputs of int8 layers with the '
                "default AbsMaxQuantizer (value_range=(-127, 127), epsilon=1e-7) only. "
                f"Received: activation_quantizer={act}")
        if self._fk_bf16:
            raise ValueError(f'Layer "{self.name}": fkeras quantizes float32 layers only '
                             f"(dtype policy 'float32'). Received: dtype_policy="
                             f"'{self.dtype_policy.name}'")

    def _int8_build(self, shape, position=None):
        """The int8 weight (at `position` of the variable list: Keras's saved order, kernel
        before bias) and its scale."""
        if self._int8_inputs_quantized:  # Keras: the config's activation quantizer (or None)
            config = self.quantization_config
            self.inputs_quantizer = AbsMaxQuantizer() if config is None else \
                config.activation_quantizer
        name = self._int8_weight
        weight = self.add_weight(name=name, shape=shape, initializer="zeros", dtype="int8",
                                 trainable=False)
        # Kept first (Keras's saved order) among the variables and out of the trainable ones
        # (the LoRA mixin's trainable_weights filters on `trainable`).
        self._non_trainable_weights.remove(weight)
        self._trainable_weights.insert(0 if position is None else position, weight)
        setattr(self, name, weight)
        setattr(self, f"_{name}", weight)
        setattr(self, self._int8_scale, self.add_weight(
            name=self._int8_scale, shape=self._int8_scale_shape(shape), initializer="ones",
            trainable=False))
        self._is_quantized = True


class Int8DenseMixin(Int8QuantizeMixin):
    """Dense's int8 call (the fused int8 product, then bias and activation)."""

    def _fk_quantizable_class(self):
        from fkeras.layers.core.dense import Dense

        return Dense

    _int8_any_inputs_quantizer = True  # a user's activation quantizer, or None

    def _int8_call(self, inputs):
        quantizer = self.inputs_quantizer
        if isinstance(quantizer, AbsMaxQuantizer) and quantizer.is_default():
            quantizer = "default"  # the fused kernel
        x = _quantized_ops.dense_int8(inputs, self.kernel, self.kernel_scale, quantizer)
        if self.bias is not None:
            x = ops.add(x, self.bias)
        return self.activation(x) if self.activation is not None else x

    def enable_lora(self, *args, **kwargs):
        if self._is_quantized:
            raise ValueError(f'Layer "{self.name}": LoRA on an int8-quantized layer is not '
                             "supported by fkeras.")
        return super().enable_lora(*args, **kwargs)


class Int8EmbeddingMixin(Int8QuantizeMixin):
    """Embedding's int8 table: codes per row, gathered then divided by their row's scale."""

    _int8_weight = "embeddings"
    _int8_scale = "embeddings_scale"
    _int8_axis = -1
    _int8_inputs_quantized = False

    def _fk_quantizable_class(self):
        from fkeras.layers.core.embedding import Embedding

        return Embedding

    def _int8_call(self, inputs):
        # Keras: take(codes) cast to float32, divided by take(scale)[..., None].
        rows = ops.cast(ops.take(self.embeddings, inputs, axis=0), "float32")
        scale = ops.take(self.embeddings_scale, inputs, axis=0)
        return ops.divide(rows, ops.expand_dims(scale, -1))


class Int8EinsumDenseMixin(Int8DenseMixin):
    """EinsumDense's int8 form (Keras 3): the kernel's scale reduces its contracted axes (those
    not in the output) and is stored over the output's axes (the kernel's produced axes at
    their output positions, size 1 elsewhere: "abc,cde->abde" kernel (c, d, e) -> scale
    (1, 1, d, e)); the inputs are quantized over their contracted axes at each call. The
    product is the fused int8 Dense product on the equation's GEMM view (einsum_plan.py):
    inputs (free..., contracted...), kernel (contracted, produced), so the int32 sums, the
    scales and the division are Keras's, and the input gradient is Keras's custom one
    (upstream times the dequantized kernel)."""

    _int8_any_inputs_quantizer = False  # its call is the fused kernel on the GEMM view

    def _fk_quantizable_class(self):
        from fkeras.layers.core.einsum_dense import EinsumDense

        return EinsumDense

    def _int8_plan(self):
        return self._plan_for(self.input_spec.ndim)

    def _int8_weight_axis(self):
        plan = self._int8_plan()
        return tuple(sorted(plan.weight_spec.index(c) for c in plan.contracted))

    def _int8_produced(self, shape):
        """(the produced letters in output order, their sizes) for a kernel of `shape`."""
        plan = self._int8_plan()
        letters = [c for c in plan.output_spec if c in plan.produced]
        return letters, [shape[plan.weight_spec.index(c)] for c in letters]

    def _int8_scale_shape(self, shape):
        plan = self._int8_plan()
        return tuple(shape[plan.weight_spec.index(c)] if c in plan.produced else 1
                     for c in plan.output_spec)

    def _int8_stored_scale(self, scale):
        plan = self._int8_plan()
        kernel_shape = tuple(getattr(self, self._int8_weight).shape)
        letters, _ = self._int8_produced(kernel_shape)
        kernel_dims = [kernel_shape[plan.weight_spec.index(c)] for c in plan.produced]
        scale = np.reshape(scale, kernel_dims)  # kernel order of the produced axes
        scale = np.transpose(scale, [plan.produced.index(c) for c in letters])
        return scale.reshape(self._int8_scale_shape(kernel_shape))

    def _int8_call(self, inputs):
        plan = self._plan_for(len(inputs.shape))
        i, w, o = plan.input_spec, plan.weight_spec, plan.output_spec
        x_perm = [i.index(c) for c in plan.free + plan.contracted]
        x = inputs if x_perm == sorted(x_perm) else ops.transpose(inputs, x_perm)
        free_dims = tuple(inputs.shape[i.index(c)] for c in plan.free)
        contracted = int(np.prod([inputs.shape[i.index(c)] for c in plan.contracted]))
        x = ops.reshape(x, free_dims + (contracted,))
        kernel = self.kernel
        k_perm = [w.index(c) for c in plan.contracted + plan.produced]
        prod_dims = tuple(kernel.shape[w.index(c)] for c in plan.produced)
        produced = int(np.prod(prod_dims))
        if k_perm != sorted(k_perm):
            kernel = np.transpose(ops.convert_to_numpy(kernel), k_perm)
        kernel = ops.reshape(kernel, (contracted, produced))
        letters, sizes = self._int8_produced(tuple(self.kernel.shape))
        scale = ops.reshape(self.kernel_scale, tuple(sizes))  # output order of produced axes
        s_perm = [letters.index(c) for c in plan.produced]
        if s_perm != sorted(s_perm):
            scale = ops.transpose(scale, s_perm)
        y = _quantized_ops.dense_int8(x, kernel, ops.reshape(scale, (produced,)))
        y = ops.reshape(y, free_dims + prod_dims)
        y_perm = [(plan.free + plan.produced).index(c) for c in o]
        if y_perm != sorted(y_perm):
            y = ops.transpose(y, y_perm)
        if self.bias is not None:
            y = ops.add(y, self.bias)
        return self.activation(y) if self.activation is not None else y
