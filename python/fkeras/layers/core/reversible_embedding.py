"""ReversibleEmbedding: an Embedding that can also project back to the vocabulary (Keras 3)."""

from fkeras import ops
from fkeras.engine.keras_tensor import KerasTensor
from fkeras.engine.masking import set_keras_mask
from fkeras.layers.core.embedding import Embedding


class ReversibleEmbedding(Embedding):
    """An embedding layer that can be called in reverse to compute logits (Keras 3.15).

    `layer(ids)` embeds as `Embedding`; `layer(hidden, reverse=True)` projects the last axis
    from `output_dim` to `input_dim` with the transposed embeddings (`tie_weights=True`) or a
    separate trainable `reverse_embeddings` (output_dim, input_dim) weight. No bias.

    Args:
        input_dim: vocabulary size. output_dim: embedding size.
        tie_weights: share the embedding matrix with the reverse projection (default True).
        embeddings_initializer, embeddings_regularizer, embeddings_constraint, mask_zero: as
            `Embedding` (`reverse_embeddings` uses the same initializer).
        reverse_dtype: dtype of the reverse projection's computation (default: the layer's).
        logit_soft_cap: when set, reverse logits become `tanh(logits / cap) * cap`.

    Call arguments:
        inputs: integer ids, or (..., output_dim) floats with `reverse=True`.
        reverse: project back to the vocabulary.

    Example:
    ```python
    emb = ReversibleEmbedding(100, 32)
    hidden = emb(token_ids)                 # (batch, length, 32)
    logits = emb(hidden, reverse=True)      # (batch, length, 100)
    ```
    """

    def __init__(self, input_dim, output_dim, tie_weights=True, embeddings_initializer="uniform",
                 embeddings_regularizer=None, embeddings_constraint=None, mask_zero=False,
                 reverse_dtype=None, logit_soft_cap=None, **kwargs):
        super().__init__(input_dim, output_dim, embeddings_initializer=embeddings_initializer,
                         embeddings_regularizer=embeddings_regularizer,
                         embeddings_constraint=embeddings_constraint, mask_zero=mask_zero,
                         **kwargs)
        self.tie_weights = tie_weights
        self.reverse_dtype = reverse_dtype
        self.logit_soft_cap = logit_soft_cap

    def build(self, input_shape=None):
        super().build(input_shape)
        if not self.tie_weights:
            self.reverse_embeddings = self.add_weight(
                shape=(self.output_dim, self.input_dim), initializer=self.embeddings_initializer,
                name="reverse_embeddings", trainable=True)

    def call(self, inputs, reverse=False):
        if not reverse:
            result = super().call(inputs)
            mask = super().compute_mask(inputs)
            if mask is not None:
                set_keras_mask(result, mask)
            return result
        if inputs.shape[-1] is not None and inputs.shape[-1] != self.output_dim:
            raise ValueError(f'Layer "{self.name}" called with reverse=True expects inputs '
                             f"whose last axis is output_dim={self.output_dim}; received "
                             f"shape {tuple(inputs.shape)}.")
        kernel = ops.transpose(self.embeddings) if self.tie_weights else self.reverse_embeddings
        if self.reverse_dtype is not None:
            inputs, kernel = ops.cast(inputs, self.reverse_dtype), ops.cast(kernel,
                                                                             self.reverse_dtype)
        elif not isinstance(inputs, KerasTensor) and inputs.dtype.kind != "f":
            inputs = ops.cast(inputs, "float32")
        logits = ops.matmul(inputs, kernel)
        if self.logit_soft_cap is not None:
            cap = self.logit_soft_cap
            logits = ops.multiply(ops.tanh(ops.divide(logits, cap)), cap)
        return logits

    def compute_mask(self, inputs, mask=None):
        return None  # attached by `call` in the forward direction, as Keras

    def compute_output_shape(self, input_shape, reverse=False):
        shape = list(input_shape)
        if reverse:
            shape[-1] = self.input_dim
        else:
            shape.append(self.output_dim)
        return tuple(shape)

    def get_config(self):
        config = super().get_config()
        config.update({"tie_weights": self.tie_weights, "reverse_dtype": self.reverse_dtype,
                       "logit_soft_cap": self.logit_soft_cap})
        return config
