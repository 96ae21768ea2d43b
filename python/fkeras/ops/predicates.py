"""Elementwise predicates (keras.ops names and signatures): isclose, allclose, isin, isneginf,
isposinf, isreal, signbit; and the complex-number accessors real, imag, conj/conjugate, which
fkeras (real-valued tensors only) gives as the identity or zeros.

Predicates return bool tensors and pass no gradient (`differentiable = False`).
"""

import numpy as np

from fkeras.ops.comparison import _NonDifferentiable
from fkeras.ops.dtypes import promote
from fkeras.ops.registry import REGISTRY as _R
from fkeras.ops.registry import apply


class IsClose(_NonDifferentiable):
    name = "isclose"

    def output_spec(self, a, b, **attrs):
        return super().output_spec(a, b)

    def forward(self, dev, a, b, rtol=1e-5, atol=1e-8, equal_nan=False):
        return np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan), None


class IsIn(_NonDifferentiable):
    name = "isin"

    def output_spec(self, x, values, **attrs):
        return super().output_spec(x)

    def forward(self, dev, x, values, invert=False):
        return np.isin(x, values, invert=invert), None


def _predicate(op_name, fn):
    return type(op_name.title().replace("_", ""), (_NonDifferentiable,),
                {"name": op_name, "fn": staticmethod(fn)})


IsNegInf = _predicate("isneginf", np.isneginf)
IsPosInf = _predicate("isposinf", np.isposinf)
IsReal = _predicate("isreal", np.isreal)
SignBit = _predicate("signbit", np.signbit)


def isclose(x1, x2, rtol=1e-5, atol=1e-8, equal_nan=False):
    """|x1 - x2| <= atol + rtol * |x2|, elementwise (keras.ops.isclose)."""
    return apply(_R["isclose"], *promote(x1, x2), rtol=float(rtol), atol=float(atol),
                 equal_nan=bool(equal_nan))


def allclose(x1, x2, rtol=1e-5, atol=1e-8, equal_nan=False):
    """True when every element of x1 and x2 is close (keras.ops.allclose)."""
    from fkeras.ops.reductions import all as _all

    return _all(isclose(x1, x2, rtol=rtol, atol=atol, equal_nan=equal_nan))


def isin(x1, x2, assume_unique=False, invert=False):
    """Whether each element of x1 is in x2 (keras.ops.isin)."""
    values = np.asarray(getattr(x2, "_value", x2)).ravel()
    return apply(_R["isin"], x1, values, invert=bool(invert))


def isneginf(x):
    """x == -inf, elementwise (keras.ops.isneginf)."""
    return apply(_R["isneginf"], x)


def isposinf(x):
    """x == +inf, elementwise (keras.ops.isposinf)."""
    return apply(_R["isposinf"], x)


def isreal(x):
    """True everywhere for fkeras's real tensors (keras.ops.isreal)."""
    return apply(_R["isreal"], x)


def signbit(x):
    """Whether the sign bit is set (x < 0, or -0.0) (keras.ops.signbit)."""
    return apply(_R["signbit"], x)


def _is_complex(x):
    return "complex" in str(getattr(x, "dtype", None) or np.asarray(x).dtype)


def real(x):
    """The real part (keras.ops.real): a complex tensor's real values (float); `x` itself for a
    real tensor."""
    if _is_complex(x):
        from fkeras.ops.views import view_as_real

        return view_as_real(x)[..., 0]
    from fkeras.ops.core import convert_to_tensor

    return convert_to_tensor(x)


def imag(x):
    """The imaginary part (keras.ops.imag): a complex tensor's imaginary values (float); zeros
    for a real tensor."""
    if _is_complex(x):
        from fkeras.ops.views import view_as_real

        return view_as_real(x)[..., 1]
    from fkeras.ops.creation import zeros_like

    return zeros_like(x)


def conj(x):
    """The complex conjugate (keras.ops.conj); `x` itself for a real tensor."""
    if _is_complex(x):
        from fkeras.ops.math import negative
        from fkeras.ops.arrangement import stack
        from fkeras.ops.views import view_as_complex, view_as_real

        pairs = view_as_real(x)
        return view_as_complex(stack([pairs[..., 0], negative(pairs[..., 1])], axis=-1))
    return real(x)


conjugate = conj
