"""Integer ops (keras.ops names and signatures): left_shift, right_shift (and their bitwise_
aliases), gcd, lcm, ldexp, nextafter, saturate_cast. None passes a gradient except `ldexp`
(through x1) and `saturate_cast` (between floats, zero where clipped)."""

import numpy as np

from fkeras.ops.comparison import _Bitwise, _NonDifferentiable
from fkeras.ops.dtypes import cast, promote, standardize_dtype
from fkeras.ops.registry import REGISTRY as _R
from fkeras.ops.registry import apply


def _integer_op(op_name, ufunc):
    return type(op_name.title().replace("_", ""), (_Bitwise,),
                {"name": op_name, "fn": staticmethod(ufunc)})


LeftShift = _integer_op("left_shift", np.left_shift)
RightShift = _integer_op("right_shift", np.right_shift)
Gcd = _integer_op("gcd", np.gcd)
Lcm = _integer_op("lcm", np.lcm)


class NextAfter(_NonDifferentiable):
    name = "nextafter"
    out_dtype = None
    fn = staticmethod(np.nextafter)


def _binary(name):
    def fn(x1, x2):
        return apply(_R[name], *promote(x1, x2))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise `{name}` of integer tensors x1 and x2 (keras.ops.{name})."
    return fn


def left_shift(x, y):
    """Elementwise `x << y` of integer tensors (keras.ops.left_shift)."""
    return apply(_R["left_shift"], *promote(x, y))


def right_shift(x, y):
    """Elementwise `x >> y` of integer tensors (keras.ops.right_shift)."""
    return apply(_R["right_shift"], *promote(x, y))


bitwise_left_shift = left_shift
bitwise_right_shift = right_shift
gcd = _binary("gcd")
lcm = _binary("lcm")


def nextafter(x1, x2):
    """The next float after x1 towards x2 (keras.ops.nextafter); not differentiable."""
    from fkeras.ops.elementwise import _float_input

    return apply(_R["nextafter"], *promote(_float_input(x1), _float_input(x2)))


def ldexp(x1, x2):
    """x1 * 2**x2 for integer x2 (keras.ops.ldexp); differentiable in x1."""
    from fkeras.ops.elementwise import _float_input
    from fkeras.ops.math import multiply

    exponent = np.asarray(getattr(x2, "_value", x2))
    if exponent.dtype.kind not in "iu":
        raise TypeError(f"`ldexp`: x2 must be an integer tensor; received dtype "
                        f"{exponent.dtype}.")
    return multiply(_float_input(x1), np.exp2(exponent).astype(np.float32))


def saturate_cast(x, dtype):
    """`x` clipped to the range of `dtype`, then cast (keras.ops.saturate_cast)."""
    from fkeras.ops.math import clip

    target = np.dtype(standardize_dtype(dtype))
    if target.kind in "iu":
        info = np.iinfo(target)
    elif target.kind == "f":
        info = np.finfo(target)
    else:
        return cast(x, dtype)
    src = np.dtype(getattr(x, "dtype", None) or np.asarray(x).dtype)
    if src.kind in "iu" and target.kind in "iu":
        src_info = np.iinfo(src)
        lo, hi = max(int(info.min), int(src_info.min)), min(int(info.max), int(src_info.max))
        return cast(clip(x, lo, hi), dtype)
    if src.kind == "f" and target.kind in "iu":
        # the largest value of the source float type that does not exceed the integer max
        hi = src.type(info.max)
        if int(hi) > int(info.max):
            hi = np.nextafter(hi, src.type(0))
        return cast(clip(x, float(info.min), float(hi)), dtype)
    return cast(clip(x, float(info.min), float(info.max)), dtype)
