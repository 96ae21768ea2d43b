"""Embedding: maps integer indices to rows of a trainable (input_dim, output_dim) table."""

from fkeras import constraints, initializers, ops, regularizers
from fkeras.backend import devices as _devices
from fkeras.engine.keras_tensor import KerasTensor
from fkeras.layers.core.int8_quantize import Int8EmbeddingMixin, split_quantized_dtype
from fkeras.layers.core.lora import LoRAMixin
from fkeras.layers.layer import Layer


class Embedding(Int8EmbeddingMixin, LoRAMixin, Layer):
    """Turns non-negative integers (indices) into dense vectors of size `output_dim`.

    Args:
        input_dim: positive int, the vocabulary size (largest index + 1).
        output_dim: positive int, the embedding size.
        embeddings_initializer: default "uniform" (U(-0.05, 0.05)).
        embeddings_regularizer, embeddings_constraint: as Keras.
        mask_zero: whether index 0 is padding (stored; `compute_mask` gives inputs != 0).
        weights: initial [embeddings] (set when the layer is built).
        lora_rank, lora_alpha: LoRA as Keras 3's `enable_lora` (the table frozen, plus
            (lora_alpha / lora_rank) * A @ B with trainable A, B).
        quantization_config: an `Int8QuantizationConfig` (or its dict): `quantize("int8")`
            and the "int8_from_float32" dtype policy store the table as int8 codes per row
            plus a float32 `embeddings_scale`, as Keras 3 (int8_quantize.py).
        input_length: Keras 2's argument: the input shape (input_length,) when no input_shape
            is given (so a Sequential model starting with Embedding is built at once).

    Example:
    ```python
    y = Embedding(1000, 64)(Input(shape=(10,), dtype="int32"))   # y.shape == (None, 10, 64)
    ```
    """

    _lora_target = "embeddings"
    _lora_stem = "lora_embeddings"
    _lora_constraint_error = ("Lora is incompatible with embedding constraints. In order to "
                              "enable lora on this layer, remove the `embeddings_constraint` "
                              "argument.")

    def __init__(self, input_dim, output_dim, embeddings_initializer="uniform",
                 embeddings_regularizer=None, embeddings_constraint=None, mask_zero=False,
                 weights=None, lora_rank=None, lora_alpha=None, quantization_config=None,
                 input_length=None, **kwargs):
        for name, value in (("input_dim", input_dim), ("output_dim", output_dim)):
            if not _positive_int(value):
                raise ValueError(f"`{name}` must be a positive integer. Received: "
                                 f"{name}={value} (of type {type(value).__name__}).")
        if input_length is not None and "input_shape" not in kwargs and \
                "batch_input_shape" not in kwargs:
            kwargs["input_shape"] = (input_length,)  # Keras 2: the first layer's input shape
        kwargs["dtype"], quant_policy = split_quantized_dtype(kwargs.get("dtype"))
        super().__init__(weights=weights, **kwargs)
        self._init_quantization(quant_policy, quantization_config)
        self.input_dim, self.output_dim = int(input_dim), int(output_dim)
        self.embeddings_initializer = initializers.get(embeddings_initializer)
        self.embeddings_regularizer = regularizers.get(embeddings_regularizer)
        self.embeddings_constraint = constraints.get(embeddings_constraint)
        self.mask_zero = bool(mask_zero)
        self.input_length = input_length
        self.supports_masking = self.mask_zero
        self._init_lora(lora_rank, lora_alpha)

    def build(self, input_shape=None):
        if self.quantization_mode:  # built as Keras's int8 layer (loading a quantized model)
            self._int8_build((self.input_dim, self.output_dim))
            self.built = True
            return
        self.embeddings = self.add_weight(shape=(self.input_dim, self.output_dim),
                                          initializer=self.embeddings_initializer,
                                          regularizer=self.embeddings_regularizer,
                                          constraint=self.embeddings_constraint,
                                          name="embeddings")
        self.built = True
        self._build_lora()

    def call(self, inputs):
        if self._is_quantized:  # a plain attribute: this runs on every call
            return self._int8_call(inputs)
        try:
            return ops.embedding(inputs, self._lora_weight())
        except ValueError as e:  # bad indices: name the layer, not the op
            raise ValueError(f'Layer "{self.name}" (Embedding): {e}') from None

    def compute_mask(self, inputs, mask=None):
        if not self.mask_zero:
            return None
        if isinstance(inputs, KerasTensor):
            return KerasTensor(inputs.shape, "bool")
        return _devices.host_array(inputs) != 0

    def compute_output_shape(self, input_shape):
        return tuple(input_shape) + (self.output_dim,)

    def get_config(self):
        config = super().get_config()
        config.update({
            "input_dim": self.input_dim,
            "output_dim": self.output_dim,
            "embeddings_initializer": initializers.serialize(self.embeddings_initializer),
            "embeddings_regularizer": regularizers.serialize(self.embeddings_regularizer),
            "activity_regularizer": regularizers.serialize(self.activity_regularizer),
            "embeddings_constraint": constraints.serialize(self.embeddings_constraint),
            "mask_zero": self.mask_zero,
        })
        config = self._quantization_config_entries(config)
        if self.input_length is not None:
            config["input_length"] = self.input_length
        return self._lora_config(config)


def _positive_int(v):
    return isinstance(v, int) and not isinstance(v, bool) and v > 0
