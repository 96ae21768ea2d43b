"""AdditiveAttention (Bahdanau-style): scores = sum(scale * tanh(query + key), -1)."""

from fkeras import ops
from fkeras.layers.attention.attention import Attention


class AdditiveAttention(Attention):
    """Additive attention layer, a.k.a. Bahdanau-style attention (Keras 3).

    `scores[b, i, j] = sum_d scale[d] * tanh(query[b, i, d] + key[b, j, d])`, then
    `softmax(scores) . value` with the masks of `Attention`.

    Args:
        use_scale: a trainable `scale` vector (dim,), glorot-uniform (default True);
            without it the sum is unweighted.
        dropout: dropout rate on the attention probabilities (training only).
        seed (keyword): the dropout seed.

    Example:
    ```python
    q, v = Input(shape=(4, 8)), Input(shape=(6, 8))
    y = AdditiveAttention()([q, v])   # (None, 4, 8)
    ```
    """

    def __init__(self, use_scale=True, dropout=0.0, **kwargs):
        super().__init__(use_scale=use_scale, dropout=dropout, **kwargs)

    def build(self, input_shape):
        self._validate_inputs(input_shape)
        self.scale = None
        self.concat_score_weight = None
        if self.use_scale:
            self.scale = self.add_weight(name="scale", shape=(input_shape[0][-1],),
                                         initializer="glorot_uniform")
        self.built = True

    def _calculate_scores(self, query, key):
        total = ops.tanh(ops.add(ops.expand_dims(query, -2), ops.expand_dims(key, -3)))
        if self.scale is not None:
            total = ops.multiply(self.scale, total)
        return ops.sum(total, axis=-1)

    def get_config(self):
        config = super().get_config()
        del config["score_mode"]
        return config
