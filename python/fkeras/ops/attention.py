"""fused_attention: scaled-dot-product attention on the device's fused kernel
(attention_forward / attention_backward, cpp/attention/), recorded on the tape as one op.

    out[b, i, h] = sum_j softmax_j(scale * q[b, i, h] . k[b, j, h'], visible) z[b, h, i, j] v[b, j, h']

q (B, Tq, H, D), k (B, Tk, Hkv, D), v (B, Tk, Hkv, Dv) in Keras's layout, h' = h // (H // Hkv).
Key j is visible from query i where `mask` (booleans broadcastable to (B, H, Tq, Tk)) is True
and, with `causal`, j <= i; a query with no visible key attends uniformly to every key (Keras's
large-negative fill). z is the dropout factor of `dropout_forward` for the flat index of
(b, h, i, j) in the (B, H, Tq, Tk) probabilities, so the mask is the one `Dropout` would draw
on the probabilities with the same seed. The kernel saves the log-sum-exp per query row; the
backward recomputes the probabilities from it (memory O(T), never (Tq, Tk) per head).
"""

import numpy as np

from fkeras.ops import shape_utils as su
from fkeras.ops.registry import REGISTRY, Op, apply


def _sizes(qs, ks, vs, where="fused_attention"):
    if len(qs) != 4 or len(ks) != 4 or len(vs) != 4:
        raise ValueError(f"`{where}` expects query, key and value of rank 4 (B, T, H, D), "
                         f"received shapes {tuple(qs)}, {tuple(ks)} and {tuple(vs)}.")
    B, Tq, H, D = qs
    _, Tk, Hkv, Dk = ks
    if Dk is not None and D is not None and Dk != D:
        raise ValueError(f"`{where}`: query and key must have the same last dimension, "
                         f"received shapes {tuple(qs)} and {tuple(ks)}.")
    if tuple(vs[:3]) != tuple(ks[:3]):
        raise ValueError(f"`{where}`: key and value must agree on (B, T, H), received shapes "
                         f"{tuple(ks)} and {tuple(vs)}.")
    if H is not None and Hkv is not None and (Hkv == 0 or H % Hkv):
        raise ValueError(f"`{where}`: the query heads ({H}) must be a multiple of the key/value "
                         f"heads ({Hkv}).")
    return B, Tq, Tk, H, Hkv, D, vs[3]


def broadcast_mask(mask, B, H, Tq, Tk, where="dot_product_attention"):
    """A contiguous boolean array (mb, mh, Tq, Tk), mb in (1, B), mh in (1, H), from a mask
    broadcastable to (B, H, Tq, Tk); None stays None."""
    if mask is None:
        return None
    m = np.asarray(mask).astype(bool, copy=False)
    if m.ndim > 4:
        raise ValueError(f"`{where}`: argument `mask` must have at most 4 dimensions "
                         f"(B, H, Tq, Tk), received shape {m.shape}.")
    m = m.reshape((1,) * (4 - m.ndim) + m.shape)
    lead = tuple(n if d != 1 else 1 for d, n in zip(m.shape[:2], (B, H)))
    try:
        return np.ascontiguousarray(np.broadcast_to(m, lead + (Tq, Tk)))
    except ValueError:
        raise ValueError(f"`{where}`: argument `mask` of shape {m.shape} does not broadcast to "
                         f"(B, H, Tq, Tk) = {(B, H, Tq, Tk)}.") from None


class FusedAttention(Op):
    name = "fused_attention"

    device_native = True

    def output_spec(self, q, k, v, mask=None, causal=False, scale=1.0, dropout_rate=0.0,
                    seed=0):
        B, Tq, _, H, _, _, Dv = _sizes(su.shape_of(q), su.shape_of(k), su.shape_of(v))
        return (B, Tq, H, Dv)

    def forward(self, dev, q, k, v, mask=None, causal=False, scale=1.0, dropout_rate=0.0,
                seed=0):
        B, Tq, Tk, H, Hkv, D, Dv = _sizes(q.shape, k.shape, v.shape)
        # A host boolean mask on every device (the CUDA binding uploads it as int32).
        m = broadcast_mask(None if mask is None else dev.to_numpy(mask), B, H, Tq, Tk)
        out, lse = dev.empty((B, Tq, H, Dv)), dev.empty((B, H, Tq))
        mb, mh = (1, 1) if m is None else m.shape[:2]
        dims = (B, Tq, Tk, H, Hkv, D, Dv, mb, mh, bool(causal), float(scale),
                float(dropout_rate), int(seed))
        dev.kernels["attention_forward"](out, lse, q, k, v, m, *dims)
        return out, (q, k, v, out, lse, m, dims)

    def backward(self, dev, saved, g, needs, **attrs):
        q, k, v, out, lse, m, dims = saved
        dq, dk, dv = dev.empty(q.shape), dev.empty(k.shape), dev.empty(v.shape)
        g = np.ascontiguousarray(g, dtype=dev.dtype) if dev.is_host else dev.asarray(g)
        dev.kernels["attention_backward"](dq, dk, dv, g, q, k, v, out, lse, m, *dims)
        return dq, dk, dv, None


def fused_attention(query, key, value, mask=None, causal=False, scale=None, dropout_rate=0.0,
                    seed=0):
    """Scaled-dot-product attention on the fused kernel.

    Args:
        query: (B, Tq, H, D). key: (B, Tk, Hkv, D), Hkv dividing H. value: (B, Tk, Hkv, Dv).
        mask: optional booleans broadcastable to (B, H, Tq, Tk), True where a query may attend.
        causal: query i sees keys j <= i only.
        scale: multiplies the logits; default 1 / sqrt(D).
        dropout_rate: dropout on the attention weights (0 disables it).
        seed: the int seed of the dropout mask (counter-based, as `dropout_forward`).

    Returns:
        (B, Tq, H, Dv).
    """
    if scale is None:
        scale = 1.0 / np.sqrt(su.shape_of(query)[-1])
    from fkeras.engine.keras_tensor import KerasTensor

    if mask is not None and not isinstance(mask, KerasTensor):
        mask = np.asarray(mask).astype(bool, copy=False)
    return apply(REGISTRY["fused_attention"], query, key, value, mask, causal=bool(causal),
                 scale=float(scale), dropout_rate=float(dropout_rate), seed=int(seed))
