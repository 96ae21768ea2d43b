"""Neural-network ops composed from other ops (keras.ops names and signatures):
dot_product_attention, rms_normalization, depth_to_space, space_to_depth, psnr, cdist.
Their gradients are those of the ops they are built from."""

import numpy as np

from fkeras.ops import math as _m
from fkeras.ops import reshape_ops as _r
from fkeras.ops import shape_utils as su
from fkeras.ops.elementwise import _float_input


def dot_product_attention(query, key, value, bias=None, mask=None, scale=None, is_causal=False,
                          flash_attention=None, attn_logits_soft_cap=None):
    """Scaled dot-product attention (keras.ops.dot_product_attention).

    softmax(q k^T * scale + bias, masked) v over inputs of shape (B, T, N, H); `key`/`value`
    may have fewer heads than `query` (grouped). Without `bias` and `attn_logits_soft_cap` it
    runs on the fused attention kernel (`fkeras.ops.attention`: online softmax, memory O(T));
    otherwise it is composed from einsum, softmax and where, whose gradients are the parts'.

    Args:
        query: (B, T, N, H). key: (B, S, K, H), K dividing N. value: (B, S, K, H').
        bias: optional logits bias broadcastable to (B, N, T, S).
        mask: optional booleans broadcastable to (B, N, T, S), True where a query may attend.
            A query with no visible key attends uniformly to every key.
        scale: multiplies the logits; default 1 / sqrt(H).
        is_causal: query i attends to keys j <= i only.
        flash_attention: None (the fused kernel when the arguments allow it), True (the fused
            kernel; an error when `bias` or `attn_logits_soft_cap` is given) or False (the
            composed ops).
        attn_logits_soft_cap: optional float c: logits become c * tanh(logits / c).

    Returns:
        (B, T, N, H').
    """
    from fkeras.ops.arrangement import repeat_heads
    from fkeras.ops.contraction import einsum
    from fkeras.ops.creation import tri
    from fkeras.ops.nn import softmax

    fusable = bias is None and attn_logits_soft_cap is None
    if flash_attention and not fusable:
        arg = "bias" if bias is not None else "attn_logits_soft_cap"
        raise ValueError("`dot_product_attention`: flash_attention=True runs the fused kernel, "
                         f"which does not take `{arg}`; pass flash_attention=None or False. "
                         f"Received: {arg}={bias if bias is not None else attn_logits_soft_cap}")
    if fusable and flash_attention is not False and len(su.shape_of(query)) == 4:
        from fkeras.ops.attention import fused_attention

        return fused_attention(_float_input(query), _float_input(key), _float_input(value),
                               mask=mask, causal=is_causal, scale=scale)
    q, k, v = _float_input(query), _float_input(key), _float_input(value)
    heads, kv_heads = su.shape_of(q)[2], su.shape_of(k)[2]
    if heads != kv_heads:
        k, v = repeat_heads(k, heads // kv_heads), repeat_heads(v, heads // kv_heads)
    h = su.shape_of(q)[-1]
    scale = 1.0 / np.sqrt(h) if scale is None else float(scale)
    logits = _m.multiply(einsum("btnh,bsnh->bnts", q, k), scale)
    if attn_logits_soft_cap is not None:
        from fkeras.ops.nn import tanh

        cap = float(attn_logits_soft_cap)
        logits = _m.multiply(tanh(_m.divide(logits, cap)), cap)
    if bias is not None:
        logits = _m.add(logits, bias)
    big_negative = -3.4028234663852886e38 * 0.7
    if is_causal:
        t, s = su.shape_of(logits)[-2:]
        logits = _m.where(tri(t, s, dtype="bool"), logits, big_negative)
    if mask is not None:
        logits = _m.where(mask, logits, big_negative)
    probs = softmax(logits, axis=-1)
    return einsum("bnts,bsnh->btnh", probs, v)


def rms_normalization(x, scale=None, axis=-1, epsilon=None):
    """x / sqrt(mean(x^2, axis) + epsilon) * scale (keras.ops.rms_normalization).

    `scale` None leaves the normalized values unscaled."""
    from fkeras import config
    from fkeras.ops.elementwise import rsqrt

    x = _float_input(x)
    eps = config.epsilon() if epsilon is None else float(epsilon)
    ms = _m.mean(_m.square(x), axis=axis, keepdims=True)
    y = _m.multiply(x, rsqrt(_m.add(ms, eps)))
    return y if scale is None else _m.multiply(y, scale)


def depth_to_space(x, block_size, data_format="channels_last"):
    """Moves channel blocks into spatial blocks (keras.ops.depth_to_space)."""
    from fkeras.ops.reshape_ops import transpose

    b = int(block_size)
    if data_format == "channels_last":
        n, h, w, c = su.shape_of(x)
        y = _r.reshape(x, (-1, h, w, b, b, c // (b * b)))
        y = transpose(y, (0, 1, 3, 2, 4, 5))
        return _r.reshape(y, (-1, h * b, w * b, c // (b * b)))
    n, c, h, w = su.shape_of(x)
    y = _r.reshape(x, (-1, b, b, c // (b * b), h, w))
    y = transpose(y, (0, 3, 4, 1, 5, 2))
    return _r.reshape(y, (-1, c // (b * b), h * b, w * b))


def space_to_depth(x, block_size, data_format="channels_last"):
    """Moves spatial blocks into channels (keras.ops.space_to_depth)."""
    from fkeras.ops.reshape_ops import transpose

    b = int(block_size)
    if data_format == "channels_last":
        n, h, w, c = su.shape_of(x)
        y = _r.reshape(x, (-1, h // b, b, w // b, b, c))
        y = transpose(y, (0, 1, 3, 2, 4, 5))
        return _r.reshape(y, (-1, h // b, w // b, c * b * b))
    n, c, h, w = su.shape_of(x)
    y = _r.reshape(x, (-1, c, h // b, b, w // b, b))
    y = transpose(y, (0, 1, 3, 5, 2, 4))  # channel-major, as Keras
    return _r.reshape(y, (-1, c * b * b, h // b, w // b))


def psnr(x1, x2, max_val):
    """The peak signal-to-noise ratio between x1 and x2, in dB (keras.ops.psnr)."""
    from fkeras.ops.elementwise import log10

    mse = _m.mean(_m.square(_m.subtract(_float_input(x1), _float_input(x2))))
    return _m.subtract(20.0 * np.log10(float(max_val)), _m.multiply(log10(mse), 10.0))


def cdist(x, y):
    """Pairwise Euclidean distances between the rows of x (..., M, D) and y (..., N, D)
    (keras.ops.cdist)."""
    from fkeras.ops.reshape_ops import expand_dims

    diff = _m.subtract(expand_dims(_float_input(x), -2), expand_dims(_float_input(y), -3))
    return _m.sqrt(_m.sum(_m.square(diff), axis=-1))


def _adaptive_pool(inputs, output_size, data_format, reduce, name):
    import itertools

    from fkeras import config
    from fkeras.ops.arrangement import moveaxis, stack
    from fkeras.ops.reshape_ops import getitem, reshape

    x = _float_input(inputs)
    rank = len(su.shape_of(x))
    spatial = rank - 2
    if spatial not in (1, 2, 3):
        raise ValueError(f"`{name}` takes inputs of rank 3, 4 or 5; received shape "
                         f"{su.shape_of(x)}.")
    if config.data_format_or_default(data_format) == "channels_first":
        x = moveaxis(x, 1, -1)
    sizes = su.shape_of(x)[1:-1]
    out = (int(output_size),) * spatial if np.ndim(output_size) == 0 else \
        tuple(int(o) for o in output_size)
    # PyTorch's bins: [floor(i * n / o), ceil((i + 1) * n / o))
    bins = [[(i * n // o, -(-(i + 1) * n // o)) for i in range(o)] for n, o in zip(sizes, out)]
    cells = []
    for cell in itertools.product(*bins):
        region = getitem(x, (slice(None),) + tuple(slice(a, b) for a, b in cell))
        cells.append(reduce(region, axis=tuple(range(1, spatial + 1))))
    y = reshape(stack(cells, axis=1), (-1,) + out + (su.shape_of(x)[-1],))
    if config.data_format_or_default(data_format) == "channels_first":
        y = moveaxis(y, -1, 1)
    return y


def adaptive_average_pool(inputs, output_size, data_format=None):
    """Average pooling to a fixed `output_size` with PyTorch's bins
    (keras.ops.adaptive_average_pool)."""
    return _adaptive_pool(inputs, output_size, data_format, _m.mean, "adaptive_average_pool")


def adaptive_max_pool(inputs, output_size, data_format=None):
    """Max pooling to a fixed `output_size` with PyTorch's bins (keras.ops.adaptive_max_pool)."""
    return _adaptive_pool(inputs, output_size, data_format, _m.max, "adaptive_max_pool")
