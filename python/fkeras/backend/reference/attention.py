"""Reference fused attention (float64 spec of cpp/attention/, kernels.h).

attention_forward / attention_backward have exactly the kernels' signatures and write their
outputs in place. The probabilities are formed in full, (N, heads, Tq, Tk), which is what the
C++ kernel avoids; here clarity wins. Dropout factors come from `dropout_uniform`, the same
counter-based draws as dropout_forward, over the flat (N, heads, Tq, Tk) index.
"""

import numpy as np

from fkeras.backend.reference.elementwise import dropout_uniform


def _f64(a, *shape):
    return np.asarray(a, dtype=np.float64).reshape(shape)


def _visible(mask, N, Tq, Tk, heads, mask_batch, mask_heads, causal):
    vis = np.ones((N, heads, Tq, Tk), bool)
    if mask is not None:
        vis &= np.asarray(mask, bool).reshape(mask_batch, mask_heads, Tq, Tk)
    if causal:
        vis &= np.tri(Tq, Tk, dtype=bool)
    return vis


def _check_heads(heads, kv_heads, kernel):
    if (heads != 0) if kv_heads == 0 else (heads % kv_heads != 0):
        raise ValueError(f"{kernel}: argument 'heads' ({heads}) must be a multiple of "
                         f"'kv_heads' ({kv_heads})")


def _dropout_factors(N, heads, Tq, Tk, rate, seed):
    rate32 = np.float32(rate)
    if not 0.0 <= rate32 <= 1.0:
        raise ValueError(f"attention: argument 'dropout_rate' must be in [0, 1], received {rate}")
    if rate32 == 0:
        return np.ones((N, heads, Tq, Tk))
    with np.errstate(divide="ignore"):
        scale = np.float32(1.0) / (np.float32(1.0) - rate32)
    keep = dropout_uniform(N * heads * Tq * Tk, seed) >= np.float64(rate32)
    return np.where(keep, np.float64(scale), 0.0).reshape(N, heads, Tq, Tk)


def _probabilities(q, k, vis, heads, kv_heads, scale):
    """p (N, heads, Tq, Tk) and lse (N, heads, Tq); q (N, Tq, heads, D), k (N, Tk, kv, D)."""
    group = heads // kv_heads
    kh = np.repeat(k, group, axis=2)
    s = np.einsum("nthd,nshd->nhts", q, kh) * np.float64(np.float32(scale))
    s = np.where(vis, s, -np.inf)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        m = np.max(s, axis=-1, keepdims=True) if s.shape[-1] else np.full(s.shape[:-1] + (1,),
                                                                           -np.inf)
        e = np.where(vis, np.exp(s - m), 0.0)
        total = e.sum(axis=-1, keepdims=True)
        p = e / total
        lse = (m + np.log(total))[..., 0]
    empty = ~vis.any(axis=-1)               # no visible key: uniform over all Tk keys
    p = np.where(empty[..., None], 1.0 / max(s.shape[-1], 1), p)
    lse = np.where(empty, -np.inf, lse)
    return p, lse, empty


def attention_forward(out, lse, q, k, v, mask, N, Tq, Tk, heads, kv_heads, D, Dv, mask_batch,
                      mask_heads, causal, scale, dropout_rate, seed):
    _check_heads(heads, kv_heads, "attention_forward")
    z = _dropout_factors(N, heads, Tq, Tk, dropout_rate, seed)
    if N * heads * Tq == 0:
        return
    q64, k64 = _f64(q, N, Tq, heads, D), _f64(k, N, Tk, kv_heads, D)
    v64 = np.repeat(_f64(v, N, Tk, kv_heads, Dv), heads // kv_heads, axis=2)
    vis = _visible(mask, N, Tq, Tk, heads, mask_batch, mask_heads, causal)
    p, l, _ = _probabilities(q64, k64, vis, heads, kv_heads, scale)
    out.reshape(N, Tq, heads, Dv)[...] = np.einsum("nhts,nshd->nthd", p * z, v64)
    lse.reshape(N, heads, Tq)[...] = l


def attention_backward(dq, dk, dv, dout, q, k, v, out, lse, mask, N, Tq, Tk, heads, kv_heads,
                       D, Dv, mask_batch, mask_heads, causal, scale, dropout_rate, seed):
    _check_heads(heads, kv_heads, "attention_backward")
    z = _dropout_factors(N, heads, Tq, Tk, dropout_rate, seed)
    if kv_heads == 0:
        return  # no heads: every output is empty
    group = heads // kv_heads
    q64, k64 = _f64(q, N, Tq, heads, D), _f64(k, N, Tk, kv_heads, D)
    v64 = np.repeat(_f64(v, N, Tk, kv_heads, Dv), group, axis=2)
    g = _f64(dout, N, Tq, heads, Dv)
    vis = _visible(mask, N, Tq, Tk, heads, mask_batch, mask_heads, causal)
    p, _, empty = _probabilities(q64, k64, vis, heads, kv_heads, scale)
    pz = p * z
    dvh = np.einsum("nhts,nthd->nshd", pz, g)                     # (N, Tk, heads, Dv)
    dp = np.einsum("nthd,nshd->nhts", g, v64) * z
    ds = p * (dp - np.sum(p * dp, axis=-1, keepdims=True))
    ds = np.where(vis & ~empty[..., None], ds, 0.0) * np.float64(np.float32(scale))
    kh = np.repeat(k64, group, axis=2)
    dq.reshape(N, Tq, heads, D)[...] = np.einsum("nhts,nshd->nthd", ds, kh)
    dkh = np.einsum("nhts,nthd->nshd", ds, q64)
    dk.reshape(N, Tk, kv_heads, D)[...] = dkh.reshape(N, Tk, kv_heads, group, D).sum(axis=3)
    dv.reshape(N, Tk, kv_heads, Dv)[...] = dvh.reshape(N, Tk, kv_heads, group, Dv).sum(axis=3)


KERNELS = {
    "attention_forward": attention_forward,
    "attention_backward": attention_backward,
}
