"""Reference elementwise kernels and fused losses (float64 spec of cpp/elementwise/).

Every function has exactly the signature of its kernels.h declaration (outputs, saved state,
inputs, sizes, attributes) and overwrites its outputs in place. Activations come from
`activation_math`, the spec shared with the fused kernels. Dropout follows the counter-based
splitmix64 mask of kernels.h bit for bit, including its float32 `rate` and `scale`, so that
every device draws the same mask for the same seed.
"""

import numpy as np

from fkeras.backend import codes
from fkeras.backend.reference import activation_math


def _f64(a, *shape):
    return np.asarray(a, dtype=np.float64).reshape(shape)


# ---- activations ------------------------------------------------------------------------------

def activation_forward(y, x, n, activation, alpha):
    y.reshape(n)[...] = activation_math.forward(_f64(x, n), activation, alpha)


def activation_backward(dx, dy, x, y, n, activation, alpha):
    d = activation_math.derivative(_f64(x, n), _f64(y, n), activation, alpha)
    dx.reshape(n)[...] = _f64(dy, n) * d


# ---- softmax over the last axis of (rows, cols) -----------------------------------------------

def _log_softmax(x):
    shifted = x - np.max(x, axis=1, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))


def softmax_forward(y, x, rows, cols):
    if rows * cols:
        y.reshape(rows, cols)[...] = np.exp(_log_softmax(_f64(x, rows, cols)))


def softmax_backward(dx, dy, y, rows, cols):
    y64, dy64 = _f64(y, rows, cols), _f64(dy, rows, cols)
    dot = np.sum(dy64 * y64, axis=1, keepdims=True)
    dx.reshape(rows, cols)[...] = y64 * (dy64 - dot)


def log_softmax_forward(y, x, rows, cols):
    if rows * cols:
        y.reshape(rows, cols)[...] = _log_softmax(_f64(x, rows, cols))


def log_softmax_backward(dx, dy, y, rows, cols):
    dy64 = _f64(dy, rows, cols)
    total = np.sum(dy64, axis=1, keepdims=True)
    dx.reshape(rows, cols)[...] = dy64 - np.exp(_f64(y, rows, cols)) * total


# ---- bias, dropout, embedding -----------------------------------------------------------------

def bias_add_forward(y, x, b, rows, cols):
    y.reshape(rows, cols)[...] = _f64(x, rows, cols) + _f64(b, cols)


def bias_add_backward(db, dy, rows, cols):
    db.reshape(cols)[...] = _f64(dy, rows, cols).sum(axis=0)


_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


def splitmix64(z):
    """The splitmix64 finalizer of kernels.h on a uint64 array (wrapping arithmetic)."""
    z = np.asarray(z, dtype=np.uint64)
    with np.errstate(over="ignore"):
        z = z + _GOLDEN
        z = (z ^ (z >> np.uint64(30))) * _MIX1
        z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


def dropout_uniform(n, seed):
    """u (n) = (splitmix64(seed + i) >> 40) * 2^-24: exact in float64 (24-bit integers)."""
    counters = np.arange(n, dtype=np.uint64)
    with np.errstate(over="ignore"):
        z = splitmix64(counters + np.uint64(int(seed) & 0xFFFFFFFFFFFFFFFF))
    return (z >> np.uint64(40)).astype(np.float64) * 2.0**-24


def dropout_forward(y, mask, x, n, rate, seed):
    # The kernels take rate as float32, and form 1 / (1 - rate) in float32: do the same.
    rate32 = np.float32(rate)
    if not 0.0 <= rate32 <= 1.0:
        raise ValueError(f"dropout_forward: argument 'rate' must be in [0, 1], received {rate}")
    with np.errstate(divide="ignore"):
        scale = np.float32(1.0) / (np.float32(1.0) - rate32)  # inf for rate 1, never used then
    keep = dropout_uniform(n, seed) >= np.float64(rate32)
    m = np.where(keep, np.float64(scale), 0.0)
    mask.reshape(n)[...] = m
    y.reshape(n)[...] = _f64(x, n) * m


def dropout_backward(dx, dy, mask, n):
    dx.reshape(n)[...] = _f64(dy, n) * _f64(mask, n)


def _check_indices(indices, bound, kernel, arg):
    idx = np.asarray(indices, dtype=np.int64).reshape(-1)
    bad = np.flatnonzero((idx < 0) | (idx >= bound))
    if bad.size:
        i = int(bad[0])
        raise ValueError(
            f"{kernel}: argument '{arg}' holds index {int(idx[i])} at position {i}, "
            f"outside the valid range [0, {bound})"
        )
    return idx


def embedding_forward(y, indices, table, n, V, D):
    idx = _check_indices(indices, V, "embedding_forward", "indices")
    y.reshape(n, D)[...] = _f64(table, V, D)[idx]


def embedding_backward(dtable, dy, indices, n, V, D):
    idx = _check_indices(indices, V, "embedding_backward", "indices")
    out = np.zeros((V, D))
    np.add.at(out, idx, _f64(dy, n, D))
    dtable.reshape(V, D)[...] = out


# ---- fused losses from logits ----------------------------------------------------------------

def softmax_crossentropy_forward(loss, probs, logits, labels, rows, cols):
    if cols == 0:
        loss.reshape(rows)[...] = 0.0  # an empty sum
        return
    logp = _log_softmax(_f64(logits, rows, cols))
    probs.reshape(rows, cols)[...] = np.exp(logp)
    loss.reshape(rows)[...] = -np.sum(_f64(labels, rows, cols) * logp, axis=1)


def softmax_crossentropy_backward(dlogits, dloss, probs, labels, rows, cols):
    z = _f64(labels, rows, cols)
    p = _f64(probs, rows, cols)
    g = _f64(dloss, rows, 1)
    dlogits.reshape(rows, cols)[...] = g * (p * z.sum(axis=1, keepdims=True) - z)


def sparse_softmax_crossentropy_forward(loss, probs, logits, labels, rows, cols):
    idx = _check_indices(labels, cols, "sparse_softmax_crossentropy_forward", "labels")
    if rows == 0:
        return
    logp = _log_softmax(_f64(logits, rows, cols))
    probs.reshape(rows, cols)[...] = np.exp(logp)
    loss.reshape(rows)[...] = -logp[np.arange(rows), idx]


def sparse_softmax_crossentropy_backward(dlogits, dloss, probs, labels, rows, cols):
    idx = _check_indices(labels, cols, "sparse_softmax_crossentropy_backward", "labels")
    d = _f64(probs, rows, cols).copy()
    d[np.arange(rows), idx] -= 1.0
    dlogits.reshape(rows, cols)[...] = _f64(dloss, rows, 1) * d


def sigmoid_crossentropy_forward(loss, logits, labels, n):
    x, z = _f64(logits, n), _f64(labels, n)
    loss.reshape(n)[...] = np.maximum(x, 0.0) - x * z + np.log1p(np.exp(-np.abs(x)))


def sigmoid_crossentropy_backward(dlogits, dloss, logits, labels, n):
    s = activation_math.forward(_f64(logits, n), codes.SIGMOID)
    dlogits.reshape(n)[...] = _f64(dloss, n) * (s - _f64(labels, n))


KERNELS = {
    "activation_forward": activation_forward,
    "activation_backward": activation_backward,
    "softmax_forward": softmax_forward,
    "softmax_backward": softmax_backward,
    "log_softmax_forward": log_softmax_forward,
    "log_softmax_backward": log_softmax_backward,
    "bias_add_forward": bias_add_forward,
    "bias_add_backward": bias_add_backward,
    "dropout_forward": dropout_forward,
    "dropout_backward": dropout_backward,
    "embedding_forward": embedding_forward,
    "embedding_backward": embedding_backward,
    "softmax_crossentropy_forward": softmax_crossentropy_forward,
    "softmax_crossentropy_backward": softmax_crossentropy_backward,
    "sparse_softmax_crossentropy_forward": sparse_softmax_crossentropy_forward,
    "sparse_softmax_crossentropy_backward": sparse_softmax_crossentropy_backward,
    "sigmoid_crossentropy_forward": sigmoid_crossentropy_forward,
    "sigmoid_crossentropy_backward": sigmoid_crossentropy_backward,
}
