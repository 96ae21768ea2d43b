"""Attention (Luong-style dot-product) and the scoring shared with AdditiveAttention."""

import numpy as np

from fkeras import ops, random
from fkeras.backend import devices as _devices
from fkeras.engine.keras_tensor import KerasTensor
from fkeras.layers.layer import Layer

_MASKED_PENALTY = 1.0e9  # Keras 3 subtracts this from masked scores (float32)


class Attention(Layer):
    """Dot-product attention layer, a.k.a. Luong-style attention (Keras 3).

    `scores = query . key^T` (times a trainable scalar `scale` with use_scale) or, with
    score_mode="concat", `concat_score_weight * sum(tanh(scale * (query + key)), -1)`;
    `output = softmax(scores) . value`.

    Args:
        use_scale: adds the trainable scalar `scale` (initialized to 1).
        score_mode: "dot" or "concat" (adds the scalar `concat_score_weight`).
        dropout: dropout rate on the attention probabilities (training only).
        seed: the dropout seed.

    Call arguments:
        inputs: [query (B, Tq, dim), value (B, Tv, dim)] or [query, value, key (B, Tv, dim)].
        mask: [query_mask (B, Tq), value_mask (B, Tv)] (default: the inputs' Keras masks).
            Masked keys get their score lowered by 1e9; masked query rows output zeros.
        training: enables dropout. return_attention_scores: also return the probabilities.
        use_causal_mask: query i attends to keys j <= i only.

    Example:
    ```python
    q, v = Input(shape=(4, 8)), Input(shape=(6, 8))
    y = Attention()([q, v])   # (None, 4, 8)
    ```
    """

    _fk_float_inputs = True

    def __init__(self, use_scale=False, score_mode="dot", dropout=0.0, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.use_scale, self.score_mode = use_scale, score_mode
        self.dropout, self.seed = dropout, seed
        self.seed_generator = random.SeedGenerator(seed) if dropout > 0 else None
        if score_mode not in ("dot", "concat"):
            raise ValueError("Invalid value for argument score_mode. Expected one of "
                             f"{{'dot', 'concat'}}. Received: score_mode={score_mode}")
        self.supports_masking = True

    def build(self, input_shape):
        self._validate_inputs(input_shape)
        self.scale = None
        self.concat_score_weight = None
        if self.use_scale:
            self.scale = self.add_weight(name="scale", shape=(), initializer="ones")
        if self.score_mode == "concat":
            self.concat_score_weight = self.add_weight(name="concat_score_weight", shape=(),
                                                       initializer="ones")
        self.built = True

    def _calculate_scores(self, query, key):
        """(B, Tq, Tv) scores from query (B, Tq, dim) and key (B, Tv, dim)."""
        if self.score_mode == "dot":
            scores = ops.matmul(query, ops.transpose(key, _swap_last(len(key.shape))))
            return scores if self.scale is None else ops.multiply(scores, self.scale)
        total = ops.add(ops.expand_dims(query, -2), ops.expand_dims(key, -3))
        if self.scale is not None:
            total = ops.multiply(self.scale, total)
        return ops.multiply(self.concat_score_weight, ops.sum(ops.tanh(total), axis=-1))

    def _apply_scores(self, scores, value, scores_mask=None, training=False):
        """(softmax(scores with masked keys lowered by 1e9) . value, probabilities)."""
        if scores_mask is not None:
            keep = _devices.host_array(scores_mask, bool)
            if keep.ndim == 2:
                keep = keep[:, None, :]
            scores = ops.where(keep, scores, ops.subtract(scores, _MASKED_PENALTY))
        weights = ops.softmax(scores, axis=-1)
        applied = weights
        if training and self.dropout > 0:
            applied = random.dropout(weights, self.dropout, seed=self.seed_generator)
        return ops.matmul(applied, value), weights

    def call(self, inputs, mask=None, training=False, return_attention_scores=False,
             use_causal_mask=False):
        self._validate_inputs(inputs, mask)
        q, v = inputs[0], inputs[1]
        k = inputs[2] if len(inputs) > 2 else v
        if isinstance(q, KerasTensor):
            out = KerasTensor(self.compute_output_shape([q.shape, v.shape, k.shape]), q.dtype)
            if return_attention_scores:
                return out, KerasTensor(tuple(q.shape[:-1]) + (k.shape[-2],), q.dtype)
            return out
        q_mask = mask[0] if mask else None
        v_mask = mask[1] if mask else None
        scores = self._calculate_scores(q, k)
        scores_mask = None if v_mask is None else _devices.host_array(v_mask, bool)
        if use_causal_mask:
            T, S = scores.shape[-2], scores.shape[-1]
            causal = np.tri(T, S, dtype=bool)[None]
            scores_mask = causal if scores_mask is None else \
                np.logical_and(scores_mask[..., None, :], causal)
        out, weights = self._apply_scores(scores, v, scores_mask, training)
        if q_mask is not None:
            out = ops.where(_devices.host_array(q_mask, bool)[..., None], out, 0.0)
        return (out, weights) if return_attention_scores else out

    def compute_mask(self, inputs, mask=None):
        if mask is None or mask[0] is None:
            return None
        return mask[0]

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[0][:-1]) + (input_shape[1][-1],)

    def _validate_inputs(self, inputs, mask=None):
        name = type(self).__name__
        if not isinstance(inputs, (list, tuple)) or (
                inputs and isinstance(inputs[0], int)):
            raise ValueError(f"{name} layer must be called on a list of inputs, namely "
                             f"[query, value] or [query, value, key]. Received: "
                             f"inputs={inputs}.")
        if not 2 <= len(inputs) <= 3:
            raise ValueError(f"{name} layer accepts inputs list of length 2 or 3, namely "
                             "[query, value] or [query, value, key]. Received length: "
                             f"{len(inputs)}.")
        if mask is not None:
            if not isinstance(mask, (list, tuple)):
                raise ValueError(f"{name} layer mask must be a list, namely [query_mask, "
                                 f"value_mask]. Received: mask={mask}.")
            if not 2 <= len(mask) <= 3:
                raise ValueError(f"{name} layer accepts mask list of length 2 or 3. "
                                 f"Received: inputs={inputs}, mask={mask}.")

    def get_config(self):
        config = super().get_config()
        config.update({"use_scale": self.use_scale, "score_mode": self.score_mode,
                       "dropout": self.dropout, "seed": self.seed})
        return config


def _swap_last(rank):
    return tuple(range(rank - 2)) + (rank - 1, rank - 2)
