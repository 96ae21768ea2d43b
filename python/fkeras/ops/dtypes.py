"""Dtype promotion for elementwise ops and operators, and `cast` (differentiable between floats).

fkeras's rule (Keras 3 on JAX with 64-bit types off, which is also what the Keras docs' result
type table gives; see docs/keras_compatibility.md):
- Python `bool`/`int`/`float` scalars are *weak*: they take the other operand's dtype when its
  kind can hold them (`int8 tensor + 100` stays int8; `float32 + 1.5` stays float32), and
  promote only across kinds (`int32 + 1.5` -> the float dtype, `bool + 1` -> int32). A Python
  int out of the tensor's range (`int8 tensor + 1000`) raises OverflowError (NumPy 2, JAX)
  instead of wrapping.
- Two arrays/tensors promote by NumPy's table for integers and bools (`int32 + int64` ->
  int64: integer data such as labels keeps its width; JAX without 64-bit types says int32),
  and a floating result is the device's float dtype (float32 on cpu): a NumPy float64 array
  never upcasts a float32 model, and `int32 / 2` is float32. float16 stays float16 with
  integers, bools and other float16s (as in JAX: the float operand's dtype wins).
"""

import numpy as np

from fkeras.backend import devices as _device
from fkeras.engine.tensor import Tensor
from fkeras.ops import shape_utils as su
from fkeras.ops.registry import Op, apply

_WEAK = {bool: "b", int: "i", float: "f"}


def _dtype_of(x):
    """(NumPy dtype or None, weak kind or None) of an operand."""
    kind = _WEAK.get(type(x))
    if kind is not None:
        return None, kind
    dt = getattr(x, "dtype", None)
    if dt is None:
        if x is None:
            raise TypeError("A tensor operand cannot be None.")
        return np.asarray(x).dtype, None
    try:
        return np.dtype(dt), None
    except TypeError:
        return None, None  # a non-NumPy dtype name (e.g. "string"): no promotion


def result_type(*operands):
    """The common dtype of `operands` under fkeras's promotion rule (a NumPy dtype)."""
    float_dtype = np.dtype(_device.get_device().dtype)
    strong, weak = [], set()
    for x in operands:
        dt, kind = _dtype_of(x)
        if kind is not None:
            weak.add(kind)
        elif dt is not None:
            strong.append(dt)
    if strong:
        r = strong[0]
        for dt in strong[1:]:
            r = np.promote_types(r, dt)
        if r.kind == "f":  # the float operands decide, not NumPy's int-to-float widening
            floats = [dt for dt in strong if dt.kind == "f"]
            return floats[0] if floats and all(dt == np.float16 for dt in floats) else float_dtype
    elif "f" in weak:
        return float_dtype
    elif "i" in weak:
        return np.dtype(np.int32)
    else:
        return np.dtype(np.bool_)
    if r.kind == "c":
        return r
    if "f" in weak:
        return float_dtype
    if "i" in weak and r.kind == "b":
        return np.dtype(np.int32)
    return r


def promote(x1, x2):
    """`(x1, x2)` converted to their common dtype (see the module docstring)."""
    # Fast paths (buffers or Tensors): same dtypes, or a float operand with a Python number.
    b1 = x1._value if type(x1) is Tensor else x1
    b2 = x2._value if type(x2) is Tensor else x2
    t1, t2 = type(b1), type(b2)
    if t1 is np.ndarray and t2 is np.ndarray and b1.dtype == b2.dtype:
        return x1, x2
    if t2 in _WEAK and t1 is np.ndarray and b1.dtype.kind == "f":
        return x1, x2
    if t1 in _WEAK and t2 is np.ndarray and b2.dtype.kind == "f":
        return x1, x2
    target = result_type(x1, x2)
    return _to(x1, target), _to(x2, target)


def _to(x, dtype):
    if type(x) in _WEAK or isinstance(x, np.generic):
        # Python and NumPy scalars become 0-d arrays of the common dtype (the registry would
        # give a bare NumPy integer scalar the float dtype).
        return np.asarray(x, dtype=dtype)
    dt, _ = _dtype_of(x)
    if dt is None or dt == dtype:
        return x
    return cast(x, dtype)


class Cast(Op):
    name = "cast"

    def output_spec(self, x, dtype=None):
        from fkeras.engine.keras_tensor import KerasTensor

        return KerasTensor(su.shape_of(x), np.dtype(dtype).name)

    def forward(self, dev, x, dtype=None):
        return np.asarray(x).astype(dtype), np.asarray(x).dtype

    def backward(self, dev, in_dtype, g, needs, dtype=None):
        if in_dtype.kind not in "fc":
            return (None,)
        return (np.asarray(g).astype(in_dtype, copy=False),)


class RoundToBfloat16(Op):
    """`cast(x, "bfloat16")`: the values rounded to bfloat16 (to nearest even), kept in the
    float32 storage fkeras computes in (see dtype_policies.py); the gradient passes through,
    as a cast's does."""

    name = "round_to_bfloat16"

    def output_spec(self, x):
        from fkeras.engine.keras_tensor import KerasTensor

        return KerasTensor(su.shape_of(x), "float32")

    def forward(self, dev, x):
        return round_to_bfloat16(np.asarray(x, dtype=np.float32)), None

    def backward(self, dev, saved, g, needs):
        return (g,)


def round_to_bfloat16(x):
    """float32 `x` rounded to the nearest bfloat16 value (ties to even; NaN stays NaN, values
    past bfloat16's range become inf), as float32."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    bits = x.view(np.uint32)
    rounded = ((bits + np.uint32(0x7FFF) + ((bits >> 16) & np.uint32(1)))
               & np.uint32(0xFFFF0000)).view(np.float32)
    return np.where(np.isnan(x), x, rounded)


# Python types as Keras names them (keras.backend.standardize_dtype).


def standardize_dtype(dtype):
    """A dtype name string ("float32", "int64", "bool", "string", ...) for any dtype-like;
    None gives `config.floatx()`. Mixed-precision policy names pass through."""
    if dtype is None:
        from fkeras import config

        return config.floatx()
    from fkeras.engine.dtypes import standardize_dtype as standardize

    # ops also take NumPy's spellings that Keras's Input refuses.
    return standardize(_LENIENT.get(dtype, dtype) if isinstance(dtype, str) else dtype,
                       allow_policy=True)


_LENIENT = {"float": "float32", "bool_": "bool"}


def cast(x, dtype):
    """`x` converted to `dtype` (keras.ops.cast); differentiable from and to floating types."""
    name = standardize_dtype(dtype)
    if name == "string":
        raise ValueError("`cast` does not support the 'string' dtype.")
    if name == "bfloat16":  # bfloat16 values in float32 storage (dtype_policies.py)
        return apply(_R["round_to_bfloat16"], cast(x, "float32"))
    target = np.dtype(name)
    if target.kind == "f" and target != np.float16:
        target = np.dtype(_device.get_device().dtype) if name == "float32" else target
    return apply(_CAST, x, dtype=target)


from fkeras.ops.registry import REGISTRY as _R  # noqa: E402

_CAST = _R["cast"]
