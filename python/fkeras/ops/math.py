"""Elementwise arithmetic, matmul and reductions (keras.ops names and signatures).

On the cpu and reference devices these structural ops run through NumPy on the device's arrays
(they are memory-bound one-liners that NumPy already does well); the compute-heavy ops are in
nn.py and go through the kernel tables. The elementwise ops and reductions compute with the
device's array namespace `xp = dev.xp` (NumPy itself on the host, so the cpu path is the NumPy
call it always was; fkeras/backend/cuda_xp.py on the GPU): they run on a non-host device when
their inputs are float32 there (ops/xp_native.py).
"""

import numpy as np

from fkeras.engine import fast_path as _fp
from fkeras.ops import shape_utils as su
from fkeras.ops.registry import Op, apply
from fkeras.ops.xp_native import float32_native
from fkeras.engine.keras_tensor import KerasTensor


def _shape(x):
    return su.shape_of(x)


class _Binary(Op):
    device_native = True
    native_on = float32_native

    def output_spec(self, a, b):
        return su.broadcast_shapes(_shape(a), _shape(b), self.name)


def _unbroadcast(xp, g, shape):
    return su.unbroadcast(g, shape, xp)


class Add(_Binary):
    name = "add"

    def forward(self, dev, a, b):
        return dev.xp.add(a, b), (a, b)

    def backward(self, dev, saved, g, needs):
        a, b = saved
        xp = dev.xp
        return (_unbroadcast(xp, g, a.shape) if needs[0] else None,
                _unbroadcast(xp, g, b.shape) if needs[1] else None)


class Subtract(_Binary):
    name = "subtract"

    def forward(self, dev, a, b):
        return dev.xp.subtract(a, b), (a, b)

    def backward(self, dev, saved, g, needs):
        a, b = saved
        xp = dev.xp
        return (_unbroadcast(xp, g, a.shape) if needs[0] else None,
                _unbroadcast(xp, xp.negative(g), b.shape) if needs[1] else None)


class Multiply(_Binary):
    name = "multiply"

    def forward(self, dev, a, b):
        return dev.xp.multiply(a, b), (a, b)

    def backward(self, dev, saved, g, needs):
        a, b = saved
        xp = dev.xp
        return (_unbroadcast(xp, xp.multiply(g, b), a.shape) if needs[0] else None,
                _unbroadcast(xp, xp.multiply(g, a), b.shape) if needs[1] else None)


class Divide(_Binary):
    name = "divide"

    def forward(self, dev, a, b):
        return dev.xp.divide(a, b), (a, b)

    def backward(self, dev, saved, g, needs):
        a, b = saved
        xp = dev.xp
        gb = None
        if needs[1]:  # -g * a / (b * b)
            gb = _unbroadcast(xp, xp.divide(xp.multiply(xp.negative(g), a), xp.multiply(b, b)),
                              b.shape)
        return (_unbroadcast(xp, xp.divide(g, b), a.shape) if needs[0] else None, gb)


def _mask_grads(xp, g, mask, a, b, needs):
    # g where the mask holds to a, elsewhere to b; NumPy multiplies by the bool mask and its
    # inverse, the device by a float32 0/1 mask and 1 - mask (the same products).
    inv = (~mask if xp is np else xp.subtract(1.0, mask)) if needs[1] else None
    return (_unbroadcast(xp, xp.multiply(g, mask), a.shape) if needs[0] else None,
            _unbroadcast(xp, xp.multiply(g, inv), b.shape) if needs[1] else None)


class Maximum(_Binary):
    name = "maximum"

    def forward(self, dev, a, b):
        return dev.xp.maximum(a, b), (a, b)

    def backward(self, dev, saved, g, needs):
        a, b = saved
        xp = dev.xp
        return _mask_grads(xp, g, xp.greater_equal(a, b), a, b, needs)


class Minimum(_Binary):
    name = "minimum"

    def forward(self, dev, a, b):
        return dev.xp.minimum(a, b), (a, b)

    def backward(self, dev, saved, g, needs):
        a, b = saved
        xp = dev.xp
        return _mask_grads(xp, g, xp.less_equal(a, b), a, b, needs)


class Power(_Binary):
    name = "power"

    def forward(self, dev, a, b):
        out = dev.xp.power(a, b)
        return out, (a, b, out)

    def backward(self, dev, saved, g, needs):
        a, b, out = saved
        xp = dev.xp
        ga = gb = None
        if needs[0]:  # g * b * a ** (b - 1)
            ga = _unbroadcast(xp, xp.multiply(xp.multiply(g, b), xp.power(a, xp.subtract(b, 1))),
                              a.shape)
        if needs[1]:  # g * out * log(a) where a > 0, else 0
            with np.errstate(divide="ignore", invalid="ignore"):
                pos = xp.greater(a, 0)
                log_a = xp.where(pos, xp.log(xp.where(pos, a, 1)), 0)
                gb = _unbroadcast(xp, xp.multiply(xp.multiply(g, out), log_a), b.shape)
        return ga, gb


class _Unary(Op):
    def output_spec(self, x, **attrs):
        return _shape(x)


class _XpUnary(_Unary):
    device_native = True
    native_on = float32_native


class Negative(_XpUnary):
    name = "negative"

    def forward(self, dev, x):
        return dev.xp.negative(x), None

    def backward(self, dev, saved, g, needs):
        return (dev.xp.negative(g),)


class Exp(_XpUnary):
    name = "exp"

    def forward(self, dev, x):
        y = dev.xp.exp(x)
        return y, y

    def backward(self, dev, y, g, needs):
        return (dev.xp.multiply(g, y),)


class Log(_XpUnary):
    name = "log"

    def forward(self, dev, x):
        return dev.xp.log(x), x

    def backward(self, dev, x, g, needs):
        return (dev.xp.divide(g, x),)


class Sqrt(_XpUnary):
    name = "sqrt"

    def forward(self, dev, x):
        y = dev.xp.sqrt(x)
        return y, y

    def backward(self, dev, y, g, needs):
        xp = dev.xp
        return (xp.divide(xp.multiply(g, 0.5), y),)


class Square(_XpUnary):
    name = "square"

    def forward(self, dev, x):
        return dev.xp.square(x), x

    def backward(self, dev, x, g, needs):
        xp = dev.xp
        return (xp.multiply(xp.multiply(2.0, g), x),)


class Abs(_XpUnary):
    name = "absolute"

    def forward(self, dev, x):
        return dev.xp.abs(x), x

    def backward(self, dev, x, g, needs):
        xp = dev.xp
        return (xp.multiply(g, xp.sign(x)),)


def _bound(v):
    return v is None or (isinstance(v, (int, float, np.integer, np.floating))
                         and not isinstance(v, bool))


class Clip(_Unary):
    name = "clip"
    device_native = True

    def native_on(self, inputs, attrs):  # float32 x, bounds that are numbers (or None)
        return (float32_native(self, inputs, attrs) and _bound(attrs.get("x_min"))
                and _bound(attrs.get("x_max")))

    def forward(self, dev, x, x_min=None, x_max=None):
        xp = dev.xp
        if xp is not np:
            return xp.clip(x, x_min, x_max), x
        return np.clip(x, x_min, x_max).astype(x.dtype, copy=False), x

    def backward(self, dev, x, g, needs, x_min=None, x_max=None):
        xp = dev.xp
        if xp is not np:  # g where x_min <= x <= x_max (float32 masks)
            if x_min is not None:
                g = xp.multiply(g, xp.greater_equal(x, x_min))
            if x_max is not None:
                g = xp.multiply(g, xp.less_equal(x, x_max))
            return (g,)
        mask = np.ones(x.shape, dtype=bool)
        if x_min is not None:
            mask &= x >= x_min
        if x_max is not None:
            mask &= x <= x_max
        return (g * mask,)


class MatMul(Op):
    name = "matmul"

    def output_spec(self, a, b):
        sa, sb = _shape(a), _shape(b)
        if len(sa) < 1 or len(sb) < 1:
            raise ValueError(f"`matmul` needs tensors of rank >= 1, received {sa} and {sb}.")
        if len(sa) >= 1 and len(sb) >= 2 and None not in (sa[-1], sb[-2]) and sa[-1] != sb[-2]:
            raise ValueError(
                f"Inner dimensions of `matmul` do not match: {sa} and {sb} "
                f"({sa[-1]} != {sb[-2]})."
            )
        if len(sb) == 1:
            if None not in (sa[-1], sb[0]) and sa[-1] != sb[0]:
                raise ValueError(f"Inner dimensions of `matmul` do not match: {sa} and {sb} "
                                 f"({sa[-1]} != {sb[0]}).")
            return sa[:-1]
        if len(sa) == 1:
            return sb[:-2] + sb[-1:]
        batch = su.broadcast_shapes(sa[:-2], sb[:-2], "matmul")
        return batch + (sa[-2], sb[-1])

    def forward(self, dev, a, b):
        if a.ndim == 2 and b.ndim == 2:
            M, K = a.shape
            N = b.shape[1]
            if b.shape[0] != K:
                raise ValueError(f"Inner dimensions of `matmul` do not match: {a.shape} and {b.shape}.")
            out = dev.empty((M, N))
            dev.kernels["gemm"](out, a, b, M, N, K, False, False, 1.0, 0.0)
            return out, (a, b)
        self.output_spec(a, b)  # names both shapes on a mismatch (NumPy names sizes)
        return np.matmul(a, b), (a, b)

    def backward(self, dev, saved, g, needs):
        a, b = saved
        if a.ndim == 2 and b.ndim == 2:
            M, K = a.shape
            N = b.shape[1]
            ga = gb = None
            if needs[0]:
                ga = dev.empty((M, K))
                dev.kernels["gemm"](ga, np.ascontiguousarray(g), b, M, K, N, False, True, 1.0, 0.0)
            if needs[1]:
                gb = dev.empty((K, N))
                dev.kernels["gemm"](gb, a, np.ascontiguousarray(g), K, N, M, True, False, 1.0, 0.0)
            return ga, gb
        a2 = a if a.ndim > 1 else a[None, :]
        b2 = b if b.ndim > 1 else b[:, None]
        g2 = g.reshape(np.matmul(a2, b2).shape)
        ga = su.unbroadcast(np.matmul(g2, np.swapaxes(b2, -1, -2)), a2.shape).reshape(a.shape) if needs[0] else None
        gb = su.unbroadcast(np.matmul(np.swapaxes(a2, -1, -2), g2), b2.shape).reshape(b.shape) if needs[1] else None
        return ga, gb


class _Reduce(Op):
    # (sum, mean, max, min run on a non-host device through dev.xp; the reductions of
    # ops/reductions.py that subclass this compute in NumPy: host)

    def output_spec(self, x, axis=None, keepdims=False):
        shape = _shape(x)
        return su.reduced_shape(shape, su.normalize_axes(axis, len(shape), self.name), keepdims)


class Sum(_Reduce):
    device_native = True
    native_on = float32_native  # on the GPU: float64 accumulation (cuda_xp.py)
    name = "sum"

    def forward(self, dev, x, axis=None, keepdims=False):
        xp = dev.xp
        return xp.asarray(xp.sum(x, axis=axis, keepdims=keepdims), dtype=x.dtype), x.shape

    def backward(self, dev, shape, g, needs, axis=None, keepdims=False):
        axes = su.normalize_axes(axis, len(shape))
        xp = dev.xp
        b = xp.broadcast_to(g.reshape(su.reduced_shape(shape, axes, True)), shape)
        return (b.copy() if xp is np else b,)  # NumPy's is a view, the device's a new array


class Mean(_Reduce):
    device_native = True
    native_on = float32_native  # on the GPU: float64 accumulation (cuda_xp.py)
    name = "mean"

    def forward(self, dev, x, axis=None, keepdims=False):
        dtype = x.dtype if x.dtype.kind == "f" else dev.dtype  # mean of ints/bools is float
        xp = dev.xp
        return xp.asarray(xp.mean(x, axis=axis, keepdims=keepdims), dtype=dtype), x.shape

    def backward(self, dev, shape, g, needs, axis=None, keepdims=False):
        axes = su.normalize_axes(axis, len(shape))
        count = int(np.prod([shape[a] for a in axes])) if axes else 1
        xp = dev.xp
        g = xp.divide(g.reshape(su.reduced_shape(shape, axes, True)), count if count > 0 else 1)
        if xp is not np:
            return (xp.broadcast_to(g, shape),)
        # C order: astype would otherwise keep the broadcast view's axis order (a transposed
        # layout that every kernel downstream would copy again).
        return (np.broadcast_to(g, shape).astype(dev.dtype, order="C"),)


class Max(_Reduce):
    device_native = True
    native_on = float32_native  # on the GPU: float64 accumulation (cuda_xp.py)
    name = "max"

    def forward(self, dev, x, axis=None, keepdims=False):
        xp = dev.xp
        y = xp.asarray(xp.max(x, axis=axis, keepdims=True), dtype=x.dtype)
        out = y if keepdims else y.reshape(su.reduced_shape(x.shape, su.normalize_axes(axis, x.ndim), False))
        return out, (x, y)

    def backward(self, dev, saved, g, needs, axis=None, keepdims=False):
        # g shared equally by the maxima (NumPy: a bool mask, an int count, a float64 quotient
        # rounded to float32; the device: float32 mask and count, the same correctly rounded
        # float32 quotient).
        x, y = saved
        xp = dev.xp
        mask = xp.equal(x, y)
        count = xp.sum(mask, axis=axis, keepdims=True)
        g = g.reshape(y.shape)
        return (xp.asarray(xp.divide(xp.multiply(mask, g), count), dtype=x.dtype),)


class Min(Max):
    name = "min"

    def forward(self, dev, x, axis=None, keepdims=False):
        xp = dev.xp
        y = xp.asarray(xp.min(x, axis=axis, keepdims=True), dtype=x.dtype)
        out = y if keepdims else y.reshape(su.reduced_shape(x.shape, su.normalize_axes(axis, x.ndim), False))
        return out, (x, y)


# ---- selection, parametric activations, normalization ----

class Where(Op):
    """where(condition, x1, x2): the condition is data (no gradient); x1, x2 broadcast."""

    name = "where"
    device_native = True

    def native_on(self, inputs, attrs):
        # float32 values and a bool or float32 condition (dev.xp.where selects on nonzero)
        cond = getattr(inputs[0], "_value", inputs[0])
        kind = np.dtype(getattr(cond, "dtype", np.float64)).kind
        return float32_native(self, inputs[1:], attrs) and (
            kind == "b" or float32_native(self, inputs[:1], attrs))

    def output_spec(self, condition, x1, x2):
        out = su.broadcast_shapes(_shape(x1), _shape(x2), self.name)
        return su.broadcast_shapes(_shape(condition), out, self.name)

    def forward(self, dev, condition, x1, x2):
        xp = dev.xp
        if xp is not np:
            return xp.where(condition, x1, x2), (condition, tuple(x1.shape), tuple(x2.shape))
        cond = np.asarray(condition).astype(bool, copy=False)
        out = np.where(cond, x1, x2)
        if out.dtype.kind == "f":
            out = out.astype(dev.dtype, copy=False)
        return out, (cond, np.shape(x1), np.shape(x2))

    def backward(self, dev, saved, g, needs):
        cond, s1, s2 = saved
        xp = dev.xp
        zero = np.zeros((), g.dtype) if xp is np else 0.0
        return (None,
                su.unbroadcast(xp.where(cond, g, zero), s1, xp) if needs[1] else None,
                su.unbroadcast(xp.where(cond, zero, g), s2, xp) if needs[2] else None)


class ReluGeneral(_Unary):
    """keras.activations.relu with options (Keras 3's formula):
    y = clip(x * (x > threshold), 0, max_value) - negative_slope * relu(threshold - x)."""

    name = "relu_general"

    def forward(self, dev, x, negative_slope=0.0, max_value=None, threshold=0.0):
        # As Keras 3: relu (NaN stays NaN) unless a threshold is set (a NaN fails x > threshold:
        # 0), then a clip to [0, max_value], which keeps NaN.
        y = np.where(x > threshold, x, 0.0) if threshold else np.maximum(x, 0.0)
        if max_value is not None:
            y = np.clip(y, 0.0, max_value)  # also zeroes threshold < x < 0 (Keras 3)
        if negative_slope:
            y = y - negative_slope * np.maximum(threshold - x, 0.0)
        return y.astype(x.dtype, copy=False), x

    def backward(self, dev, x, g, needs, negative_slope=0.0, max_value=None, threshold=0.0):
        # Subgradients at the kinks follow torch's relu/clamp: relu'(0) = 0, clamp passes at the
        # bound itself.
        slope = (x > threshold).astype(g.dtype)
        if max_value is not None:
            slope *= (x >= 0) & (x <= max_value)
        if negative_slope:
            slope += negative_slope * (x < threshold)
        return (g * slope,)


class PRelu(Op):
    """y = relu(x) - alpha * relu(-x), alpha broadcast against x (PReLU's learned slopes)."""

    name = "prelu"

    def output_spec(self, x, alpha):
        return su.broadcast_shapes(_shape(x), _shape(alpha), self.name)

    def forward(self, dev, x, alpha):
        neg = np.minimum(x, 0.0)
        return (np.maximum(x, 0.0) + alpha * neg).astype(x.dtype, copy=False), (x, alpha, neg)

    def backward(self, dev, saved, g, needs):
        x, alpha, neg = saved
        dx = su.unbroadcast(g * ((x > 0) + alpha * (x < 0)), x.shape) if needs[0] else None
        dalpha = su.unbroadcast(g * neg, np.shape(alpha)) if needs[1] else None
        return dx, dalpha


# ---- public functions (keras.ops names and signatures) ----

from fkeras.ops.dtypes import cast, promote  # noqa: E402
from fkeras.ops.registry import REGISTRY as _R  # noqa: E402


def add(x1, x2):
    return apply(_R["add"], *promote(x1, x2))


def subtract(x1, x2):
    return apply(_R["subtract"], *promote(x1, x2))


def multiply(x1, x2):
    return apply(_R["multiply"], *promote(x1, x2))


def divide(x1, x2):
    """x1 / x2 (true division: integer operands give the float dtype)."""
    x1, x2 = promote(x1, x2)
    dt = getattr(x1, "dtype", None)
    if dt is not None and _kind(dt) in "iub":
        x1, x2 = cast(x1, "float32"), cast(x2, "float32")
    return apply(_R["divide"], x1, x2)


def _kind(dtype):
    try:
        return np.dtype(dtype).kind  # a Variable's dtype is a name, as keras.Variable's
    except TypeError:
        return "O"


def true_divide(x1, x2):
    return divide(x1, x2)


def maximum(x1, x2):
    return apply(_R["maximum"], *promote(x1, x2))


def minimum(x1, x2):
    return apply(_R["minimum"], *promote(x1, x2))


def power(x1, x2):
    return apply(_R["power"], *promote(x1, x2))


def negative(x):
    return apply(_R["negative"], x)


def exp(x):
    return apply(_R["exp"], x)


def log(x):
    return apply(_R["log"], x)


def sqrt(x):
    return apply(_R["sqrt"], x)


def square(x):
    return apply(_R["square"], x)


def absolute(x):
    return apply(_R["absolute"], x)


abs = absolute  # noqa: A001  (keras.ops.abs)


def clip(x, x_min, x_max):
    if _bound(x_min) and _bound(x_max):
        return apply(_R["clip"], x, x_min=x_min, x_max=x_max)
    # Tensor or array bounds (Keras takes any tensor broadcastable with x): np.clip's values,
    # in x's dtype, through maximum / minimum, so that a bound on the tape gets its gradient
    # where it binds, as it does in Keras's backends.
    out = x
    if x_min is not None:
        out = maximum(out, x_min)
    if x_max is not None:
        out = minimum(out, x_max)
    dtype = getattr(x, "dtype", None) or np.asarray(x).dtype
    return cast(out, dtype)


def matmul(x1, x2):
    return apply(_R["matmul"], *promote(x1, x2))


def _axis(axis):
    """Keras takes an axis list; NumPy reductions take an int or a tuple."""
    return tuple(axis) if isinstance(axis, list) else axis


def sum(x, axis=None, keepdims=False):  # noqa: A001
    return apply(_R["sum"], x, axis=_axis(axis), keepdims=keepdims)


def mean(x, axis=None, keepdims=False):
    return apply(_R["mean"], x, axis=_axis(axis), keepdims=keepdims)


def _extremum(name, x, axis, keepdims, initial, combine):
    axis = _axis(axis)
    if initial is None:
        return apply(_R[name], x, axis=axis, keepdims=keepdims)
    shape = tuple(getattr(x, "shape", np.shape(x)))
    if 0 in shape and not isinstance(x, KerasTensor):
        # An empty reduction is `initial` itself (NumPy's rule, the result shape kept).
        value = np.asarray(getattr(x, "_value", x))
        out = getattr(np, name)(value, axis=axis, keepdims=keepdims, initial=initial)
        from fkeras.ops.core import convert_to_tensor

        return convert_to_tensor(out)
    return combine(apply(_R[name], x, axis=axis, keepdims=keepdims), initial)


def max(x, axis=None, keepdims=False, initial=None):  # noqa: A001
    """The largest entry of `x` along `axis` (keras.ops.max).

    Args:
        x: input tensor.
        axis: the reduced axis or axes (None: all).
        keepdims: keep the reduced axes with size 1.
        initial: if given, the result is at least `initial` (and an empty `x` gives it).
    """
    if initial is None and 0 in tuple(getattr(x, "shape", np.shape(x))):
        raise ValueError("Cannot compute the max of an empty tensor.")
    return _extremum("max", x, axis, keepdims, initial, maximum)


def min(x, axis=None, keepdims=False, initial=None):  # noqa: A001
    """The smallest entry of `x` along `axis` (keras.ops.min).

    Args:
        x: input tensor.
        axis: the reduced axis or axes (None: all).
        keepdims: keep the reduced axes with size 1.
        initial: if given, the result is at most `initial` (and an empty `x` gives it).
    """
    if initial is None and 0 in tuple(getattr(x, "shape", np.shape(x))):
        raise ValueError("Cannot compute the min of an empty tensor.")
    return _extremum("min", x, axis, keepdims, initial, minimum)


def where(condition, x1=None, x2=None):
    """Elements of x1 where condition holds, else of x2 (keras.ops.where).

    With only `condition`, the indices of its nonzero elements (`nonzero(condition)`)."""
    if x1 is None and x2 is None:
        from fkeras.ops.indexing import nonzero

        return nonzero(condition)
    if x1 is None or x2 is None:
        raise ValueError("`x1` and `x2` either both should be `None` or both should have "
                         f"non-None value. Received: x1={x1!r}, x2={x2!r}")
    return apply(_R["where"], condition, *promote(x1, x2))


def relu_general(x, negative_slope=0.0, max_value=None, threshold=0.0):
    """keras.activations.relu(x, negative_slope, max_value, threshold) in one op."""
    return apply(_R["relu_general"], x, negative_slope=float(negative_slope),
                 max_value=None if max_value is None else float(max_value),
                 threshold=float(threshold))


def prelu(x, alpha):
    """relu(x) - alpha * relu(-x): the PReLU layer's op (alpha broadcast against x)."""
    return apply(_R["prelu"], x, alpha)


# The C fast path in front of the common elementwise functions (engine/fast_path.py): plain
# float32 operands outside a tape skip the dispatch above; every other call runs it.
add = _fp.function(np.add, add)
subtract = _fp.function(np.subtract, subtract)
multiply = _fp.function(np.multiply, multiply)
divide = _fp.function(np.divide, divide)
maximum = _fp.function(np.maximum, maximum)
minimum = _fp.function(np.minimum, minimum)
power = _fp.function(np.power, power)
negative = _fp.function(np.negative, negative, _fp.UNARY)
exp = _fp.function(np.exp, exp, _fp.UNARY)
log = _fp.function(np.log, log, _fp.UNARY)
sqrt = _fp.function(np.sqrt, sqrt, _fp.UNARY)
square = _fp.function(np.square, square, _fp.UNARY)
absolute = abs = _fp.function(np.absolute, absolute, _fp.UNARY)  # noqa: A001
