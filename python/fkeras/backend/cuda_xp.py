"""The array namespace of the cuda device (`CudaDevice.xp`): the subset of NumPy's functions
that fkeras ops use, on float32 DeviceArrays, computed by the kernels of cuda/kernels/xp.cu.

An op written against `xp = dev.xp` runs unchanged on the host (`Device.xp` is `numpy`) and on
the GPU. What this namespace does as NumPy does: broadcasting (rank <= 8), Python numbers as
scalar operands (converted to float32, NumPy 2's rule for a float32 array and a Python
number), NaN propagation of maximum/minimum/max/min, keepdims, negative and tuple axes, empty
arrays. Where it differs: reductions accumulate in float64 (NumPy sums float32 pairwise in
float32), so sum/mean may differ from NumPy's in the last bit; comparisons return float32
masks of 0.0 and 1.0 (usable wherever the ops multiply by a mask or select with `where`);
`split` and `broadcast_to` return new arrays, not views; inputs are float32 only (a TypeError
otherwise; ops check with `float32_only` before choosing the device).
"""

import numbers

import numpy as np

# Operation codes of fk_cuda/xp_math.h (BinaryOp, UnaryOp, ReduceOp).
BINARY = {name: i for i, name in enumerate(
    ["add", "subtract", "multiply", "divide", "maximum", "minimum", "power", "equal",
     "not_equal", "less", "less_equal", "greater", "greater_equal", "first"])}
UNARY = {name: i for i, name in enumerate(
    ["negative", "abs", "square", "sqrt", "exp", "log", "sign"])}
REDUCE = {name: i for i, name in enumerate(["sum", "mean", "max", "min"])}
MAX_RANK = 8
_F32 = np.dtype(np.float32)


def _is_number(x):
    return isinstance(x, numbers.Real) and not isinstance(x, np.ndarray)


def float32_only(*values):
    """Whether every value is float32 data for this namespace: a device buffer (or Tensor /
    Variable holding one) of dtype float32, host float data (uploaded as float32), a Python
    number, or None."""
    for v in values:
        if v is None or _is_number(v):
            continue
        v = getattr(v, "_value", v)  # a Tensor or Variable: its buffer
        dt = getattr(v, "dtype", None)
        if dt is None:
            return False
        try:
            dt = np.dtype(dt)
        except TypeError:
            return False
        if isinstance(v, (np.ndarray, np.generic)):
            if dt.kind != "f":  # host floats are uploaded as float32; integers stay integers
                return False
        elif dt != _F32:
            return False
    return True


def _axes(axis, ndim, fn):
    if axis is None:
        return tuple(range(ndim))
    seq = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    out = []
    for a in seq:
        a = int(a)
        if not -ndim <= a < ndim:
            raise ValueError(f"`{fn}`: axis {a} is out of bounds for an array of rank {ndim}.")
        a %= ndim
        if a in out:
            raise ValueError(f"`{fn}`: duplicate value in 'axis': {seq}.")
        out.append(a)
    return tuple(sorted(out))


class CudaXP:
    """NumPy's functions on a CudaDevice's float32 DeviceArrays (see the module docstring).

    Args:
        device: the `CudaDevice` whose buffers and kernels the functions use.
    """

    def __init__(self, device):
        self._dev = device
        self._m = device.module
        self._array = device.array_type

    # ---- helpers ----

    def _check(self, x, fn, arg="x"):
        if isinstance(x, self._array):
            if x.dtype != _F32:
                raise TypeError(f"`xp.{fn}` on the cuda device computes on float32 arrays; "
                                f"argument '{arg}' has dtype {x.dtype}.")
            return x
        if _is_number(x):
            return float(x)
        raise TypeError(f"`xp.{fn}`: argument '{arg}' must be a DeviceArray of this device or a "
                        f"number, received {type(x).__name__}.")

    @staticmethod
    def _shape(x):
        return () if _is_number(x) else tuple(x.shape)

    def _out_shape(self, fn, *shapes):
        for s in shapes:
            if len(s) > MAX_RANK:
                raise ValueError(f"`xp.{fn}`: rank {len(s)} exceeds the cuda namespace's limit "
                                 f"of {MAX_RANK}.")
        try:
            return np.broadcast_shapes(*shapes)
        except ValueError:
            raise ValueError(f"`xp.{fn}`: operands could not be broadcast together with shapes "
                             f"{' '.join(str(s) for s in shapes)}.") from None

    def _binary(self, name, a, b):
        a, b = self._check(a, name, "x1"), self._check(b, name, "x2")
        shape = self._out_shape(name, self._shape(a), self._shape(b))
        out = self._dev.empty(shape)
        self._m.xp_binary(out, a, b, BINARY[name])
        return out

    def _unary(self, name, x):
        x = self._check(x, name)
        if not isinstance(x, self._array):
            x = self._dev.asarray(np.float32(x))
        out = self._dev.empty(x.shape)
        self._m.xp_unary(out, x, UNARY[name])
        return out

    def _reduce(self, name, x, axis, keepdims):
        x = self._check(x, name)
        if not isinstance(x, self._array):
            x = self._dev.asarray(np.float32(x))
        if x.ndim > MAX_RANK:
            raise ValueError(f"`xp.{name}`: rank {x.ndim} exceeds the cuda namespace's limit "
                             f"of {MAX_RANK}.")
        axes = _axes(axis, x.ndim, name)
        if name in ("max", "min") and x.size == 0:
            word = "maximum" if name == "max" else "minimum"
            raise ValueError(f"zero-size array to reduction operation {word} which has no "
                             "identity")
        if keepdims:
            shape = tuple(1 if i in axes else d for i, d in enumerate(x.shape))
        else:
            shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
        out = self._dev.empty(shape)
        self._m.xp_reduce(out, x, REDUCE[name], list(axes))
        return out

    # ---- binary functions (NumPy broadcasting) ----

    def add(self, x1, x2):
        return self._binary("add", x1, x2)

    def subtract(self, x1, x2):
        return self._binary("subtract", x1, x2)

    def multiply(self, x1, x2):
        return self._binary("multiply", x1, x2)

    def divide(self, x1, x2):
        return self._binary("divide", x1, x2)

    true_divide = divide

    def maximum(self, x1, x2):
        return self._binary("maximum", x1, x2)

    def minimum(self, x1, x2):
        return self._binary("minimum", x1, x2)

    def power(self, x1, x2):
        return self._binary("power", x1, x2)

    def equal(self, x1, x2):
        """x1 == x2 as a float32 mask (1.0 / 0.0)."""
        return self._binary("equal", x1, x2)

    def not_equal(self, x1, x2):
        return self._binary("not_equal", x1, x2)

    def less(self, x1, x2):
        return self._binary("less", x1, x2)

    def less_equal(self, x1, x2):
        return self._binary("less_equal", x1, x2)

    def greater(self, x1, x2):
        return self._binary("greater", x1, x2)

    def greater_equal(self, x1, x2):
        return self._binary("greater_equal", x1, x2)

    # ---- unary functions ----

    def negative(self, x):
        return self._unary("negative", x)

    def abs(self, x):  # noqa: A003
        return self._unary("abs", x)

    absolute = abs

    def square(self, x):
        return self._unary("square", x)

    def sqrt(self, x):
        return self._unary("sqrt", x)

    def exp(self, x):
        return self._unary("exp", x)

    def log(self, x):
        return self._unary("log", x)

    def sign(self, x):
        return self._unary("sign", x)

    # ---- reductions (float64 accumulation, deterministic) ----

    def sum(self, x, axis=None, keepdims=False):  # noqa: A003
        return self._reduce("sum", x, axis, keepdims)

    def mean(self, x, axis=None, keepdims=False):
        return self._reduce("mean", x, axis, keepdims)

    def max(self, x, axis=None, keepdims=False):  # noqa: A003
        return self._reduce("max", x, axis, keepdims)

    def min(self, x, axis=None, keepdims=False):  # noqa: A003
        return self._reduce("min", x, axis, keepdims)

    # ---- selection and layout ----

    def where(self, condition, x1, x2):
        """x1 where condition (a float32 mask or a bool array) is nonzero, else x2."""
        if not isinstance(condition, self._array):
            raise TypeError("`xp.where`: argument 'condition' must be a DeviceArray of this "
                            f"device, received {type(condition).__name__}.")
        x1, x2 = self._check(x1, "where", "x1"), self._check(x2, "where", "x2")
        shape = self._out_shape("where", tuple(condition.shape), self._shape(x1),
                                self._shape(x2))
        out = self._dev.empty(shape)
        self._m.xp_where(out, condition, x1, x2)
        return out

    def broadcast_to(self, x, shape):
        """A new array of `shape` holding x broadcast (NumPy returns a view)."""
        x = self._check(x, "broadcast_to")
        shape = tuple(int(d) for d in shape)
        if self._out_shape("broadcast_to", self._shape(x), shape) != shape:
            raise ValueError(f"`xp.broadcast_to`: cannot broadcast shape {self._shape(x)} to "
                             f"{shape}.")
        out = self._dev.empty(shape)
        self._m.xp_binary(out, x, 0.0, BINARY["first"])
        return out

    def asarray(self, x, dtype=None):
        """x itself when it is a DeviceArray of `dtype` (float32 only); a number becomes a 0-d
        float32 DeviceArray."""
        if dtype is not None and np.dtype(dtype) != _F32:
            raise TypeError(f"`xp.asarray` on the cuda device makes float32 arrays; received "
                            f"dtype {np.dtype(dtype)}.")
        if isinstance(x, self._array):
            self._check(x, "asarray")
            return x
        if _is_number(x):
            return self._dev.asarray(np.float32(x))
        raise TypeError(f"`xp.asarray`: expected a DeviceArray of this device or a number, "
                        f"received {type(x).__name__} (upload host data with the device).")

    def clip(self, x, x_min, x_max):
        """minimum(maximum(x, x_min), x_max) (None: no bound), NaN kept, as np.clip."""
        out = self._check(x, "clip")
        if x_min is not None:
            out = self.maximum(out, x_min)
        if x_max is not None:
            out = self.minimum(out, x_max)
        return out if out is not x else self.multiply(x, 1.0)

    @staticmethod
    def ascontiguousarray(x):
        """x itself: DeviceArrays are C-contiguous."""
        return x

    def concatenate(self, arrays, axis=0):
        """The arrays joined along `axis` (one dtype, equal shapes elsewhere; any dtype)."""
        arrays = list(arrays)
        if not arrays:
            raise ValueError("`xp.concatenate`: need at least one array to concatenate.")
        for i, a in enumerate(arrays):
            if not isinstance(a, self._array):
                raise TypeError(f"`xp.concatenate`: array {i} must be a DeviceArray of this "
                                f"device, received {type(a).__name__}.")
        if axis is None:
            arrays, axis = [a.reshape(-1) for a in arrays], 0
        first = arrays[0]
        if first.ndim == 0:
            raise ValueError("`xp.concatenate`: zero-dimensional arrays cannot be "
                             "concatenated.")
        ax = _axes(axis, first.ndim, "concatenate")[0]
        for a in arrays[1:]:
            if a.dtype != first.dtype:
                raise TypeError(f"`xp.concatenate`: arrays must share one dtype, received "
                                f"{first.dtype} and {a.dtype}.")
            if a.ndim != first.ndim or any(d != e for i, (d, e) in
                                           enumerate(zip(a.shape, first.shape)) if i != ax):
                raise ValueError(f"`xp.concatenate`: all input array dimensions except for the "
                                 f"concatenation axis must match; received shapes "
                                 f"{[tuple(b.shape) for b in arrays]}.")
        shape = list(first.shape)
        shape[ax] = sum(a.shape[ax] for a in arrays)
        out = self._dev.empty(shape, first.dtype)
        outer = int(np.prod(shape[:ax], dtype=np.int64))
        inner = int(np.prod(shape[ax + 1:], dtype=np.int64))
        offset = 0
        for a in arrays:
            cols = a.shape[ax] * inner
            self._m.xp_copy2d(out, offset * inner, shape[ax] * inner, a, 0, cols, outer, cols)
            offset += a.shape[ax]
        return out

    def split(self, x, indices, axis=0):
        """x cut along `axis` before each of `indices` (np.split's sections): new arrays."""
        if not isinstance(x, self._array):
            raise TypeError("`xp.split`: argument 'x' must be a DeviceArray of this device.")
        ax = _axes(axis, x.ndim, "split")[0]
        n = x.shape[ax]
        bounds = [0] + [min(max(int(i), 0), n) for i in indices] + [n]
        outer = int(np.prod(x.shape[:ax], dtype=np.int64))
        inner = int(np.prod(x.shape[ax + 1:], dtype=np.int64))
        parts = []
        for lo, hi in zip(bounds[:-1], bounds[1:]):
            length = max(hi - lo, 0)
            shape = list(x.shape)
            shape[ax] = length
            part = self._dev.empty(shape, x.dtype)
            cols = length * inner
            self._m.xp_copy2d(part, 0, cols, x, lo * inner, n * inner, outer, cols)
            parts.append(part)
        return parts

    def __repr__(self):
        return "<cuda array namespace>"
