"""Elementwise math beyond arithmetic: rounding, trigonometry, logarithms, reciprocal roots
(keras.ops names and signatures), and a few binary functions (arctan2, hypot, logaddexp...).

Each unary op is one small class built from a NumPy function and its derivative written in
terms of the input `x` and the output `y`. Float-valued functions of integer tensors give the
float dtype, as in Keras. Rounding ops (`sign`, `round`, `floor`, `ceil`, `trunc`) keep the
dtype and have a zero gradient (what Keras gives on jax and torch).
"""

import numpy as np

from fkeras.ops import shape_utils as su
from fkeras.ops.dtypes import cast, promote
from fkeras.ops.registry import REGISTRY as _R
from fkeras.ops.registry import Op, apply


class _Elementwise(Op):
    """y = fn(x); dx = g * deriv(x, y)."""

    fn = deriv = None

    def output_spec(self, x, **attrs):
        from fkeras.engine.keras_tensor import KerasTensor

        return KerasTensor(su.shape_of(x), getattr(x, "dtype", "float32"))

    def forward(self, dev, x, **attrs):
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            y = np.asarray(type(self).fn(x, **attrs))
        if y.dtype != x.dtype and x.dtype.kind == "f":
            y = y.astype(x.dtype)
        return y, (x, y)

    def backward(self, dev, saved, g, needs, **attrs):
        x, y = saved
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return (np.asarray(g * type(self).deriv(x, y, **attrs), dtype=g.dtype),)


def _define(name, fn, deriv):
    cls = type("".join(p.title() for p in name.split("_")), (_Elementwise,),
               {"name": name, "fn": staticmethod(fn), "deriv": staticmethod(deriv)})
    return cls


def _zero(x, y):
    return np.zeros_like(x)


_TABLE = {
    # name: (NumPy function, derivative from (x, y))
    "sin": (np.sin, lambda x, y: np.cos(x)),
    "cos": (np.cos, lambda x, y: -np.sin(x)),
    "tan": (np.tan, lambda x, y: 1.0 + y * y),
    "arcsin": (np.arcsin, lambda x, y: 1.0 / np.sqrt(1.0 - x * x)),
    "arccos": (np.arccos, lambda x, y: -1.0 / np.sqrt(1.0 - x * x)),
    "arctan": (np.arctan, lambda x, y: 1.0 / (1.0 + x * x)),
    "sinh": (np.sinh, lambda x, y: np.cosh(x)),
    "cosh": (np.cosh, lambda x, y: np.sinh(x)),
    "arcsinh": (np.arcsinh, lambda x, y: 1.0 / np.sqrt(x * x + 1.0)),
    "arccosh": (np.arccosh, lambda x, y: 1.0 / np.sqrt(x * x - 1.0)),
    "arctanh": (np.arctanh, lambda x, y: 1.0 / (1.0 - x * x)),
    "log1p": (np.log1p, lambda x, y: 1.0 / (1.0 + x)),
    "expm1": (np.expm1, lambda x, y: y + 1.0),
    "log2": (np.log2, lambda x, y: 1.0 / (x * np.log(2.0))),
    "log10": (np.log10, lambda x, y: 1.0 / (x * np.log(10.0))),
    "exp2": (np.exp2, lambda x, y: y * np.log(2.0)),
    "reciprocal": (np.reciprocal, lambda x, y: -y * y),
    "rsqrt": (lambda x: 1.0 / np.sqrt(x), lambda x, y: -0.5 * y * y * y),
    "cbrt": (np.cbrt, lambda x, y: 1.0 / (3.0 * y * y)),
    "deg2rad": (np.deg2rad, lambda x, y: np.full_like(x, np.pi / 180.0)),
    "rad2deg": (np.rad2deg, lambda x, y: np.full_like(x, 180.0 / np.pi)),
    "sign": (np.sign, _zero),
    "floor": (np.floor, _zero),
    "ceil": (np.ceil, _zero),
    "trunc": (np.trunc, _zero),
}
_KEEPS_DTYPE = {"sign", "floor", "ceil", "trunc"}
for _name, (_fn, _d) in _TABLE.items():
    _define(_name, _fn, _d)


class Round(_Elementwise):
    name = "round"
    fn = staticmethod(lambda x, decimals=0: np.round(x, decimals))
    deriv = staticmethod(lambda x, y, decimals=0: np.zeros_like(x))


def _float_input(x):
    dt = getattr(x, "dtype", None)
    if dt is None:
        x = np.asarray(x)
        dt = x.dtype
    if np.dtype(dt).kind in "iub":
        return cast(x, "float32")
    return x


def _unary_fn(name):
    op = _R[name]
    keeps = name in _KEEPS_DTYPE

    def fn(x):
        return apply(op, x if keeps else _float_input(x))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"Elementwise `{name}` of `x` (keras.ops.{name}); differentiable"
                  + (" (zero gradient)." if keeps else "."))
    return fn


sin = _unary_fn("sin")
cos = _unary_fn("cos")
tan = _unary_fn("tan")
arcsin = _unary_fn("arcsin")
arccos = _unary_fn("arccos")
arctan = _unary_fn("arctan")
sinh = _unary_fn("sinh")
cosh = _unary_fn("cosh")
arcsinh = _unary_fn("arcsinh")
arccosh = _unary_fn("arccosh")
arctanh = _unary_fn("arctanh")
log1p = _unary_fn("log1p")
expm1 = _unary_fn("expm1")
log2 = _unary_fn("log2")
log10 = _unary_fn("log10")
exp2 = _unary_fn("exp2")
reciprocal = _unary_fn("reciprocal")
rsqrt = _unary_fn("rsqrt")
cbrt = _unary_fn("cbrt")
deg2rad = _unary_fn("deg2rad")
rad2deg = _unary_fn("rad2deg")
sign = _unary_fn("sign")
floor = _unary_fn("floor")
ceil = _unary_fn("ceil")
trunc = _unary_fn("trunc")


def round(x, decimals=0):  # noqa: A001
    """`x` rounded half to even to `decimals` places (keras.ops.round); zero gradient."""
    return apply(_R["round"], x, decimals=int(decimals))


# ---- binary functions ----

class _BinaryMath(Op):
    fn = d1 = d2 = None

    def output_spec(self, a, b):
        return su.broadcast_shapes(su.shape_of(a), su.shape_of(b), self.name)

    def forward(self, dev, a, b):
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            y = np.asarray(type(self).fn(a, b))
        return y, (a, b, y)

    def backward(self, dev, saved, g, needs):
        a, b, y = saved
        cls = type(self)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            ga = su.unbroadcast(g * cls.d1(a, b, y), np.shape(a)) if needs[0] else None
            gb = su.unbroadcast(g * cls.d2(a, b, y), np.shape(b)) if needs[1] else None
        return ga, gb


class Arctan2(_BinaryMath):
    name = "arctan2"
    fn = staticmethod(np.arctan2)
    d1 = staticmethod(lambda a, b, y: b / (a * a + b * b))
    d2 = staticmethod(lambda a, b, y: -a / (a * a + b * b))


class Hypot(_BinaryMath):
    name = "hypot"
    fn = staticmethod(np.hypot)
    d1 = staticmethod(lambda a, b, y: a / y)
    d2 = staticmethod(lambda a, b, y: b / y)


class LogAddExp(_BinaryMath):
    name = "logaddexp"
    fn = staticmethod(np.logaddexp)
    d1 = staticmethod(lambda a, b, y: np.exp(a - y))
    d2 = staticmethod(lambda a, b, y: np.exp(b - y))


class Fmod(_BinaryMath):
    name = "fmod"
    fn = staticmethod(np.fmod)
    d1 = staticmethod(lambda a, b, y: np.ones_like(y))
    d2 = staticmethod(lambda a, b, y: -np.trunc(a / b))


class DivideNoNan(_BinaryMath):
    name = "divide_no_nan"
    fn = staticmethod(lambda a, b: np.where(b == 0, 0, a / np.where(b == 0, 1, b)))
    d1 = staticmethod(lambda a, b, y: np.where(b == 0, 0, 1.0 / np.where(b == 0, 1, b)))
    d2 = staticmethod(lambda a, b, y: np.where(b == 0, 0, -y / np.where(b == 0, 1, b)))


def _binary_float(name):
    op = _R[name]

    def fn(x1, x2):
        x1, x2 = promote(_float_input(x1), _float_input(x2))
        return apply(op, x1, x2)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise `{name}` of x1 and x2 with broadcasting (keras.ops.{name})."
    return fn


arctan2 = _binary_float("arctan2")
hypot = _binary_float("hypot")
logaddexp = _binary_float("logaddexp")
fmod = _binary_float("fmod")
divide_no_nan = _binary_float("divide_no_nan")


# ---- special functions and NumPy's float helpers ----

def _erf(x):
    # Abramowitz-Stegun 7.1.26 is too coarse for float64 checks: use math.erf per element.
    import math

    return np.vectorize(math.erf, otypes=[np.float64])(x)


def _erfc(x):
    import math

    return np.vectorize(math.erfc, otypes=[np.float64])(x)


_TWO_OVER_SQRT_PI = 2.0 / np.sqrt(np.pi)
_define("erf", _erf, lambda x, y: _TWO_OVER_SQRT_PI * np.exp(-x * x))
_define("erfc", _erfc, lambda x, y: -_TWO_OVER_SQRT_PI * np.exp(-x * x))


def _sinc_deriv(x, y):
    px = np.pi * x
    safe = np.where(px == 0, 1.0, px)
    return np.where(px == 0, 0.0, (np.cos(safe) - np.sin(safe) / safe) / np.where(x == 0, 1.0, x))


_define("sinc", np.sinc, _sinc_deriv)
erf = _unary_fn("erf")
erfc = _unary_fn("erfc")
sinc = _unary_fn("sinc")


def fabs(x):
    """|x| as a float tensor (keras.ops.fabs)."""
    from fkeras.ops.math import absolute

    return absolute(_float_input(x))


class _Fmax(_BinaryMath):
    name = "fmax"
    fn = staticmethod(np.fmax)
    d1 = staticmethod(lambda a, b, y: ((a >= b) | np.isnan(b)).astype(y.dtype))
    d2 = staticmethod(lambda a, b, y: ((b > a) | np.isnan(a)).astype(y.dtype))


class _Fmin(_BinaryMath):
    name = "fmin"
    fn = staticmethod(np.fmin)
    d1 = staticmethod(lambda a, b, y: ((a <= b) | np.isnan(b)).astype(y.dtype))
    d2 = staticmethod(lambda a, b, y: ((b < a) | np.isnan(a)).astype(y.dtype))


class LogAddExp2(_BinaryMath):
    name = "logaddexp2"
    fn = staticmethod(np.logaddexp2)
    d1 = staticmethod(lambda a, b, y: np.exp2(a - y))
    d2 = staticmethod(lambda a, b, y: np.exp2(b - y))


class Heaviside(_BinaryMath):
    name = "heaviside"
    fn = staticmethod(np.heaviside)
    d1 = staticmethod(lambda a, b, y: np.zeros_like(y))
    d2 = staticmethod(lambda a, b, y: (a == 0).astype(y.dtype))


fmax = _binary_float("fmax")
fmin = _binary_float("fmin")
logaddexp2 = _binary_float("logaddexp2")
heaviside = _binary_float("heaviside")


class NanToNum(_Elementwise):
    name = "nan_to_num"
    fn = staticmethod(lambda x, nan=0.0, posinf=None, neginf=None: np.nan_to_num(
        x, nan=nan, posinf=posinf, neginf=neginf))
    deriv = staticmethod(lambda x, y, nan=0.0, posinf=None, neginf=None:
                         np.isfinite(x).astype(x.dtype))


def nan_to_num(x, nan=0.0, posinf=None, neginf=None):
    """`x` with NaN and infinities replaced (keras.ops.nan_to_num); gradient 1 where finite."""
    dt = getattr(x, "dtype", None) or np.asarray(x).dtype
    if np.dtype(dt).kind != "f":
        return x
    return apply(_R["nan_to_num"], x, nan=float(nan),
                 posinf=None if posinf is None else float(posinf),
                 neginf=None if neginf is None else float(neginf))


def _erfinv(y):
    # Newton's method on erf(x) = y from Giles's single-precision approximation's start.
    y = np.asarray(y, np.float64)
    w = -np.log(np.clip((1.0 - y) * (1.0 + y), 1e-300, None))
    x = np.where(w < 5.0, np.sqrt(np.pi) / 2 * y * (1 + np.pi / 12 * y * y),
                 np.sign(y) * np.sqrt(w))
    for _ in range(60):
        err = _erf(x) - y
        x = x - err / (_TWO_OVER_SQRT_PI * np.exp(-x * x))
    return np.where(np.abs(y) >= 1.0, np.sign(y) * np.inf, x)


def _i1(x):
    # modified Bessel function of the first kind, order 1 (power series; |x| < ~20)
    x = np.asarray(x, np.float64)
    term = x / 2.0
    total = term.copy()
    for k in range(1, 60):
        term = term * (x * x / 4.0) / (k * (k + 1))
        total = total + term
    return total


_define("erfinv", _erfinv, lambda x, y: np.sqrt(np.pi) / 2.0 * np.exp(y * y))
_define("i0", np.i0, lambda x, y: _i1(x))
_define("angle", np.angle, lambda x, y: np.zeros_like(x))
erfinv = _unary_fn("erfinv")
i0 = _unary_fn("i0")
angle = _unary_fn("angle")
