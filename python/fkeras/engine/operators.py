"""Python's operator protocol for eager values (Tensor and Variable), routed through fkeras.ops.

Every operator is the `fkeras.ops` function of the same name, so it follows the ops' dtype
promotion and shape checks and is recorded on an active GradientTape. NumPy meeting one of
these values (`ndarray - t`, `np.exp(t)`) goes through `__array_ufunc__` to the same ops.
"""

import numpy as np

_OPS = []


def _ops():
    if not _OPS:
        from fkeras import ops

        _OPS.append(ops)
    return _OPS[0]


def _ufunc(self, ufunc, method, *inputs, **kwargs):
    if method == "__call__" and not kwargs:
        from fkeras.ops.ufuncs import UFUNC_OPS

        fn = UFUNC_OPS.get(ufunc)
        if fn is not None:
            return fn(*inputs)
    _refuse_if_watched(ufunc, method, inputs)
    args = [np.asarray(x) if isinstance(x, TensorOperators) else x for x in inputs]
    return getattr(ufunc, method)(*args, **kwargs)


def _refuse_if_watched(ufunc, method, inputs):
    # A NumPy ufunc without an fkeras op computes on the buffers, off the tape: on a value the
    # active tape differentiates, that would silently cut the gradient (torch raises too).
    from fkeras.engine.tape import current_tape

    tape = current_tape()
    if tape is None:
        return
    for x in inputs:
        buf = getattr(x, "_value", None)
        if buf is None:  # not an eager value (a KerasTensor, a number, an ndarray)
            continue
        variable_read = (getattr(x, "trainable", False) and tape.watch_accessed_variables
                         and buf.dtype.kind == "f")  # a trainable Variable is watched on read
        if id(buf) in tape._tracked or variable_read:
            name = ufunc.__name__ if method == "__call__" else f"{ufunc.__name__}.{method}"
            raise TypeError(
                f"`np.{name}` has no fkeras op: on a tensor that a GradientTape "
                "differentiates it would cut the gradient. Use the `fkeras.ops` function "
                f"of the same name (e.g. `fkeras.ops.{ufunc.__name__}`) instead.")


def _function_ops():
    ops = _ops()

    def reduction(fn):
        def call(a, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
            if dtype is not None or out is not None or kwargs:
                raise TypeError("NumPy-only arguments")
            return fn(a, axis=axis, keepdims=keepdims)
        return call

    def plain(fn, *names):
        def call(*args, **kwargs):
            if set(kwargs) - set(names):
                raise TypeError("NumPy-only arguments")
            return fn(*args, **kwargs)
        return call

    return {
        np.clip: plain(lambda a, lo, hi: ops.clip(a, lo, hi)),
        np.where: plain(lambda c, x, y: ops.where(c, x, y)),
        np.concatenate: plain(lambda xs, axis=0: ops.concatenate(list(xs), axis=axis), "axis"),
        np.reshape: plain(lambda a, shape: ops.reshape(a, shape)),
        np.transpose: plain(lambda a, axes=None: ops.transpose(a, axes), "axes"),
        np.squeeze: plain(lambda a, axis=None: ops.squeeze(a, axis), "axis"),
        np.expand_dims: plain(lambda a, axis: ops.expand_dims(a, axis), "axis"),
        np.matmul: plain(ops.matmul),
        np.sum: reduction(ops.sum), np.mean: reduction(ops.mean),
        np.max: reduction(ops.max), np.min: reduction(ops.min),
        np.amax: reduction(ops.max), np.amin: reduction(ops.min),
    }


_FUNCTIONS = []


def _array_function(self, func, types, args, kwargs):
    # NumPy functions on eager values (np.clip(t, ...), np.concatenate([t, u])) run as fkeras
    # ops where one exists; any other function computes on the buffers, refused when that
    # would cut the gradient of a value the active tape differentiates.
    if not _FUNCTIONS:
        _FUNCTIONS.append(_function_ops())
    fn = _FUNCTIONS[0].get(func)
    if fn is not None:
        try:
            return fn(*args, **kwargs)
        except TypeError:
            pass  # NumPy-only arguments: computed by NumPy below
    result = func(*_to_numpy_args(args), **_to_numpy_args(kwargs))
    if _is_floating(result):  # shapes, indices and bools carry no gradient anyway
        leaves = []
        _collect(args, leaves)
        _collect(kwargs, leaves)
        _refuse_if_watched(func, "__call__", leaves)
    return result


def _is_floating(x):
    if isinstance(x, (list, tuple)):
        return any(_is_floating(i) for i in x)
    dt = getattr(x, "dtype", None)
    return dt is not None and np.dtype(dt).kind in "fc"


def _collect(x, out):
    if isinstance(x, (list, tuple)):
        for item in x:
            _collect(item, out)
    elif isinstance(x, dict):
        for item in x.values():
            _collect(item, out)
    elif isinstance(x, TensorOperators):
        out.append(x)


def _to_numpy_args(x):
    if isinstance(x, (list, tuple)):
        return type(x)(_to_numpy_args(i) for i in x)
    if isinstance(x, dict):
        return {k: _to_numpy_args(v) for k, v in x.items()}
    return np.asarray(x) if isinstance(x, TensorOperators) else x


class TensorOperators:
    """Mixin: arithmetic, comparison, bitwise and indexing operators as fkeras ops."""

    __slots__ = ()
    __array_priority__ = 1000
    __array_ufunc__ = _ufunc
    __array_function__ = _array_function

    def __add__(self, other):
        return _ops().add(self, other)

    def __radd__(self, other):
        return _ops().add(other, self)

    def __sub__(self, other):
        return _ops().subtract(self, other)

    def __rsub__(self, other):
        return _ops().subtract(other, self)

    def __mul__(self, other):
        return _ops().multiply(self, other)

    def __rmul__(self, other):
        return _ops().multiply(other, self)

    def __truediv__(self, other):
        return _ops().divide(self, other)

    def __rtruediv__(self, other):
        return _ops().divide(other, self)

    def __floordiv__(self, other):
        return _ops().floor_divide(self, other)

    def __rfloordiv__(self, other):
        return _ops().floor_divide(other, self)

    def __mod__(self, other):
        return _ops().mod(self, other)

    def __rmod__(self, other):
        return _ops().mod(other, self)

    def __pow__(self, other):
        return _ops().power(self, other)

    def __rpow__(self, other):
        return _ops().power(other, self)

    def __matmul__(self, other):
        return _ops().matmul(self, other)

    def __rmatmul__(self, other):
        return _ops().matmul(other, self)

    def __neg__(self):
        return _ops().negative(self)

    def __abs__(self):
        return _ops().absolute(self)

    def __invert__(self):
        return _ops().logical_not(self) if _is_bool(self) else _ops().bitwise_invert(self)

    def __eq__(self, other):
        if other is None:  # `x == None` is False, as for torch and TF tensors
            return False
        return _ops().equal(self, other)

    def __ne__(self, other):
        if other is None:
            return True
        return _ops().not_equal(self, other)

    def __lt__(self, other):
        return _ops().less(self, other)

    def __le__(self, other):
        return _ops().less_equal(self, other)

    def __gt__(self, other):
        return _ops().greater(self, other)

    def __ge__(self, other):
        return _ops().greater_equal(self, other)

    def __and__(self, other):
        return _logic("and", self, other)

    def __rand__(self, other):
        return _logic("and", other, self)

    def __or__(self, other):
        return _logic("or", self, other)

    def __ror__(self, other):
        return _logic("or", other, self)

    def __xor__(self, other):
        return _logic("xor", self, other)

    def __rxor__(self, other):
        return _logic("xor", other, self)

    def __getitem__(self, key):
        return _ops().getitem(self, key)

    def __round__(self, ndigits=None):
        # Elementwise, half to even, as keras.Variable's; its gradient is zero, so it is not
        # recorded (an unconnected result).
        from fkeras.engine.tensor import _MODE, Tensor

        out = np.round(np.asarray(self), ndigits or 0)
        return out if _MODE.array else Tensor(out)

    # ---- NumPy-style methods (differentiable; jax arrays and torch tensors have them) ----
    @property
    def T(self):
        return _ops().transpose(self)

    def reshape(self, *shape):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return _ops().reshape(self, shape)

    def transpose(self, *axes):
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = tuple(axes[0])
        return _ops().transpose(self, axes or None)

    def astype(self, dtype):
        return _ops().cast(self, dtype)

    def sum(self, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
        if out is not None or dtype is not None or kwargs:  # NumPy-only arguments
            return np.sum(np.asarray(self), axis=axis, dtype=dtype, out=out,
                            keepdims=keepdims, **kwargs)
        return _ops().sum(self, axis=axis, keepdims=keepdims)

    def mean(self, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
        if out is not None or dtype is not None or kwargs:  # NumPy-only arguments
            return np.mean(np.asarray(self), axis=axis, dtype=dtype, out=out,
                            keepdims=keepdims, **kwargs)
        return _ops().mean(self, axis=axis, keepdims=keepdims)

    def max(self, axis=None, out=None, keepdims=False, **kwargs):
        if out is not None or kwargs:  # NumPy-only arguments
            return np.max(np.asarray(self), axis=axis, out=out,
                            keepdims=keepdims, **kwargs)
        return _ops().max(self, axis=axis, keepdims=keepdims)

    def min(self, axis=None, out=None, keepdims=False, **kwargs):
        if out is not None or kwargs:  # NumPy-only arguments
            return np.min(np.asarray(self), axis=axis, out=out,
                            keepdims=keepdims, **kwargs)
        return _ops().min(self, axis=axis, keepdims=keepdims)

    def squeeze(self, axis=None):
        return _ops().squeeze(self, axis=axis)


def _logic(kind, a, b):
    # bool operands: logical; integer operands: bitwise (NumPy and torch semantics).
    if _is_bool(a) and _is_bool(b):
        return getattr(_ops(), f"logical_{kind}")(a, b)
    return getattr(_ops(), f"bitwise_{kind}")(a, b)


def _is_bool(x):
    if isinstance(x, bool):
        return True
    dt = getattr(x, "dtype", None)
    return dt is not None and np.dtype(dt) == np.bool_


def _install_fast_path(cls):
    # The common operators with the C fast path in front of the methods above (fast_path.py).
    from fkeras.engine import fast_path as fp

    table = {
        "__add__": (np.add, fp.BINARY), "__radd__": (np.add, fp.BINARY_REFLECTED),
        "__sub__": (np.subtract, fp.BINARY), "__rsub__": (np.subtract, fp.BINARY_REFLECTED),
        "__mul__": (np.multiply, fp.BINARY), "__rmul__": (np.multiply, fp.BINARY_REFLECTED),
        "__truediv__": (np.divide, fp.BINARY),
        "__rtruediv__": (np.divide, fp.BINARY_REFLECTED),
        "__pow__": (np.power, fp.BINARY), "__rpow__": (np.power, fp.BINARY_REFLECTED),
        "__lt__": (np.less, fp.BINARY), "__le__": (np.less_equal, fp.BINARY),
        "__gt__": (np.greater, fp.BINARY), "__ge__": (np.greater_equal, fp.BINARY),
        "__eq__": (np.equal, fp.BINARY), "__ne__": (np.not_equal, fp.BINARY),
        "__neg__": (np.negative, fp.UNARY), "__abs__": (np.absolute, fp.UNARY),
        "__getitem__": (None, fp.GETITEM),
    }
    for name, (ufunc, kind) in table.items():
        setattr(cls, name, fp.method(ufunc, cls.__dict__[name], kind))


_install_fast_path(TensorOperators)
