"""Tensor creation (keras.ops names and signatures): zeros, ones, full, empty and their `_like`
forms, arange, linspace, logspace, eye, identity, tri.

These build new values from Python arguments, so they are plain functions (no op, nothing to
differentiate): they return Tensors to user code and buffers in array mode, like every op.
The `_like` forms of a KerasTensor give a KerasTensor of the same shape. A floating dtype
defaults to floatx (float32); `arange` of integers gives int32, as Keras 3 does.
"""

import numpy as np

from fkeras.backend import devices as _device
from fkeras.engine.keras_tensor import KerasTensor
from fkeras.engine.tensor import Tensor, in_array_mode
from fkeras.ops.dtypes import standardize_dtype
from fkeras.ops.registry import in_symbolic_call


def _np_dtype(dtype, default="float32"):
    name = standardize_dtype(dtype) if dtype is not None else default
    if name == "float32":
        return np.dtype(_device.get_device().dtype)
    return np.dtype(name)


def _out(arr):
    arr = np.ascontiguousarray(arr)
    return arr if in_array_mode() else Tensor(arr)


def _shape(shape):
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(int(d) for d in shape)


def zeros(shape, dtype=None):
    """A tensor of zeros of `shape` (keras.ops.zeros)."""
    return _out(np.zeros(_shape(shape), _np_dtype(dtype)))


def ones(shape, dtype=None):
    """A tensor of ones of `shape` (keras.ops.ones)."""
    return _out(np.ones(_shape(shape), _np_dtype(dtype)))


def empty(shape, dtype=None):
    """A tensor of `shape` (keras.ops.empty); fkeras fills it with zeros."""
    return zeros(shape, dtype)


def full(shape, fill_value, dtype=None):
    """A tensor of `shape` filled with `fill_value`, floatx unless `dtype` is given."""
    if _traced(fill_value):
        return _broadcast_fill(fill_value, _shape(shape), _np_dtype(dtype))
    value = np.asarray(getattr(fill_value, "_value", fill_value))
    return _out(np.broadcast_to(value, _shape(shape)).astype(_np_dtype(dtype)))


def _traced(value):
    """Whether a fill value is a fkeras Tensor or Variable (a tape may hold it): then the fill
    is built from differentiable ops, so its gradient reaches the value as in Keras."""
    return hasattr(value, "_value") and not isinstance(value, (np.ndarray, KerasTensor))


def _broadcast_fill(value, shape, dtype):
    from fkeras.ops.arrangement import broadcast_to
    from fkeras.ops.dtypes import cast

    return broadcast_to(cast(value, np.dtype(dtype).name), shape)


def _like(x, dtype, value):
    if isinstance(x, KerasTensor):
        return KerasTensor(x.shape, standardize_dtype(dtype) if dtype else x.dtype)
    arr = np.asarray(getattr(x, "_value", x))
    dt = _np_dtype(dtype) if dtype is not None else arr.dtype
    if dtype is None and arr.dtype.kind == "f":
        dt = arr.dtype if arr.dtype == np.float16 else _np_dtype(None)
    if _traced(value):
        return _broadcast_fill(value, arr.shape, dt)
    return _out(np.full(arr.shape, value, dt))


def zeros_like(x, dtype=None):
    """Zeros with the shape (and dtype, unless given) of `x` (keras.ops.zeros_like)."""
    return _like(x, dtype, 0)


def ones_like(x, dtype=None):
    """Ones with the shape (and dtype, unless given) of `x` (keras.ops.ones_like)."""
    return _like(x, dtype, 1)


def empty_like(x, dtype=None):
    """keras.ops.empty_like: zero-filled in fkeras."""
    return _like(x, dtype, 0)


def full_like(x, fill_value, dtype=None):
    """`fill_value` with the shape (and dtype, unless given) of `x` (keras.ops.full_like)."""
    return _like(x, dtype, fill_value if _traced(fill_value) else np.asarray(
        getattr(fill_value, "_value", fill_value)))


def arange(start, stop=None, step=None, dtype=None):
    """Evenly spaced values in [start, stop) (keras.ops.arange); int32 for integer arguments,
    float32 otherwise, unless `dtype` is given.

    Inside a layer's symbolic call, `arange(0, None)` is refused: its None is an unknown
    dimension (`ops.arange(start=0, stop=ops.shape(x)[1])` of a KerasTensor), and counting to
    it gave an empty range (a sequence length of 0). The error lets a user layer's outputs be
    traced on stand-in values instead, as Keras 3 computes them (layers/stand_in_trace.py)."""
    if stop is None and isinstance(start, (int, np.integer)) and start == 0 and \
            in_symbolic_call():
        raise ValueError(
            "ops.arange: `stop` is None inside a symbolic call: an unknown dimension of a "
            "symbolic tensor has no value (received start=0, stop=None).")
    args = [a for a in (start, stop, step) if a is not None]
    is_float = any(isinstance(a, float) or np.asarray(a).dtype.kind == "f" for a in args)
    default = "float32" if is_float else "int32"
    if stop is None:
        start, stop = 0, start
    return _out(np.arange(start, stop, 1 if step is None else step,
                          dtype=_np_dtype(dtype, default)))


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    """`num` evenly spaced values from start to stop (keras.ops.linspace)."""
    values, step = np.linspace(np.asarray(start), np.asarray(stop), num, endpoint=endpoint,
                               retstep=True, axis=axis)
    out = _out(values.astype(_np_dtype(dtype)))
    return (out, step) if retstep else out


def logspace(start, stop, num=50, endpoint=True, base=10, dtype=None, axis=0):
    """base ** linspace(start, stop, num) (keras.ops.logspace)."""
    values = np.logspace(np.asarray(start), np.asarray(stop), num, endpoint=endpoint,
                         base=base, axis=axis)
    return _out(values.astype(_np_dtype(dtype)))


def eye(N, M=None, k=0, dtype=None):
    """An N x M matrix with ones on the k-th diagonal (keras.ops.eye)."""
    return _out(np.eye(int(N), None if M is None else int(M), int(k), dtype=_np_dtype(dtype)))


def identity(n, dtype=None):
    """The n x n identity matrix (keras.ops.identity)."""
    return eye(n, dtype=dtype)


def tri(N, M=None, k=0, dtype=None):
    """Ones at and below the k-th diagonal of an N x M matrix (keras.ops.tri)."""
    return _out(np.tri(int(N), None if M is None else int(M), int(k), dtype=_np_dtype(dtype)))


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """`num` values spaced evenly on a log scale from start to stop (keras.ops.geomspace)."""
    values = np.geomspace(np.asarray(start), np.asarray(stop), num, endpoint=endpoint, axis=axis)
    return _out(values.astype(_np_dtype(dtype)))


def meshgrid(*x, indexing="xy"):
    """Coordinate matrices from coordinate vectors (keras.ops.meshgrid)."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"Valid values for `indexing` are 'xy' and 'ij'. Received: "
                         f"indexing={indexing!r}")
    arrays = [np.asarray(getattr(v, "_value", v)) for v in x]
    return [_out(g) for g in np.meshgrid(*arrays, indexing=indexing)]


def array(x, dtype=None):
    """`x` as a tensor (keras.ops.array); floats become floatx unless `dtype` is given."""
    from fkeras.ops.core import convert_to_tensor

    return convert_to_tensor(x, dtype=dtype)


def _window(fn):
    def window(x):
        return _out(fn(int(x)).astype(_np_dtype(None)))

    window.__name__ = window.__qualname__ = fn.__name__
    window.__doc__ = f"The {fn.__name__} window of `x` points (keras.ops.{fn.__name__})."
    return window


bartlett = _window(np.bartlett)
blackman = _window(np.blackman)
hamming = _window(np.hamming)
hanning = _window(np.hanning)


def kaiser(x, beta):
    """The Kaiser window of `x` points with shape parameter `beta` (keras.ops.kaiser)."""
    return _out(np.kaiser(int(x), float(beta)).astype(_np_dtype(None)))


def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of the 1-D `x` (keras.ops.vander)."""
    arr = np.asarray(getattr(x, "_value", x))
    out = np.vander(arr, N, increasing)
    return _out(out.astype(_np_dtype(None)) if out.dtype.kind == "f" else out)
