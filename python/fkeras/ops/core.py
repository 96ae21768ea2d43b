"""keras.ops core functions: conversions between NumPy, tensors and variables, shapes, dtypes.

`convert_to_tensor` gives the eager Tensor type (no copy when the dtype already matches);
`convert_to_numpy` gives a NumPy array. `shape` is a tuple of ints (None for unknown symbolic
dimensions), as in Keras 3.
"""

import numpy as np

from fkeras.backend import devices as _device
from fkeras.engine.keras_tensor import KerasTensor
from fkeras.engine.tensor import Tensor, in_array_mode
from fkeras.engine.variable import Variable
from fkeras.ops.dtypes import cast, standardize_dtype


def convert_to_tensor(x, dtype=None, sparse=None, ragged=None):
    """`x` (array-like, Tensor or Variable) as a Tensor, cast to `dtype` when given.

    Floating NumPy data becomes the device's float dtype (float32), integers and bools keep
    theirs, as fkeras computes in float32; Python ints (a scalar, lists) become int32 when
    they fit, as in Keras 3.
    """
    if isinstance(x, KerasTensor):
        return x if dtype is None else cast(x, dtype)
    if isinstance(x, Variable):
        value = x.value
        return value if dtype is None else cast(value, dtype)
    if type(x) is Tensor:
        if dtype is None or x.dtype == np.dtype(standardize_dtype(dtype)):
            return x
        return cast(x, dtype)
    if not isinstance(x, np.ndarray) and _device.is_buffer(x):  # a non-host device's buffer
        t = x if in_array_mode() else Tensor(x)
        return t if dtype is None else cast(t, dtype)
    if dtype is not None and standardize_dtype(dtype) == "string":
        arr = np.asarray(x, dtype=object)
    else:
        arr = np.asarray(x)
        if dtype is not None:
            name = standardize_dtype(dtype)
            arr = arr.astype(_device.get_device().dtype if name == "float32" else name,
                             copy=False)
        elif arr.dtype.kind == "f":
            dev = _device.get_device()
            arr = dev.asarray(arr) if dev.is_host else arr.astype(dev.dtype, copy=False)
        elif arr.dtype.kind in "USO":
            raise ValueError(f"`convert_to_tensor` received non-numeric data of dtype "
                             f"{arr.dtype}; pass dtype='string' for strings.")
        elif arr.dtype == np.int64 and isinstance(x, (int, list, tuple)) and arr.size \
                and -2**31 <= arr.min() and arr.max() < 2**31:
            arr = arr.astype(np.int32)  # Python ints: int32, as Keras 3 on every backend
    if not arr.flags.c_contiguous:
        arr = np.ascontiguousarray(arr)
    dev = _device.get_device()
    if not dev.is_host and arr.dtype.kind in "fiub":
        arr = dev.upload(arr)  # created under a device scope: on that device (Keras 3)
    return arr if in_array_mode() else Tensor(arr)


def convert_to_numpy(x):
    """`x` as a NumPy array (Tensors and Variables give their values)."""
    if isinstance(x, KerasTensor):
        raise ValueError("A KerasTensor is symbolic: it's a placeholder for a shape and a "
                         "dtype. It doesn't have any actual numerical value. You cannot "
                         "convert it to a NumPy array.")
    return _device.host_array(x)


def is_tensor(x):
    """True for eager Tensors and symbolic KerasTensors (not Variables, as in Keras 3)."""
    return isinstance(x, (Tensor, KerasTensor))


def shape(x):
    """The shape of `x` as a tuple (None for unknown dimensions of a KerasTensor)."""
    if isinstance(x, KerasTensor):
        return tuple(x.shape)
    return tuple(np.shape(getattr(x, "_value", x)))


def dtype(x):
    """The dtype name of `x` ("float32", "int64", ...)."""
    return standardize_dtype(getattr(x, "dtype", None) or np.asarray(x).dtype)


def size(x):
    return int(np.prod(shape(x)))


def ndim(x):
    return len(shape(x))
