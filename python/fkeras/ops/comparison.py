"""Comparisons, logical and bitwise ops, floor division and remainder (keras.ops names).

Comparisons and logical/bitwise ops return bool (or integer) tensors and pass no gradient, as
in Keras. `floor_divide` has a zero gradient almost everywhere (Keras/JAX give zeros);
`mod`'s gradient is 1 for x1 and -floor(x1 / x2) for x2.
"""

import numpy as np

from fkeras.engine import fast_path as _fp
from fkeras.ops import shape_utils as su
from fkeras.ops.dtypes import promote
from fkeras.ops.registry import Op, apply


class _NonDifferentiable(Op):
    differentiable = False
    fn = None
    out_dtype = "bool"

    def output_spec(self, *xs):
        from fkeras.engine.keras_tensor import KerasTensor

        shape = su.shape_of(xs[0])
        for x in xs[1:]:
            shape = su.broadcast_shapes(shape, su.shape_of(x), self.name)
        dtype = self.out_dtype or getattr(xs[0], "dtype", "float32")
        return KerasTensor(shape, dtype)

    def forward(self, dev, *xs):
        return np.asarray(type(self).fn(*xs)), None


def _comparison(op_name, ufunc):
    return type(op_name.title().replace("_", ""), (_NonDifferentiable,),
                {"name": op_name, "fn": staticmethod(ufunc)})


Equal = _comparison("equal", np.equal)
NotEqual = _comparison("not_equal", np.not_equal)
Less = _comparison("less", np.less)
LessEqual = _comparison("less_equal", np.less_equal)
Greater = _comparison("greater", np.greater)
GreaterEqual = _comparison("greater_equal", np.greater_equal)
LogicalAnd = _comparison("logical_and", np.logical_and)
LogicalOr = _comparison("logical_or", np.logical_or)
LogicalXor = _comparison("logical_xor", np.logical_xor)
LogicalNot = _comparison("logical_not", np.logical_not)
IsNan = _comparison("isnan", np.isnan)
IsInf = _comparison("isinf", np.isinf)
IsFinite = _comparison("isfinite", np.isfinite)


class _Bitwise(_NonDifferentiable):
    out_dtype = None

    def forward(self, dev, *xs):
        for x in xs:
            if np.asarray(x).dtype.kind not in "iub":
                raise TypeError(f"`{self.name}` needs integer or bool tensors; received dtype "
                                f"{np.asarray(x).dtype}.")
        return np.asarray(type(self).fn(*xs)), None


def _bitwise(op_name, ufunc):
    return type(op_name.title().replace("_", ""), (_Bitwise,),
                {"name": op_name, "fn": staticmethod(ufunc)})


BitwiseAnd = _bitwise("bitwise_and", np.bitwise_and)
BitwiseOr = _bitwise("bitwise_or", np.bitwise_or)
BitwiseXor = _bitwise("bitwise_xor", np.bitwise_xor)
BitwiseInvert = _bitwise("bitwise_invert", np.invert)


class FloorDivide(Op):
    name = "floor_divide"

    def output_spec(self, a, b):
        return su.broadcast_shapes(su.shape_of(a), su.shape_of(b), self.name)

    def forward(self, dev, a, b):
        if a.dtype.kind in "iu" and b.dtype.kind in "iu" and np.any(b == 0):
            raise ZeroDivisionError("`floor_divide`: integer division by zero.")
        return np.floor_divide(a, b), (a.shape, b.shape, a.dtype, b.dtype)

    def backward(self, dev, saved, g, needs):
        sa, sb, da, db = saved
        return (np.zeros(sa, da) if needs[0] else None, np.zeros(sb, db) if needs[1] else None)


class Mod(Op):
    name = "mod"

    def output_spec(self, a, b):
        return su.broadcast_shapes(su.shape_of(a), su.shape_of(b), self.name)

    def forward(self, dev, a, b):
        if a.dtype.kind in "iu" and b.dtype.kind in "iu" and np.any(b == 0):
            raise ZeroDivisionError("`mod`: integer modulo by zero.")
        return np.mod(a, b), (a, b)

    def backward(self, dev, saved, g, needs):
        a, b = saved
        ga = su.unbroadcast(g, a.shape) if needs[0] else None
        gb = su.unbroadcast(-g * np.floor_divide(a, b), b.shape) if needs[1] else None
        return ga, gb


from fkeras.ops.registry import REGISTRY as _R  # noqa: E402


def _binary(name):
    op = _R[name]

    def fn(x1, x2):
        return apply(op, *promote(x1, x2))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise `{name}` of x1 and x2 with broadcasting (keras.ops.{name})."
    return fn


def _unary(name):
    op = _R[name]

    def fn(x):
        return apply(op, x)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise `{name}` of x (keras.ops.{name})."
    return fn


# With the C fast path in front (engine/fast_path.py).
equal = _fp.function(np.equal, _binary("equal"))
not_equal = _fp.function(np.not_equal, _binary("not_equal"))
less = _fp.function(np.less, _binary("less"))
less_equal = _fp.function(np.less_equal, _binary("less_equal"))
greater = _fp.function(np.greater, _binary("greater"))
greater_equal = _fp.function(np.greater_equal, _binary("greater_equal"))
logical_and = _binary("logical_and")
logical_or = _binary("logical_or")
logical_xor = _binary("logical_xor")
logical_not = _unary("logical_not")
isnan = _unary("isnan")
isinf = _unary("isinf")
isfinite = _unary("isfinite")
def bitwise_and(x, y):
    """Elementwise bitwise AND of integer or bool tensors (keras.ops.bitwise_and)."""
    return apply(_R["bitwise_and"], *promote(x, y))


def bitwise_or(x, y):
    """Elementwise bitwise OR of integer or bool tensors (keras.ops.bitwise_or)."""
    return apply(_R["bitwise_or"], *promote(x, y))


def bitwise_xor(x, y):
    """Elementwise bitwise XOR of integer or bool tensors (keras.ops.bitwise_xor)."""
    return apply(_R["bitwise_xor"], *promote(x, y))


bitwise_invert = _unary("bitwise_invert")
bitwise_not = bitwise_invert
floor_divide = _binary("floor_divide")
mod = _binary("mod")
