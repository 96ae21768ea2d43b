"""Statistics and NaN-aware reductions (keras.ops names and signatures): average, median,
quantile, percentile, ptp, nansum, nanmean, nanmax, nanmin, nanprod, nanvar, nanstd,
nanargmax, nanargmin, histogram, bincount, corrcoef.

Differentiable ones are built from existing ops (sort, take, where, reductions), so their
gradients are the composed ones: a quantile's gradient goes to the (interpolated) order
statistics; a NaN-aware reduction's gradient is zero at the NaNs.
"""

import numpy as np

from fkeras.engine.keras_tensor import KerasTensor
from fkeras.ops import math as _m
from fkeras.ops import shape_utils as su
from fkeras.ops.elementwise import _float_input


def average(x, axis=None, weights=None):
    """The (weighted) mean of `x` along `axis` (keras.ops.average)."""
    x = _float_input(x)
    if weights is None:
        return _m.mean(x, axis=axis)
    weights = _float_input(weights)
    if axis is not None and len(su.shape_of(weights)) == 1 and len(su.shape_of(x)) > 1:
        shape = [1] * len(su.shape_of(x))
        shape[axis] = -1
        from fkeras.ops.reshape_ops import reshape

        weights = reshape(weights, shape)
    return _m.divide(_m.sum(_m.multiply(x, weights), axis=axis),
                     _m.sum(_m.multiply(_m.add(_m.multiply(x, 0.0), 1.0), weights), axis=axis))


def quantile(x, q, axis=None, method="linear", keepdims=False):
    """The `q`-th quantile(s) of `x` along `axis` (NumPy's methods "linear", "lower",
    "higher", "midpoint", "nearest") (keras.ops.quantile)."""
    return _quantile(x, q, axis, method, keepdims, "quantile", ignore_nan=False)


def _quantile(x, q, axis, method, keepdims, name, ignore_nan):
    """quantile, or (ignore_nan) NumPy's nanquantile: the order statistics of each slice's
    non-NaN values (the sort puts NaNs last, so a slice of n valid values reads its first n;
    an all-NaN slice reads its first, NaN), gathered per slice with take_along_axis, so the
    gradient reaches them as quantile's does."""
    from fkeras.ops.arrangement import moveaxis, ravel, take, take_along_axis
    from fkeras.ops.indexing import sort

    x = _float_input(x)
    if isinstance(x, KerasTensor):
        raise ValueError(f"`{name}` needs eager tensors in fkeras.")
    q_arr = np.asarray(getattr(q, "_value", q), np.float64)
    if np.any((q_arr < 0) | (q_arr > 1)):
        raise ValueError(f"Quantiles must be in the range [0, 1]; received q={q!r}.")
    shape = su.shape_of(x)
    if axis is None:
        data, ax = ravel(x), 0
    else:
        axes = (axis,) if isinstance(axis, int) else tuple(axis)
        if len(axes) != 1:
            raise ValueError("fkeras's `quantile` reduces over one axis or all of them.")
        data, ax = x, axes[0] % len(shape)
    s = sort(moveaxis(data, ax, -1), axis=-1)
    n = su.shape_of(s)[-1]
    if ignore_nan:  # per slice: (batch..., quantiles) positions among its valid values
        from fkeras.backend.devices import host_array

        valid = np.sum(~np.isnan(host_array(s)), axis=-1)
        pos = np.maximum(valid[..., None] - 1, 0) * q_arr.ravel()
    else:
        pos = q_arr * (n - 1)
    lo, hi = np.floor(pos).astype(np.int64), np.ceil(pos).astype(np.int64)
    if method == "lower":
        hi = lo
    elif method == "higher":
        lo = hi
    elif method == "nearest":
        lo = hi = np.round(pos).astype(np.int64)
    elif method not in ("linear", "midpoint"):
        raise ValueError(f"Invalid `method` for {name}: {method!r}.")
    frac = 0.5 if method == "midpoint" else (pos - lo)
    if ignore_nan:
        a, b = take_along_axis(s, lo, axis=-1), take_along_axis(s, hi, axis=-1)
        frac = np.asarray(frac, np.float32)
    else:
        a, b = take(s, lo.ravel(), axis=-1), take(s, hi.ravel(), axis=-1)
        frac = np.asarray(frac, np.float32).ravel()
    out = _m.add(a, _m.multiply(_m.subtract(b, a), frac))
    out = moveaxis(out, -1, 0)  # quantiles first, as NumPy
    from fkeras.ops.reshape_ops import expand_dims, reshape, squeeze

    if q_arr.ndim == 0:
        out = squeeze(out, axis=0)
    else:
        out = reshape(out, q_arr.shape + tuple(su.shape_of(out)[1:]))
    if keepdims:
        lead = q_arr.ndim
        if axis is None:
            out = reshape(out, q_arr.shape + (1,) * len(shape))
        else:
            out = expand_dims(out, lead + ax)
    return out


def percentile(x, q, axis=None, method="linear", keepdims=False):
    """The `q`-th percentile(s) (0..100) of `x` along `axis` (keras.ops.percentile)."""
    q_arr = np.asarray(getattr(q, "_value", q), np.float64) / 100.0
    return quantile(x, q_arr, axis=axis, method=method, keepdims=keepdims)


def median(x, axis=None, keepdims=False):
    """The median of `x` along `axis` (keras.ops.median)."""
    return quantile(x, 0.5, axis=axis, keepdims=keepdims)


def ptp(x, axis=None, keepdims=False):
    """max - min along `axis` (keras.ops.ptp)."""
    return _m.subtract(_m.max(x, axis=axis, keepdims=keepdims),
                       _m.min(x, axis=axis, keepdims=keepdims))


def _nan_mask(x):
    from fkeras.ops.comparison import isnan

    return isnan(x)


def nansum(x, axis=None, keepdims=False):
    """sum with NaNs counted as zero (keras.ops.nansum)."""
    x = _float_input(x)
    return _m.sum(_m.where(_nan_mask(x), 0.0, x), axis=axis, keepdims=keepdims)


def nanmean(x, axis=None, keepdims=False):
    """mean over the non-NaN elements (keras.ops.nanmean)."""
    from fkeras.ops.comparison import logical_not
    from fkeras.ops.dtypes import cast

    x = _float_input(x)
    count = _m.sum(cast(logical_not(_nan_mask(x)), "float32"), axis=axis, keepdims=keepdims)
    return _m.divide(nansum(x, axis=axis, keepdims=keepdims), count)


def nanmax(x, axis=None, keepdims=False):
    """max ignoring NaNs (keras.ops.nanmax)."""
    x = _float_input(x)
    return _m.max(_m.where(_nan_mask(x), -np.inf, x), axis=axis, keepdims=keepdims)


def nanmin(x, axis=None, keepdims=False):
    """min ignoring NaNs (keras.ops.nanmin)."""
    x = _float_input(x)
    return _m.min(_m.where(_nan_mask(x), np.inf, x), axis=axis, keepdims=keepdims)


def nanprod(x, axis=None, keepdims=False):
    """product with NaNs counted as one (keras.ops.nanprod)."""
    from fkeras.ops.reductions import prod

    x = _float_input(x)
    return prod(_m.where(_nan_mask(x), 1.0, x), axis=axis, keepdims=keepdims)


def nanvar(x, axis=None, keepdims=False):
    """variance over the non-NaN elements (keras.ops.nanvar)."""
    x = _float_input(x)
    mean = nanmean(x, axis=axis, keepdims=True)
    dev = _m.where(_nan_mask(x), 0.0, _m.subtract(x, mean))
    return nanmean(_m.where(_nan_mask(x), np.nan, _m.square(dev)), axis=axis, keepdims=keepdims)


def nanstd(x, axis=None, keepdims=False):
    """standard deviation over the non-NaN elements (keras.ops.nanstd)."""
    return _m.sqrt(nanvar(x, axis=axis, keepdims=keepdims))


def nanargmax(x, axis=None, keepdims=False):
    """argmax ignoring NaNs (keras.ops.nanargmax); int32."""
    from fkeras.ops.reductions import argmax

    x = _float_input(x)
    return argmax(_m.where(_nan_mask(x), -np.inf, x), axis=axis, keepdims=keepdims)


def nanargmin(x, axis=None, keepdims=False):
    """argmin ignoring NaNs (keras.ops.nanargmin); int32."""
    from fkeras.ops.reductions import argmin

    x = _float_input(x)
    return argmin(_m.where(_nan_mask(x), np.inf, x), axis=axis, keepdims=keepdims)


def _eager_numpy(x, name):
    if isinstance(x, KerasTensor):
        raise ValueError(f"`{name}` has a data-dependent output: it needs an eager tensor.")
    return np.asarray(getattr(x, "_value", x))


def bincount(x, weights=None, minlength=0, sparse=False):
    """Counts (or sums of `weights`) of each non-negative integer in `x`, along the last axis
    for 2-D inputs (keras.ops.bincount); not differentiable."""
    from fkeras.ops.core import convert_to_tensor

    arr = _eager_numpy(x, "bincount").astype(np.int64)
    w = None if weights is None else _eager_numpy(weights, "bincount")
    size = max(int(minlength), int(arr.max()) + 1 if arr.size else 0)
    if arr.ndim == 1:
        out = np.bincount(arr, w, minlength=size)
    else:
        out = np.stack([np.bincount(r, None if w is None else wr, minlength=size)
                        for r, wr in zip(arr, w if w is not None else [None] * len(arr))])
    dtype = np.int32 if w is None else (np.float32 if w.dtype.kind == "f" else w.dtype)
    return convert_to_tensor(out.astype(dtype))


def histogram(x, bins=10, range=None):  # noqa: A002
    """(counts, bin edges) of the values of `x` (keras.ops.histogram); not differentiable."""
    from fkeras.ops.core import convert_to_tensor

    counts, edges = np.histogram(_eager_numpy(x, "histogram"), bins=bins, range=range)
    return convert_to_tensor(counts.astype(np.int32)), convert_to_tensor(edges.astype(np.float32))


def corrcoef(x):
    """Pearson correlation coefficients of the rows of `x` (keras.ops.corrcoef)."""
    from fkeras.ops.contraction import einsum
    from fkeras.ops.reshape_ops import expand_dims

    x = _float_input(x)
    centered = _m.subtract(x, _m.mean(x, axis=-1, keepdims=True))
    cov = einsum("ik,jk->ij", centered, centered)
    d = _m.sqrt(_m.sum(_m.square(centered), axis=-1))
    return _m.divide(cov, _m.multiply(expand_dims(d, 1), expand_dims(d, 0)))


def nanmedian(x, axis=None, keepdims=False):
    """The median of `x` along `axis` ignoring NaNs (keras.ops.nanmedian); differentiable as
    `median` (the gradient reaches the middle valid values)."""
    return _quantile(x, 0.5, axis, "linear", keepdims, "nanmedian", ignore_nan=True)


def nanquantile(x, q, axis=None, method="linear", keepdims=False):
    """The `q`-th quantiles (q in [0, 1]) of `x` along `axis` ignoring NaNs
    (keras.ops.nanquantile); `method` as NumPy's; differentiable as `quantile`."""
    return _quantile(x, q, axis, method, keepdims, "nanquantile", ignore_nan=True)


def nanpercentile(x, q, axis=None, method="linear", keepdims=False):
    """The `q`-th percentiles (q in [0, 100]) of `x` along `axis` ignoring NaNs
    (keras.ops.nanpercentile); `method` as NumPy's; differentiable as `percentile`."""
    q_arr = np.asarray(getattr(q, "_value", q), np.float64) / 100.0
    return _quantile(x, q_arr, axis, method, keepdims, "nanpercentile", ignore_nan=True)
