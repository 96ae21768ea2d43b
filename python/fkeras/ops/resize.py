"""Integer-factor upsampling along spatial axes (UpSampling1D/2D/3D).

Nearest: every element repeated `factor` times along its axis (np.repeat); the gradient sums
each block of `factor` cotangents. Bilinear (2-D): Keras 3 resizes with half-pixel centres and
no corner alignment: output index i of an axis upsampled by f reads source coordinate
src = (i + 0.5) / f - 0.5, clamped to [0, size - 1], as the linear blend of floor(src) and
floor(src) + 1 (the edge index repeated at the border). Each axis is a (size * f, size) matrix,
so the resize is y = A_h x A_w^T per image and channel; the gradient applies the transposes.
"""

import numpy as np

from fkeras.ops import shape_utils as su
from fkeras.ops.registry import REGISTRY as _R
from fkeras.ops.registry import Op, apply


def _check(shape, axes, factors):
    if len(axes) != len(factors):
        raise ValueError(f"upsampling: one factor per axis, received axes={axes}, "
                         f"factors={factors}.")
    for a, f in zip(axes, factors):
        if not 0 <= a < len(shape) or f < 1:
            raise ValueError(f"upsampling: invalid axis {a} or factor {f} for an input of "
                             f"shape {tuple(shape)}.")


def _grown(shape, axes, factors):
    out = list(shape)
    for a, f in zip(axes, factors):
        out[a] = None if out[a] is None else out[a] * f
    return tuple(out)


class UpsampleNearest(Op):
    name = "upsample_nearest"

    def output_spec(self, x, axes=(), factors=()):
        shape = su.shape_of(x)
        _check(shape, axes, factors)
        return _grown(shape, axes, factors)

    def forward(self, dev, x, axes=(), factors=()):
        _check(x.shape, axes, factors)
        y = x
        for a, f in zip(axes, factors):
            y = np.repeat(y, f, axis=a)
        return np.ascontiguousarray(y), x.shape

    def backward(self, dev, shape, g, needs, axes=(), factors=()):
        for a, f in sorted(zip(axes, factors), reverse=True):
            g = g.reshape(g.shape[:a] + (g.shape[a] // f, f) + g.shape[a + 1:]).sum(axis=a + 1)
        return (np.ascontiguousarray(g),)


def linear_upsampling_matrix(size, factor, taps=False):
    """(size * factor, size): Keras 3's bilinear weights along one axis (half-pixel centres).
    taps=True also returns the (size * factor, size) mask of the two source pixels each output
    reads, a zero weight included (torch multiplies it: 0 * NaN is NaN there too)."""
    out = size * factor
    src = np.clip((np.arange(out) + 0.5) / factor - 0.5, 0.0, size - 1)
    lo = np.floor(src).astype(np.int64)
    hi = np.minimum(lo + 1, size - 1)
    frac = src - lo
    m = np.zeros((out, size))
    np.add.at(m, (np.arange(out), lo), 1.0 - frac)
    np.add.at(m, (np.arange(out), hi), frac)
    if not taps:
        return m
    read = np.zeros((out, size), bool)
    read[np.arange(out), lo] = read[np.arange(out), hi] = True
    return m, read


class UpsampleBilinear(Op):
    """x (N, H, W, C) -> (N, H * fh, W * fw, C), channels last."""

    name = "upsample_bilinear"

    def output_spec(self, x, factors=(2, 2)):
        shape = su.shape_of(x)
        _check(shape, (1, 2), factors)
        return _grown(shape, (1, 2), factors)

    def forward(self, dev, x, factors=(2, 2)):
        _check(x.shape, (1, 2), factors)
        ah, th = linear_upsampling_matrix(x.shape[1], factors[0], taps=True)
        aw, tw = linear_upsampling_matrix(x.shape[2], factors[1], taps=True)
        ah, aw = ah.astype(x.dtype), aw.astype(x.dtype)
        return _two_axis_product(x, ah, aw, (th, tw)), (ah, aw)

    def backward(self, dev, saved, g, needs, factors=(2, 2)):
        ah, aw = saved
        return (_two_axis_product(g, ah.T, aw.T),)


def _two_axis_product(x, ah, aw, taps=None):
    """y[n] = ah @ x[n] @ aw^T for each image and channel: x (N, H, W, C) -> (N, P, Q, C), as
    two batched matrix products over contiguous reshapes (BLAS-friendly). An input holding Inf
    or NaN takes the sparse form instead: a matrix product multiplies every zero weight too,
    and 0 * NaN would spread one bad pixel over whole output rows, where Keras's resamplers
    (and torch's) only read each output's few neighbours. `taps` (two boolean masks like ah and
    aw) names the pixels each output reads when that is more than its nonzero weights."""
    N, H, W, C = x.shape
    P, Q = ah.shape[0], aw.shape[0]
    if not np.isfinite(x).all():
        # Columns first, then rows: torch blends along the width first, and with Inf the
        # order decides where Inf - Inf makes a NaN.
        th, tw = taps if taps is not None else (ah != 0, aw != 0)
        return np.ascontiguousarray(_sparse_axis(_sparse_axis(x, aw, tw, 2), ah, th, 1),
                                    dtype=x.dtype)
    rows = np.matmul(ah, np.ascontiguousarray(x).reshape(N, H, W * C))  # (N, P, W * C)
    y = np.matmul(aw, rows.reshape(N * P, W, C))  # (N * P, Q, C)
    return np.ascontiguousarray(y.reshape(N, P, Q, C), dtype=x.dtype)


def _sparse_axis(x, a, read, axis):
    """`a` (P, H) applied along `axis` of x over the pixels `read` marks: output p is
    sum_k a[p, idx_k] * x[idx_k] over the k-th marked pixel of row p (rows with fewer marks
    add nothing for the missing k, without reading x)."""
    counts = read.sum(axis=1)
    most = int(counts.max()) if counts.size else 0
    shape = list(x.shape)
    shape[axis] = a.shape[0]
    out = np.zeros(shape, dtype=np.result_type(x.dtype, a.dtype))
    view = [1] * x.ndim
    view[axis] = a.shape[0]
    order = np.argsort(~read, axis=1, kind="stable")  # each row's marked columns first
    rows = np.arange(a.shape[0])
    for k in range(most):
        idx = order[:, k]
        has = (counts > k).reshape(view)
        wk = a[rows, idx].reshape(view)
        out += np.where(has, wk * np.take(x, idx, axis=axis), 0)
    return out


def upsample_nearest(x, axes, factors):
    """x with each element repeated factors[i] times along axes[i]."""
    return apply(_R["upsample_nearest"], x, axes=tuple(int(a) for a in axes),
                 factors=tuple(int(f) for f in factors))


def upsample_bilinear(x, factors):
    """Keras 3's bilinear UpSampling2D of a channels-last (N, H, W, C) tensor."""
    return apply(_R["upsample_bilinear"], x, factors=tuple(int(f) for f in factors))
