"""GroupedQueryAttention (Ainslie et al., 2023), Keras 3's `GroupQueryAttention`: query heads
share key/value heads in groups."""

import math

from fkeras import constraints, initializers, ops, regularizers
from fkeras.engine.keras_tensor import KerasTensor
from fkeras.engine.masking import get_keras_mask
from fkeras.layers.activations.softmax import Softmax
from fkeras.layers.attention import dot_attention
from fkeras.layers.attention.multi_head_attention import _clone
from fkeras.layers.core.einsum_dense import EinsumDense
from fkeras.layers.layer import Layer
from fkeras.layers.regularization.dropout import Dropout


class GroupedQueryAttention(Layer):
    """Grouped-query attention (exported as `GroupQueryAttention`, as in Keras 3).

    `num_query_heads` query heads and `num_key_value_heads` key/value heads of size
    `head_dim`; each key/value head serves `num_query_heads // num_key_value_heads` query
    heads. Projections are EinsumDense layers `query` ("bqm,muh->bquh"), `key` and `value`
    ("bkm,mvh->bkvh"), `attention_output` ("bquh,uhm->bqm"), Keras 3's weight layout.

    Args:
        head_dim, num_query_heads, num_key_value_heads: positive ints; num_query_heads must
            be a multiple of num_key_value_heads.
        dropout: on the attention probabilities, training only. use_bias, use_gate, seed,
            initializers, regularizers, constraints: as MultiHeadAttention.
        sliding_window: optional positive int, as MultiHeadAttention's.
        flash_attention: accepted as None / False only.

    Call arguments: as MultiHeadAttention (query (B, T, dim), value (B, S, dim), key, masks,
        use_causal_mask, return_attention_scores, training); inputs are rank 3.

    Example:
    ```python
    x = Input(shape=(8, 16))
    y = GroupQueryAttention(head_dim=4, num_query_heads=4, num_key_value_heads=2)(x, x)
    ```
    """

    _fk_float_inputs = True
    _fk_export_name = "GroupQueryAttention"  # Keras 3 writes this name; the class keeps its own

    def __init__(self, head_dim, num_query_heads, num_key_value_heads, dropout=0.0,
                 use_bias=True, sliding_window=None, flash_attention=None,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, use_gate=False, seed=None,
                 **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True
        self.head_dim, self.num_query_heads = head_dim, num_query_heads
        self.num_key_value_heads = num_key_value_heads
        if num_query_heads % num_key_value_heads != 0:
            raise ValueError("`num_query_heads` must be divisible by `num_key_value_heads`.")
        self.num_repeats = num_query_heads // num_key_value_heads
        self.dropout, self.use_bias, self.use_gate = dropout, use_bias, use_gate
        if sliding_window is not None and (isinstance(sliding_window, bool) or not isinstance(
                sliding_window, int) or sliding_window <= 0):
            raise ValueError("`sliding_window` must be `None` or a positive integer. "
                             f"Received: sliding_window={sliding_window}")
        if flash_attention:
            raise ValueError(f'Layer "{self.name}": `flash_attention=True` is not available '
                             "in fkeras (no flash-attention kernel); pass None or False. "
                             "Received: flash_attention=True")
        self.sliding_window = sliding_window
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self._sub_activity_regularizer = regularizers.get(activity_regularizer)
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.bias_constraint = constraints.get(bias_constraint)
        self.seed = seed
        self._inverse_sqrt_head_dim = 1.0 / math.sqrt(float(head_dim))
        self._built_from = None

    def build(self, query_shape, value_shape=None, key_shape=None):
        """Creates the projections (on the first call in fkeras, when the value shape is
        known)."""
        if value_shape is None:
            return
        key_shape = value_shape if key_shape is None else key_shape
        self.feature_dim = query_shape[-1]
        bias = self.use_bias
        self._query_dense = self._dense("bqm,muh->bquh", (None, self.num_query_heads),
                                        "uh", "query")
        self._query_dense.build(tuple(query_shape))
        self._key_dense = self._dense("bkm,mvh->bkvh", (None, self.num_key_value_heads),
                                      "vh", "key")
        self._key_dense.build(tuple(key_shape))
        if self.use_gate:
            self._gate_dense = self._dense("bqm,muh->bquh", (None, self.num_query_heads),
                                           "uh", "gate", "sigmoid")
            self._gate_dense.build(tuple(query_shape))
        self._value_dense = self._dense("bkm,mvh->bkvh", (None, self.num_key_value_heads),
                                        "vh", "value")
        self._value_dense.build(tuple(value_shape))
        self._softmax = Softmax(axis=-1, dtype=self.dtype)
        self._dropout_layer = Dropout(rate=self.dropout, seed=self.seed, dtype=self.dtype)
        self._output_dense = EinsumDense("bquh,uhm->bqm", output_shape=(None, self.feature_dim),
                                         bias_axes="m" if bias else None,
                                         name="attention_output", **self._sublayer_kwargs())
        self._output_dense.build((None, None, self.num_query_heads, self.head_dim))
        self._built_from = (tuple(query_shape), tuple(value_shape), tuple(key_shape))
        self.built = True

    def _dense(self, equation, heads, bias_axes, name, activation=None):
        return EinsumDense(equation, output_shape=heads + (self.head_dim,),
                           bias_axes=bias_axes if self.use_bias else None, name=name,
                           activation=activation, **self._sublayer_kwargs())

    def _sublayer_kwargs(self):
        return dict(kernel_initializer=_clone(self.kernel_initializer),
                    bias_initializer=_clone(self.bias_initializer),
                    kernel_regularizer=self.kernel_regularizer,
                    bias_regularizer=self.bias_regularizer,
                    activity_regularizer=self._sub_activity_regularizer,
                    kernel_constraint=self.kernel_constraint,
                    bias_constraint=self.bias_constraint, dtype=self.dtype)

    def __call__(self, *args, **kwargs):
        # `layer(query=q, value=v)`: the query is the call's first (input) argument.
        if not args and "query" in kwargs:
            args = (kwargs.pop("query"),)
        return super().__call__(*args, **kwargs)

    def call(self, query, value, key=None, query_mask=None, value_mask=None, key_mask=None,
             attention_mask=None, return_attention_scores=False, training=None,
             use_causal_mask=False):
        key = value if key is None else key
        if self._built_from is None:
            self.build(query.shape, value.shape, key.shape)
        if isinstance(query, KerasTensor):
            out = KerasTensor(self.compute_output_shape(query.shape, value.shape, key.shape),
                              query.dtype)
            if not return_attention_scores:
                return out
            return out, KerasTensor((query.shape[0], self.num_query_heads, query.shape[1],
                                     value.shape[1]), query.dtype)
        query_mask = get_keras_mask(query) if query_mask is None else query_mask
        value_mask = get_keras_mask(value) if value_mask is None else value_mask
        if key_mask is None and key is not value:
            key_mask = get_keras_mask(key)
        mask = dot_attention.combine_masks(query_mask, value_mask, key_mask, attention_mask,
                                           use_causal_mask, query.shape[1], value.shape[1],
                                           self.sliding_window)
        gate = self._gate_dense(query) if self.use_gate else None
        q = self._query_dense(query)
        k, v = self._key_dense(key), self._value_dense(value)
        zero_rows = self.dropout > 0 or return_attention_scores
        out = None if return_attention_scores else dot_attention.fused_attend(
            q, k, v, self._inverse_sqrt_head_dim, mask, self._dropout_layer, training,
            zero_masked_rows=zero_rows)
        if out is not None:  # the fused kernel, grouped heads read in place
            scores = None
        else:
            k = ops.repeat(k, self.num_repeats, axis=2)
            v = ops.repeat(v, self.num_repeats, axis=2)
            out, scores = dot_attention.attend(q, k, v, self._inverse_sqrt_head_dim, mask, (1,),
                                               self._softmax, self._dropout_layer,
                                               training, zero_masked_rows=zero_rows)
        if gate is not None:
            out = ops.multiply(out, gate)
        out = self._output_dense(out)
        return (out, scores) if return_attention_scores else out

    def compute_output_shape(self, query_shape, value_shape=None, key_shape=None):
        query_shape = tuple(query_shape)
        if value_shape is not None:
            value_shape = tuple(value_shape)
            key_shape = value_shape if key_shape is None else tuple(key_shape)
            if query_shape[-1] != value_shape[-1]:
                raise ValueError("The last dimension of `query_shape` and `value_shape` must "
                                 f"be equal, but are {query_shape[-1]}, {value_shape[-1]}. "
                                 f"Received: query_shape={query_shape}, "
                                 f"value_shape={value_shape}")
            if value_shape[1:-1] != key_shape[1:-1]:
                raise ValueError("All dimensions of `value` and `key`, except the last one, "
                                 f"must be equal. Received: value_shape={value_shape} and "
                                 f"key_shape={key_shape}")
        return query_shape

    def get_config(self):
        config = super().get_config()
        config.update({
            "head_dim": self.head_dim,
            "num_query_heads": self.num_query_heads,
            "num_key_value_heads": self.num_key_value_heads,
            "use_bias": self.use_bias,
            "use_gate": self.use_gate,
            "sliding_window": self.sliding_window,
            "dropout": self.dropout,
            "kernel_initializer": initializers.serialize(self.kernel_initializer),
            "bias_initializer": initializers.serialize(self.bias_initializer),
            "kernel_regularizer": regularizers.serialize(self.kernel_regularizer),
            "bias_regularizer": regularizers.serialize(self.bias_regularizer),
            "activity_regularizer": regularizers.serialize(self._sub_activity_regularizer),
            "kernel_constraint": constraints.serialize(self.kernel_constraint),
            "bias_constraint": constraints.serialize(self.bias_constraint),
            "seed": self.seed,
        })
        return config


GroupQueryAttention = GroupedQueryAttention
