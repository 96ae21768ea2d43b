"""keras.backend functions: Keras 3's `keras.backend` names and the Keras 2 (`K.`) functions
that scripts of that era call (int_shape, get_value, set_value, variable, constant, eval, ...).

`backend()` returns "fkeras": fkeras is its own backend, and code that branches on
"tensorflow"/"jax"/"torch" should take its generic path. Values come back as NumPy arrays
(`get_value`, `eval`, `batch_get_value`) and tensors as fkeras Tensors, as Keras 2 gave NumPy
arrays and backend tensors.
"""

import numpy as np

from fkeras import config as _config


def backend():
    """The backend name: "fkeras" (Keras 3 gives "tensorflow", "jax", "torch" or "numpy")."""
    return "fkeras"


def floatx():
    """The default float dtype name ("float32")."""
    return _config.floatx()


def set_floatx(value):
    """Sets the default float dtype; fkeras computes in float32 only."""
    _config.set_floatx(value)


def epsilon():
    """The fuzz factor used in numeric expressions (1e-7 by default)."""
    return _config.epsilon()


def set_epsilon(value):
    """Sets the fuzz factor used in numeric expressions."""
    _config.set_epsilon(value)


def image_data_format():
    """"channels_last" or "channels_first"."""
    return _config.image_data_format()


def set_image_data_format(data_format):
    """Sets the default image data format."""
    _config.set_image_data_format(data_format)


def clear_session(free_memory=True):
    """Resets the automatic names (`dense`, `dense_1`, ... start again), as Keras does."""
    from fkeras.utils import clear_session as _clear

    _clear()


def get_uid(prefix=""):
    """Advances and returns the name counter of `prefix` (1, 2, ...)."""
    from fkeras.engine.naming import get_uid as _get_uid

    return _get_uid(prefix)


def standardize_dtype(dtype):
    """A dtype name ("float32", "int64", "bool", ...) for any dtype-like."""
    from fkeras.ops.dtypes import standardize_dtype as _std

    return _std(dtype)


def result_type(*dtypes):
    """The dtype name that ops give for operands of `dtypes` (fkeras's promotion rule)."""
    from fkeras.ops.dtypes import result_type as _rt

    operands = [np.empty((), standardize_dtype(d)) if isinstance(d, str) or
                isinstance(d, np.dtype) or isinstance(d, type) else d for d in dtypes]
    return np.dtype(_rt(*operands)).name


def is_float_dtype(dtype):
    """True for floating dtypes (float16/32/64, bfloat16)."""
    name = standardize_dtype(dtype)
    return name.startswith("float") or name.startswith("bfloat")


def is_int_dtype(dtype):
    """True for signed and unsigned integer dtypes."""
    name = standardize_dtype(dtype)
    return name.startswith("int") or name.startswith("uint")


def is_keras_tensor(x):
    """True for symbolic KerasTensors (`Input(...)` and layer outputs on them)."""
    from fkeras.engine.keras_tensor import KerasTensor

    return isinstance(x, KerasTensor)


# ---- Keras 2 (K.) functions ----

def int_shape(x):
    """The shape of a tensor, variable or array as a tuple of ints (None where unknown)."""
    from fkeras import ops

    return tuple(None if d is None else int(d) for d in ops.shape(x))


def ndim(x):
    """The rank of `x`."""
    return len(int_shape(x))


def dtype(x):
    """The dtype name of `x`."""
    from fkeras import ops

    return ops.dtype(x)


def shape(x):
    """The shape of `x`: an int32 tensor for eager values (Keras 2's K.shape), a tuple with None
    for unknown dimensions of a KerasTensor."""
    from fkeras import ops

    if is_keras_tensor(x):
        return ops.shape(x)
    return ops.convert_to_tensor(np.asarray(ops.shape(x), np.int32))


def get_value(x):
    """The value of a variable or tensor as a NumPy array."""
    from fkeras import ops

    return np.array(ops.convert_to_numpy(x))


eval = get_value  # noqa: A001  (K.eval)


def batch_get_value(tensors):
    """`get_value` of each of `tensors`, as a list."""
    return [get_value(x) for x in tensors]


def set_value(x, value):
    """Assigns `value` (array-like) to the variable `x`."""
    if not hasattr(x, "assign"):
        raise ValueError(f"`set_value` needs a Variable; received {type(x).__name__}.")
    x.assign(np.asarray(value))


def batch_set_value(tuples):
    """`set_value(x, value)` for each `(x, value)` pair."""
    for x, value in tuples:
        set_value(x, value)


def constant(value, dtype=None, shape=None, name=None):
    """A tensor of `value` (broadcast to `shape` when given)."""
    from fkeras import ops

    arr = np.asarray(value, dtype=standardize_dtype(dtype) if dtype is not None else None)
    if shape is not None:
        arr = np.broadcast_to(arr, tuple(shape))
    if dtype is None and arr.dtype.kind == "f":
        arr = arr.astype(floatx())
    return ops.convert_to_tensor(np.ascontiguousarray(arr))


def variable(value, dtype=None, name=None, constraint=None):
    """A Variable initialized to `value`."""
    from fkeras.engine.variable import Variable

    return Variable(np.asarray(value), dtype=dtype or (floatx() if np.asarray(value).dtype.kind
                                                         == "f" else None),
                    name=name, constraint=constraint)


def zeros(shape, dtype=None, name=None):
    """A Variable of zeros (Keras 2's K.zeros)."""
    return variable(np.zeros(shape), dtype=dtype or floatx(), name=name)


def ones(shape, dtype=None, name=None):
    """A Variable of ones (Keras 2's K.ones)."""
    return variable(np.ones(shape), dtype=dtype or floatx(), name=name)


def count_params(x):
    """The number of elements of a variable or tensor."""
    return int(np.prod(int_shape(x)))


def random_uniform_variable(shape, low, high, dtype=None, name=None, seed=None):
    """A Variable drawn from U(low, high)."""
    from fkeras.utils.random import make_rng

    return variable(make_rng(seed).uniform(low, high, shape), dtype=dtype or floatx(), name=name)


def random_normal_variable(shape, mean, scale, dtype=None, name=None, seed=None):
    """A Variable drawn from N(mean, scale^2)."""
    from fkeras.utils.random import make_rng

    return variable(make_rng(seed).normal(mean, scale, shape), dtype=dtype or floatx(), name=name)
