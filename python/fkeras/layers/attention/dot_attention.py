"""Scaled dot-product attention over projected heads, shared by MultiHeadAttention and
GroupedQueryAttention, composed of fkeras ops (transpose, reshape, batch_matmul on the GEMM
kernel, softmax), so the tape differentiates it.

Layout (Keras 3's): projected query (B, <other axes>, <attention axes>, N, H) in any interleaving
of other and attention axes; key/value alike with their own attention extents. The "batch
axes" are every axis except the attention axes and the channel axis (so they end with the heads
axis N); scores have shape (<batch axes>, <query attention axes>, <key attention axes>).
"""

import numpy as np

from fkeras import ops
from fkeras.backend import devices as _devices
from fkeras.ops.batch_matmul import batch_matmul

_LARGE_NEGATIVE = -1e9


def combine_masks(query_mask=None, value_mask=None, key_mask=None, attention_mask=None,
                  use_causal_mask=False, q_len=None, v_len=None, sliding_window=None):
    """The boolean attention mask (B|1, T, S) from the pieces Keras 3 ANDs together: the query
    mask as (B, T, 1), the value and key masks as (B, 1, S), the causal mask (1, T, S) (key j
    visible from query i when j <= i), the sliding-window band (|i - j| < window) and an
    explicit `attention_mask`. None when none is given. Masks are constants (NumPy booleans):
    they carry no gradient."""
    parts = []
    if query_mask is not None:
        parts.append(_devices.host_array(query_mask).astype(bool)[..., :, None])
    if value_mask is not None:
        parts.append(_devices.host_array(value_mask).astype(bool)[..., None, :])
    if key_mask is not None:
        parts.append(_devices.host_array(key_mask).astype(bool)[..., None, :])
    if use_causal_mask:
        parts.append(np.tri(q_len, v_len, dtype=bool)[None])
    if sliding_window is not None:
        distance = np.abs(np.arange(q_len)[:, None] - np.arange(v_len)[None, :])
        parts.append((distance < sliding_window)[None])
    if attention_mask is not None:
        parts.append(_devices.host_array(attention_mask).astype(bool))
    if not parts:
        return None
    out = parts[0]
    for p in parts[1:]:
        out = np.logical_and(out, p)
    return out


def attention_layout(rank, attention_axes):
    """(batch axes, attention axes) of a projected tensor of `rank` (channels last)."""
    attn = list(attention_axes)
    batch = [i for i in range(rank - 1) if i not in attn]
    return batch, attn


def attend(query, key, value, scale, attention_mask, attention_axes, softmax, dropout,
           training, zero_masked_rows=True):
    """softmax(scale * q . k, mask) . v over `attention_axes`.

    Args:
        query, key, value: projected arrays (B, ..., N, H) (value: (B, ..., N, Hv)).
        scale: multiplies the query before the product (Keras 3's order).
        attention_mask: booleans broadcastable to the scores after Keras's expansion (axes
            inserted before the query attention axes), or None.
        softmax: a Softmax layer over the last len(attention_axes) axes of the scores.
        dropout: a Dropout layer applied to the probabilities in training.
        zero_masked_rows: masked probabilities are set to 0 after the softmax (Keras 3's
            Softmax layer), so a query row with every key masked attends to nothing; False
            keeps the softmax of the -1e9-filled scores, so such a row averages every value
            (Keras 3's fused `dot_product_attention` path).

    Returns:
        (output with the query's layout and value's channels, probabilities before dropout
        with shape (<batch axes>, <query attention axes>, <key attention axes>)).
    """
    rank = len(query.shape)
    batch, attn = attention_layout(rank, attention_axes)
    qs, ks = tuple(query.shape), tuple(key.shape)
    lead = tuple(qs[i] for i in batch)
    t_dims, s_dims = tuple(qs[i] for i in attn), tuple(ks[i] for i in attn)
    T, S = int(np.prod(t_dims)), int(np.prod(s_dims))
    perm = batch + attn + [rank - 1]
    q = ops.reshape(_permute(ops.multiply(query, scale), perm), lead + (T, qs[-1]))
    k = ops.reshape(_permute(key, perm), lead + (S, ks[-1]))
    v = ops.reshape(_permute(value, perm), lead + (S, value.shape[-1]))
    scores = ops.reshape(batch_matmul(q, k, transpose_b=True), lead + t_dims + s_dims)
    mask = None
    if attention_mask is not None:
        mask = _devices.host_array(attention_mask)
        while mask.ndim < len(scores.shape):  # Keras: new axes before the query axes
            mask = np.expand_dims(mask, -2 * len(attn) - 1)
    if mask is None:
        probs = softmax(scores)
    elif zero_masked_rows or len(attn) != 1:
        probs = softmax(scores, mask=mask)
    else:
        probs = ops.softmax(ops.where(mask, scores, _LARGE_NEGATIVE), axis=-1)
    dropped = dropout(probs, training=training)
    out = batch_matmul(ops.reshape(dropped, lead + (T, S)), v)
    out = ops.reshape(out, lead + t_dims + (value.shape[-1],))
    return _permute(out, list(np.argsort(perm))), probs


def fused_attend(query, key, value, scale, attention_mask, dropout, training,
                 zero_masked_rows):
    """Attention over one axis on the fused kernel (`fkeras.ops.attention`), or None when the
    configuration needs `attend` instead.

    query (B, T, N, H), key (B, S, K, H) and value (B, S, K, Hv) with K dividing N (grouped
    heads need no repeat). The kernel gives a query with no visible key the average of the
    values (Keras's fused path); where Keras zeroes such rows (`zero_masked_rows`: its
    explicit path), the kernel is used only when every query row sees a key. Dropout runs in
    the kernel with the seed `dropout` (a Dropout layer) would draw, over the same
    (B, N, T, S) index, so the mask equals the composed path's.

    Returns:
        (B, T, N, Hv), or None.
    """
    if len(query.shape) != 4 or len(key.shape) != 4:
        return None
    mask = None
    if attention_mask is not None:
        mask = _devices.host_array(attention_mask).astype(bool, copy=False)
        while mask.ndim < 4:  # Keras: new axes before the query axis (the heads axis first)
            mask = np.expand_dims(mask, -3)
        if zero_masked_rows and not mask.any(axis=-1).all():
            return None
    rate, seed = 0.0, 0
    if training and dropout.rate > 0:
        from fkeras import random

        rate, seed = float(dropout.rate), random.draw_seed(dropout.seed_generator)
    from fkeras.ops.attention import fused_attention

    return fused_attention(query, key, value, mask=mask, scale=scale, dropout_rate=rate,
                           seed=seed)


def _permute(x, perm):
    return x if list(perm) == sorted(perm) else ops.transpose(x, tuple(int(p) for p in perm))
