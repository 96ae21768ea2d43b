"""Reductions and scans beyond sum/mean/max/min (keras.ops names and signatures): prod, var,
std, logsumexp, cumsum, cumprod, any, all, argmax, argmin, count_nonzero, amax, amin.

`any`, `all`, `argmax`, `argmin` and `count_nonzero` return integer or bool tensors and pass no
gradient (`differentiable = False`).
"""

import numpy as np

from fkeras.ops import shape_utils as su
from fkeras.ops.elementwise import _float_input
from fkeras.ops.math import _Reduce
from fkeras.ops.math import max as _max
from fkeras.ops.math import min as _min
from fkeras.ops.registry import REGISTRY as _R
from fkeras.ops.registry import Op, apply


def _axes(axis, ndim):
    return su.normalize_axes(axis, ndim)


def _expand(g, shape, axis, keepdims):
    """`g` (a reduction's cotangent) with the reduced axes put back as size 1."""
    return g.reshape(su.reduced_shape(shape, _axes(axis, len(shape)), True))


class Prod(_Reduce):
    name = "prod"

    def forward(self, dev, x, axis=None, keepdims=False):
        return np.asarray(np.prod(x, axis=axis, keepdims=keepdims), dtype=x.dtype), x

    def backward(self, dev, x, g, needs, axis=None, keepdims=False):
        # d prod / dx_i = product of the others; computed by exclusive cumulative products so
        # that zeros in x give exact values (no division by x).
        axes = _axes(axis, x.ndim)
        g = _expand(g, x.shape, axis, keepdims)
        moved = np.moveaxis(x, axes, tuple(range(x.ndim - len(axes), x.ndim)))
        flat = moved.reshape(moved.shape[:x.ndim - len(axes)] + (-1,))
        ones = np.ones(flat.shape[:-1] + (1,), flat.dtype)
        left = np.cumprod(np.concatenate([ones, flat[..., :-1]], -1), -1)
        right = np.cumprod(np.concatenate([ones, flat[..., :0:-1]], -1), -1)[..., ::-1]
        others = (left * right).reshape(moved.shape)
        others = np.moveaxis(others, tuple(range(x.ndim - len(axes), x.ndim)), axes)
        return ((g * others).astype(x.dtype, copy=False),)


class Var(_Reduce):
    name = "var"

    def forward(self, dev, x, axis=None, keepdims=False):
        mean = np.mean(x, axis=axis, keepdims=True)
        y = np.asarray(np.mean(np.square(x - mean), axis=axis, keepdims=keepdims), x.dtype)
        return y, (x, mean)

    def backward(self, dev, saved, g, needs, axis=None, keepdims=False):
        x, mean = saved
        count = x.size // max(mean.size, 1) if x.size else 1
        g = _expand(g, x.shape, axis, keepdims)
        return ((2.0 / count) * g * (x - mean),)


class LogSumExp(_Reduce):
    name = "logsumexp"

    def forward(self, dev, x, axis=None, keepdims=False):
        m = np.max(x, axis=axis, keepdims=True) if x.size else np.zeros((), x.dtype)
        m = np.where(np.isfinite(m), m, 0.0)
        with np.errstate(divide="ignore"):  # an all -inf slice gives -inf, as Keras
            y_keep = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
        y = y_keep if keepdims else y_keep.reshape(
            su.reduced_shape(x.shape, _axes(axis, x.ndim), False))
        return np.asarray(y, x.dtype), (x, y_keep)

    def backward(self, dev, saved, g, needs, axis=None, keepdims=False):
        x, y = saved
        # A slice that is all -inf (a fully masked row) has sum 0 and gets zero gradient,
        # where exp(-inf - (-inf)) would give NaN.
        with np.errstate(invalid="ignore"):
            w = np.exp(x - y)
        if not np.isfinite(y).all():
            w = np.where(np.isneginf(y), 0.0, w).astype(x.dtype, copy=False)
        return (_expand(g, x.shape, axis, keepdims) * w,)


class _Scan(Op):
    fn = None

    def output_spec(self, x, axis=None):
        shape = su.shape_of(x)
        if axis is None:
            return (None if None in shape else int(np.prod(shape)),)
        su.normalize_axis(axis, len(shape), self.name)
        return shape


class CumSum(_Scan):
    name = "cumsum"

    def forward(self, dev, x, axis=None):
        return np.cumsum(x, axis=axis, dtype=x.dtype), x.shape

    def backward(self, dev, shape, g, needs, axis=None):
        ax = 0 if axis is None else axis
        r = np.flip(np.cumsum(np.flip(g, ax), axis=ax), ax)
        return (np.ascontiguousarray(r).reshape(shape),)


class CumProd(_Scan):
    name = "cumprod"

    def forward(self, dev, x, axis=None):
        y = np.cumprod(x, axis=axis, dtype=x.dtype)
        return y, (x, y)

    def backward(self, dev, saved, g, needs, axis=None):
        x, y = saved
        ax = 0 if axis is None else axis
        flat = x.reshape(-1) if axis is None else x
        # dy_j/dx_i = prod_{k <= j, k != i} x_k: a masked product per i (exact with zeros).
        n = flat.shape[ax]
        xm = np.moveaxis(flat, ax, -1)
        gm = np.moveaxis(g, ax, -1)
        out = np.zeros_like(xm)
        for i in range(n):
            others = xm.copy()
            others[..., i] = 1.0
            partial = np.cumprod(others, axis=-1)
            out[..., i] = np.sum(gm[..., i:] * partial[..., i:], axis=-1)
        return (np.ascontiguousarray(np.moveaxis(out, -1, ax)).reshape(x.shape),)


class _IndexReduce(Op):
    differentiable = False
    fn = None

    def output_spec(self, x, axis=None, keepdims=False):
        from fkeras.engine.keras_tensor import KerasTensor

        shape = su.shape_of(x)
        out = su.reduced_shape(shape, _axes(axis, len(shape)), keepdims)
        return KerasTensor(out, self.out_dtype)

    def forward(self, dev, x, axis=None, keepdims=False):
        return np.asarray(type(self).fn(x, axis=axis, keepdims=keepdims)), None


class ArgMax(_IndexReduce):
    name = "argmax"
    out_dtype = "int32"
    fn = staticmethod(lambda x, axis, keepdims: np.argmax(x, axis=axis, keepdims=keepdims)
                      .astype(np.int32))


class ArgMin(_IndexReduce):
    name = "argmin"
    out_dtype = "int32"
    fn = staticmethod(lambda x, axis, keepdims: np.argmin(x, axis=axis, keepdims=keepdims)
                      .astype(np.int32))


class Any(_IndexReduce):
    name = "any"
    out_dtype = "bool"
    fn = staticmethod(lambda x, axis, keepdims: np.any(x, axis=axis, keepdims=keepdims))


class All(_IndexReduce):
    name = "all"
    out_dtype = "bool"
    fn = staticmethod(lambda x, axis, keepdims: np.all(x, axis=axis, keepdims=keepdims))


class CountNonzero(_IndexReduce):
    name = "count_nonzero"
    out_dtype = "int32"
    fn = staticmethod(lambda x, axis, keepdims: np.asarray(
        np.count_nonzero(x, axis=axis, keepdims=keepdims), np.int32))


def _axis_attr(axis):
    return tuple(axis) if isinstance(axis, list) else axis


def prod(x, axis=None, keepdims=False, dtype=None):
    """Product of elements over `axis` (keras.ops.prod)."""
    from fkeras.ops.dtypes import cast

    if dtype is not None:
        x = cast(x, dtype)
    return apply(_R["prod"], x, axis=_axis_attr(axis), keepdims=keepdims)


def var(x, axis=None, keepdims=False):
    """Population variance over `axis` (keras.ops.var)."""
    return apply(_R["var"], _float_input(x), axis=_axis_attr(axis), keepdims=keepdims)


def std(x, axis=None, keepdims=False):
    """Population standard deviation over `axis` (keras.ops.std)."""
    from fkeras.ops.math import sqrt

    return sqrt(var(x, axis=axis, keepdims=keepdims))


def logsumexp(x, axis=None, keepdims=False):
    """log(sum(exp(x))) over `axis`, computed stably (keras.ops.logsumexp)."""
    return apply(_R["logsumexp"], _float_input(x), axis=_axis_attr(axis), keepdims=keepdims)


def cumsum(x, axis=None, dtype=None):
    """Cumulative sum along `axis` (of the flattened x when None) (keras.ops.cumsum)."""
    from fkeras.ops.dtypes import cast

    if dtype is not None:
        x = cast(x, dtype)
    return apply(_R["cumsum"], x, axis=axis)


def cumprod(x, axis=None, dtype=None):
    """Cumulative product along `axis` (of the flattened x when None) (keras.ops.cumprod)."""
    from fkeras.ops.dtypes import cast

    if dtype is not None:
        x = cast(x, dtype)
    return apply(_R["cumprod"], x, axis=axis)


def argmax(x, axis=None, keepdims=False):
    """Index of the largest value along `axis` (flattened when None), int32 (keras.ops.argmax)."""
    return apply(_R["argmax"], x, axis=axis, keepdims=keepdims)


def argmin(x, axis=None, keepdims=False):
    """Index of the smallest value along `axis` (flattened when None), int32 (keras.ops.argmin)."""
    return apply(_R["argmin"], x, axis=axis, keepdims=keepdims)


def any(x, axis=None, keepdims=False):  # noqa: A001
    """True where any element along `axis` is nonzero (keras.ops.any)."""
    return apply(_R["any"], x, axis=_axis_attr(axis), keepdims=keepdims)


def all(x, axis=None, keepdims=False):  # noqa: A001
    """True where every element along `axis` is nonzero (keras.ops.all)."""
    return apply(_R["all"], x, axis=_axis_attr(axis), keepdims=keepdims)


def count_nonzero(x, axis=None):
    """Number of nonzero elements along `axis` (keras.ops.count_nonzero), int32."""
    return apply(_R["count_nonzero"], x, axis=_axis_attr(axis), keepdims=False)


def amax(x, axis=None, keepdims=False):
    """keras.ops.amax: the same as `max`."""
    return _max(x, axis=_axis_attr(axis), keepdims=keepdims)


def amin(x, axis=None, keepdims=False):
    """keras.ops.amin: the same as `min`."""
    return _min(x, axis=_axis_attr(axis), keepdims=keepdims)


def diff(a, n=1, axis=-1):
    """The n-th discrete difference along `axis` (keras.ops.diff); differentiable."""
    from fkeras.ops.math import subtract
    from fkeras.ops.reshape_ops import getitem

    rank = len(su.shape_of(a))
    lead = (slice(None),) * (axis % rank)
    for _ in range(int(n)):
        a = subtract(getitem(a, lead + (slice(1, None),)), getitem(a, lead + (slice(None, -1),)))
    return a


def nancumsum(x, axis=None, dtype=None):
    """cumsum with NaNs counted as zero (keras.ops.nancumsum)."""
    from fkeras.ops.comparison import isnan
    from fkeras.ops.math import where

    x = _float_input(x)
    return cumsum(where(isnan(x), 0.0, x), axis=axis, dtype=dtype)


def nancumprod(x, axis=None, dtype=None):
    """cumprod with NaNs counted as one (keras.ops.nancumprod)."""
    from fkeras.ops.comparison import isnan
    from fkeras.ops.math import where

    x = _float_input(x)
    return cumprod(where(isnan(x), 1.0, x), axis=axis, dtype=dtype)
