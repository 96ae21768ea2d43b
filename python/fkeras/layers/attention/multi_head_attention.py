"""MultiHeadAttention (Vaswani et al., 2017), Keras 3's layer: EinsumDense projections, scaled
dot-product attention per head, an EinsumDense output projection."""

import math

from fkeras import constraints, initializers, ops, regularizers
from fkeras.engine.keras_tensor import KerasTensor
from fkeras.engine.masking import get_keras_mask
from fkeras.layers.activations.softmax import Softmax
from fkeras.layers.attention import dot_attention
from fkeras.layers.core.einsum_dense import EinsumDense
from fkeras.layers.layer import Layer
from fkeras.layers.regularization.dropout import Dropout

_LETTERS = "abcdefghijklmnopqrstuvwxyz"


class MultiHeadAttention(Layer):
    """Multi-head attention, Keras 3's layer and weight layout.

    Query, key and value are projected to `num_heads` heads by EinsumDense layers (`query`,
    `key`, `value`: kernels (dim, num_heads, key_dim) or (dim, num_heads, value_dim)), attention
    `softmax(q k^T / sqrt(key_dim))` runs over `attention_axes`, and `attention_output` projects
    the heads back to the query's last dimension (or `output_shape`).

    Args:
        num_heads, key_dim: positive ints. value_dim: default key_dim.
        dropout: dropout rate on the attention probabilities (training only).
        use_bias: whether the projections have biases.
        output_shape: the output's shape without the batch and query axes (default: the
            query's last dimension).
        attention_axes: the axes attention runs over (default: every axis between the batch
            and the features).
        use_gate: a sigmoid EinsumDense gate on the query multiplies the attention output.
        kernel/bias initializers, regularizers, constraints, activity_regularizer: passed to
            the projection layers (as Keras 3).
        seed: the dropout seed.
        sliding_window: optional positive int: query i attends to keys j with
            |i - j| < sliding_window (with use_causal_mask: the previous window only).
        flash_attention: accepted as None / False only.

    Call arguments:
        query (B, T, dim), value (B, S, dim), key (B, S, dim) (default: value).
        attention_mask: booleans (B, T, S), True where query i may attend to key j.
        query_mask / value_mask / key_mask: (B, T) / (B, S) booleans; value_mask and key_mask
            default to the Keras masks attached to value and key; the query mask is the one
            attached to `query` (as Keras 3.15, which ignores an explicit `query_mask`).
        use_causal_mask: query i sees keys j <= i only.
        return_attention_scores: also return the probabilities (B, N, T, S).
        training: enables dropout.

    Example:
    ```python
    x = Input(shape=(8, 16))
    y = MultiHeadAttention(num_heads=2, key_dim=4)(x, x)   # (None, 8, 16)
    ```
    """

    _fk_float_inputs = True

    def __init__(self, num_heads, key_dim, value_dim=None, dropout=0.0, use_bias=True,
                 output_shape=None, attention_axes=None, sliding_window=None,
                 flash_attention=None, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, bias_constraint=None,
                 use_gate=False, seed=None, **kwargs):
        for arg, value, allow_none in (("num_heads", num_heads, False),
                                       ("key_dim", key_dim, False),
                                       ("value_dim", value_dim, True)):
            if (value is not None or not allow_none) and (
                    isinstance(value, bool) or not isinstance(value, int) or value <= 0):
                raise ValueError(f"Received an invalid value for argument `{arg}`, expected "
                                 f"a positive integer{' or `None`' if allow_none else ''}. "
                                 f"Received: {arg}={value}")
        super().__init__(**kwargs)
        if sliding_window is not None and (isinstance(sliding_window, bool) or not isinstance(
                sliding_window, int) or sliding_window <= 0):
            raise ValueError("`sliding_window` must be `None` or a positive integer. "
                             f"Received: sliding_window={sliding_window}")
        if flash_attention:
            raise ValueError(f'Layer "{self.name}": `flash_attention=True` is not available '
                             "in fkeras (no flash-attention kernel); pass None or False. "
                             "Received: flash_attention=True")
        self.supports_masking = True
        self._num_heads, self._key_dim = num_heads, key_dim
        self._value_dim = value_dim if value_dim else key_dim
        self._dropout, self._use_bias, self._use_gate = dropout, use_bias, use_gate
        if output_shape:
            if isinstance(output_shape, int):
                output_shape = (output_shape,)
            try:
                output_shape = tuple(output_shape)
            except TypeError:
                raise ValueError(f"Invalid `output_shape`: {output_shape}. When specified, "
                                 "the `output_shape` should be of type tuple, list, or int."
                                 ) from None
        self._output_shape = output_shape or None
        self._kernel_initializer = initializers.get(kernel_initializer)
        self._bias_initializer = initializers.get(bias_initializer)
        self._kernel_regularizer = regularizers.get(kernel_regularizer)
        self._bias_regularizer = regularizers.get(bias_regularizer)
        self._activity_regularizer = regularizers.get(activity_regularizer)
        self._kernel_constraint = constraints.get(kernel_constraint)
        self._bias_constraint = constraints.get(bias_constraint)
        if isinstance(attention_axes, int):
            attention_axes = (attention_axes,)
        elif attention_axes and not isinstance(attention_axes, (list, tuple)):
            raise ValueError("`attention_axes` must be an int, list, or tuple."
                             f"Received: attention_axes={attention_axes}")
        self._attention_axes = attention_axes
        self._sliding_window = sliding_window
        self.seed = seed
        self._inverse_sqrt_key_dim = 1.0 / math.sqrt(float(key_dim))
        self._built_from = None

    num_heads = property(lambda self: self._num_heads)
    key_dim = property(lambda self: self._key_dim)
    value_dim = property(lambda self: self._value_dim)
    dropout = property(lambda self: self._dropout)
    use_bias = property(lambda self: self._use_bias)
    attention_axes = property(lambda self: self._attention_axes)

    # ---- building ----
    def build(self, query_shape, value_shape=None, key_shape=None):
        """Creates the projections. fkeras's `__call__` passes the query shape only; the
        layer then builds on its first call, when the value and key shapes are known."""
        if value_shape is None:
            return
        key_shape = value_shape if key_shape is None else key_shape
        if tuple(value_shape[1:-1]) != tuple(key_shape[1:-1]):
            raise ValueError("All dimensions of `value` and `key`, except the last one, must "
                             f"be equal. Received: value_shape={tuple(value_shape)} and "
                             f"key_shape={tuple(key_shape)}")
        q_rank = len(query_shape)
        self.query_dense = self._projection(q_rank, self._key_dim, "query")
        self.query_dense.build(tuple(query_shape))
        self.key_dense = self._projection(len(key_shape), self._key_dim, "key")
        self.key_dense.build(tuple(key_shape))
        if self._use_gate:
            self._gate_dense = self._projection(q_rank, self._value_dim, "gate", "sigmoid")
            self._gate_dense.build(tuple(query_shape))
        self.value_dense = self._projection(len(value_shape), self._value_dim, "value")
        self.value_dense.build(tuple(value_shape))
        rank = len(value_shape) + 1
        axes = self._attention_axes
        axes = tuple(range(1, rank - 2)) if axes is None else \
            tuple(a if a >= 0 else (rank - 1) + a for a in axes)
        self._attention_axes = axes
        self._softmax = Softmax(axis=list(range(rank - 1, rank - 1 + len(axes))),
                                dtype=self.dtype)
        self._dropout_layer = Dropout(rate=self._dropout, seed=self.seed, dtype=self.dtype)
        out_shape = self._output_shape or (query_shape[-1],)
        eq, bias_axes = _projection_equation(q_rank - 1, 2, len(out_shape))
        self.output_dense = EinsumDense(eq, output_shape=[None] * (q_rank - 2) +
                                         list(out_shape),
                                         bias_axes=bias_axes if self._use_bias else None,
                                         name="attention_output", **self._sublayer_kwargs())
        heads_shape = tuple(query_shape[:-1]) + (self._num_heads, self._value_dim)
        self.output_dense.build(heads_shape)
        self._built_from = (tuple(query_shape), tuple(value_shape), tuple(key_shape))
        self.built = True

    def _projection(self, rank, dim, name, activation=None):
        eq, bias_axes = _projection_equation(rank - 1, 1, 2)
        return EinsumDense(eq, output_shape=[None] * (rank - 2) + [self._num_heads, dim],
                           bias_axes=bias_axes if self._use_bias else None, name=name,
                           activation=activation, **self._sublayer_kwargs())

    def _sublayer_kwargs(self):
        return dict(kernel_initializer=_clone(self._kernel_initializer),
                    bias_initializer=_clone(self._bias_initializer),
                    kernel_regularizer=self._kernel_regularizer,
                    bias_regularizer=self._bias_regularizer,
                    activity_regularizer=self._activity_regularizer,
                    kernel_constraint=self._kernel_constraint,
                    bias_constraint=self._bias_constraint, dtype=self.dtype)

    # Keras 3 keeps these four under private names with public properties, and its weight
    # files use the public ones ("query_dense/vars"); fkeras stores them publicly.
    _query_dense = property(lambda self: self.query_dense)
    _key_dense = property(lambda self: self.key_dense)
    _value_dense = property(lambda self: self.value_dense)
    _output_dense = property(lambda self: self.output_dense)

    # ---- calling ----
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
            return self._symbolic_outputs(query, value, key, return_attention_scores)
        query_mask = get_keras_mask(query)
        value_mask = get_keras_mask(value) if value_mask is None else value_mask
        if key_mask is None and key is not value:
            key_mask = get_keras_mask(key)
        mask = dot_attention.combine_masks(query_mask, value_mask, key_mask, attention_mask,
                                           use_causal_mask, query.shape[1], value.shape[1],
                                           self._sliding_window)
        gate = self._gate_dense(query) if self._use_gate else None
        q = self.query_dense(query)
        k = self.key_dense(key)
        v = self.value_dense(value)
        out, scores = self._compute_attention(q, k, v, mask, training,
                                              return_attention_scores)
        if gate is not None:
            out = ops.multiply(out, gate)
        out = self.output_dense(out)
        return (out, scores) if return_attention_scores else out

    def _compute_attention(self, query, key, value, attention_mask=None, training=None,
                           return_attention_scores=False):
        """(attention output (B, T, N, value_dim), probabilities) from projected heads.

        One attention axis without returned scores runs on the fused attention kernel
        (`dot_attention.fused_attend`; probabilities None); the rest is composed of ops.

        A query row whose keys are all masked gets zeros when Keras 3 takes its explicit
        path (dropout, returned scores, or more than one attention axis), and the average of
        the values when Keras takes its fused `dot_product_attention` path."""
        fused = not (self._dropout > 0 or return_attention_scores or len(query.shape) != 4)
        if not return_attention_scores and tuple(self._attention_axes) == (1,):
            out = dot_attention.fused_attend(query, key, value, self._inverse_sqrt_key_dim,
                                             attention_mask, self._dropout_layer, training,
                                             zero_masked_rows=not fused)
            if out is not None:
                return out, None
        return dot_attention.attend(query, key, value, self._inverse_sqrt_key_dim,
                                    attention_mask, self._attention_axes, self._softmax,
                                    self._dropout_layer, training, zero_masked_rows=not fused)

    def _symbolic_outputs(self, query, value, key, return_attention_scores):
        out = KerasTensor(self.compute_output_shape(query.shape, value.shape, key.shape),
                          query.dtype)
        if not return_attention_scores:
            return out
        rank = len(query.shape) + 1
        batch, attn = dot_attention.attention_layout(rank, self._attention_axes)
        q_heads = tuple(query.shape[:-1]) + (self._num_heads,)
        scores = tuple(q_heads[i] for i in batch) + tuple(query.shape[i] for i in attn) + \
            tuple(value.shape[i] for i in attn)
        return out, KerasTensor(scores, query.dtype)

    def compute_output_shape(self, query_shape, value_shape=None, key_shape=None):
        query_shape = tuple(query_shape)
        if value_shape is not None:
            value_shape = tuple(value_shape)
            key_shape = value_shape if key_shape is None else tuple(key_shape)
            if value_shape[1:-1] != key_shape[1:-1]:
                raise ValueError("All dimensions of `value` and `key`, except the last one, "
                                 f"must be equal. Received: value_shape={value_shape} and "
                                 f"key_shape={key_shape}")
        if self._output_shape:
            return query_shape[:-1] + tuple(self._output_shape)
        return query_shape

    def get_build_config(self):
        if self._built_from is None:
            return None
        q, v, k = self._built_from
        return {"shapes_dict": {"query_shape": q, "value_shape": v, "key_shape": k}}

    def get_config(self):
        config = super().get_config()
        config.update({
            "num_heads": self._num_heads,
            "key_dim": self._key_dim,
            "value_dim": self._value_dim,
            "dropout": self._dropout,
            "use_bias": self._use_bias,
            "use_gate": self._use_gate,
            "output_shape": self._output_shape,
            "attention_axes": self._attention_axes,
            "sliding_window": self._sliding_window,
            "kernel_initializer": initializers.serialize(self._kernel_initializer),
            "bias_initializer": initializers.serialize(self._bias_initializer),
            "kernel_regularizer": regularizers.serialize(self._kernel_regularizer),
            "bias_regularizer": regularizers.serialize(self._bias_regularizer),
            "activity_regularizer": regularizers.serialize(self._activity_regularizer),
            "kernel_constraint": constraints.serialize(self._kernel_constraint),
            "bias_constraint": constraints.serialize(self._bias_constraint),
            "seed": self.seed,
        })
        return config


def _projection_equation(free_dims, bound_dims, output_dims):
    """("<free><bound>,<bound><out>-><free><out>", "<out>") with consecutive letters, as
    Keras 3's MultiHeadAttention names its projection axes."""
    free = _LETTERS[:free_dims]
    bound = _LETTERS[free_dims:free_dims + bound_dims]
    out = _LETTERS[free_dims + bound_dims:free_dims + bound_dims + output_dims]
    return f"{free}{bound},{bound}{out}->{free}{out}", out


def _clone(initializer):
    """A fresh copy of an initializer (each projection draws its own values)."""
    if hasattr(initializer, "get_config") and hasattr(type(initializer), "from_config"):
        return type(initializer).from_config(initializer.get_config())
    return initializer
