"""Bit-level views and complex numbers (keras.ops.view, view_as_complex, view_as_real, polar).

fkeras's gradients are real: these ops are not recorded on the tape (a complex result has no
gradient path back to its real inputs), which is said here and by `differentiable = False`.
"""

import numpy as np

from fkeras.ops import shape_utils as su
from fkeras.ops.registry import Op, apply

_COMPLEX_OF = {np.dtype("float32"): np.complex64, np.dtype("float64"): np.complex128,
               np.dtype("float16"): np.complex64}


class View(Op):
    name = "view"
    differentiable = False

    def output_spec(self, x, dtype=None):
        shape = list(su.shape_of(x))
        if dtype is None:
            return tuple(shape)
        old, new = np.dtype(x.dtype).itemsize, np.dtype(dtype).itemsize
        if shape and shape[-1] is not None:
            shape[-1] = shape[-1] * old // new
        from fkeras.engine.keras_tensor import KerasTensor

        return KerasTensor(tuple(shape), str(np.dtype(dtype)))

    def forward(self, dev, x, dtype=None):
        x = np.ascontiguousarray(x)
        if dtype is None:
            return x.copy(), None
        target = np.dtype(dtype)
        if x.ndim == 0 and target.itemsize != x.dtype.itemsize:
            raise ValueError(f"view: a scalar of {x.dtype} cannot be viewed as {target} "
                             "(different item sizes).")
        if x.ndim and (x.shape[-1] * x.dtype.itemsize) % target.itemsize:
            raise ValueError(f"view: the last axis ({x.shape[-1]} x {x.dtype.itemsize} bytes) "
                             f"does not divide into {target} items.")
        return x.view(target).copy(), None


class ViewAsComplex(Op):
    name = "view_as_complex"
    differentiable = False

    def output_spec(self, x):
        shape = su.shape_of(x)
        from fkeras.engine.keras_tensor import KerasTensor

        return KerasTensor(tuple(shape[:-1]), "complex64")

    def forward(self, dev, x):
        if x.ndim == 0 or x.shape[-1] != 2:
            raise ValueError("view_as_complex: the last axis must have size 2 (real, imag). "
                             f"Received: x.shape={x.shape}")
        x = np.ascontiguousarray(x, dtype=np.float64 if x.dtype == np.float64 else np.float32)
        return x.view(_COMPLEX_OF[x.dtype])[..., 0].copy(), None


class ViewAsReal(Op):
    name = "view_as_real"
    differentiable = False

    def output_spec(self, x):
        return tuple(su.shape_of(x)) + (2,)

    def forward(self, dev, x):
        if x.dtype.kind != "c":
            raise ValueError(f"view_as_real: expects a complex tensor. Received dtype "
                             f"{x.dtype}.")
        return np.stack([x.real, x.imag], axis=-1), None


class Polar(Op):
    name = "polar"
    differentiable = False

    def output_spec(self, abs_, angle):
        return su.broadcast_shapes(su.shape_of(abs_), su.shape_of(angle), "polar")

    def forward(self, dev, abs_, angle):
        dtype = np.result_type(abs_, angle)
        out = abs_ * np.exp(1j * angle.astype(np.float64 if dtype == np.float64 else
                                              np.float32))
        return out.astype(_COMPLEX_OF.get(np.dtype(dtype), np.complex64)), None


def view(x, dtype=None):
    """The bytes of `x` read as `dtype` (the last axis scales by the item-size ratio)."""
    return apply(_R["view"], x, dtype=None if dtype is None else str(np.dtype(dtype)))


def view_as_complex(x):
    """(..., 2) real pairs -> (...) complex values (complex64 for float32)."""
    return apply(_R["view_as_complex"], x)


def view_as_real(x):
    """(...) complex values -> (..., 2) (real, imag) pairs."""
    return apply(_R["view_as_real"], x)


def polar(abs_, angle):
    """The complex numbers `abs_ * exp(1j * angle)`."""
    return apply(_R["polar"], abs_, angle)


from fkeras.ops.registry import REGISTRY as _R  # noqa: E402
