"""Tensor: the eager value that fkeras ops return to user code, and the two eager modes.

A `Tensor` holds one device buffer (`_value`: a NumPy array on the cpu and reference devices;
a device-buffer object on another device) and gives it Python's operator protocol, routed
through the op registry and therefore recorded on the active GradientTape. It never copies:
wrapping and unwrapping are O(1), and the tape keys on the buffer's identity (see tape.py), so a
Tensor and the buffer it wraps are the same value to autodiff.

Two eager modes, one thread-local flag:
- tensor mode (the default): ops return Tensors. User code always runs here: scripts, custom
  layers/models/losses/metrics/activations/regularizers, custom training steps, callbacks.
- array mode: ops return bare device buffers. fkeras's own layer calls and the built-in
  train/test/predict steps run here, so the fast path pays no wrapper per op.
`run_user` and `run_builtin` switch modes at the boundary between the two kinds of code,
converting the values that cross it (buffers <-> Tensors, masks carried along).
"""

import numpy as np

from fkeras.backend.devices import _BUFFER_TYPES  # the non-host devices' buffer types
from fkeras.engine import fast_path
from fkeras.engine.fast_path import MODE as _MODE  # the per-thread flag, shared with C
from fkeras.engine.operators import TensorOperators


def in_array_mode():
    """True while fkeras-internal code runs (ops return bare device buffers)."""
    return _MODE.array


class Tensor(TensorOperators):
    """An eager tensor: a device buffer with NumPy-like Python operators that are differentiable.

    Returned by every `fkeras.ops` function and by eager layer/model calls. Behaves like a
    NumPy array in arithmetic, comparisons and indexing (`x[0]`, `x[:, 1:]`, `x[mask]`), and
    converts with `np.asarray(t)` or `t.numpy()`.

    Example:
    ```python
    x = fkeras.ops.convert_to_tensor([[1.0, 2.0], [3.0, 4.0]])
    y = (x * 2.0 - 1.0) @ x.T          # a Tensor; recorded on an active GradientTape
    float(y[0, 0])                      # 5.0
    ```
    """

    __slots__ = ("_value", "_keras_mask", "__weakref__")

    def __init__(self, value):
        self._value = value

    # ---- conversions ----
    def numpy(self):
        """The value as a NumPy array (a view of the buffer on the cpu device)."""
        return _to_numpy(self._value)

    def __array__(self, dtype=None, copy=None):
        return as_numpy(_to_numpy(self._value), dtype, copy)

    def __pos__(self):
        return self  # a Tensor is immutable: +t is the same value (and the same tape node)

    def __bool__(self):
        return bool(_scalar(self, "bool"))

    def __float__(self):
        return float(_scalar(self, "float"))

    def __int__(self):
        return int(_scalar(self, "int"))

    def __index__(self):
        a = _to_numpy(self._value)
        if a.dtype.kind not in "iub":
            raise TypeError(f"Only integer tensors can be used as an index; received dtype "
                            f"{a.dtype}.")
        return int(_scalar(self, "index"))

    def __format__(self, spec):
        # f"{loss:.4f}" formats a one-element tensor's number; other tensors only as str().
        if spec and _to_numpy(self._value).size == 1:
            return format(_scalar(self, "number").item(), spec)
        if spec:
            raise TypeError(f"unsupported format string {spec!r} for a tensor of shape "
                            f"{self.shape}; only one-element tensors take a format spec.")
        return str(self)

    def __complex__(self):
        return complex(_scalar(self, "complex"))

    def item(self):
        """The value of a one-element tensor as a Python number."""
        return _to_numpy(self._value).item()

    def tolist(self):
        return _to_numpy(self._value).tolist()

    # ---- attributes ----
    @property
    def shape(self):
        return tuple(self._value.shape)

    @property
    def dtype(self):
        return self._value.dtype

    @property
    def ndim(self):
        return len(self._value.shape)

    @property
    def size(self):
        return int(np.prod(self._value.shape, dtype=np.int64))

    @property
    def device(self):
        if isinstance(self._value, np.ndarray):
            return "cpu"
        from fkeras.backend import devices

        return f"{devices.device_of(self._value).name}:0"

    @property
    def value(self):
        return self

    def __len__(self):
        if not self._value.shape:
            raise TypeError("len() of a 0-d tensor")
        return self._value.shape[0]

    def __iter__(self):
        # Not a generator function: iter() of a 0-d tensor must raise at once, as NumPy's.
        if not self._value.shape:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._value.shape[0]))

    def __repr__(self):
        body = np.array2string(_to_numpy(self._value), separator=", ", prefix="tensor(")
        return f"tensor({body}, shape={self.shape}, dtype={self.dtype})"

    __str__ = __repr__
    __hash__ = object.__hash__  # id-based, as torch tensors (usable as dict keys)

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return Tensor(np.array(_to_numpy(self._value), copy=True))

    def __reduce__(self):
        return (Tensor, (np.array(_to_numpy(self._value), copy=True),))


def as_numpy(a, dtype=None, copy=None):
    """NumPy 2's `__array__` protocol over a NumPy view `a` of a buffer (Tensor, Variable)."""
    if dtype is not None and a.dtype != dtype:
        if copy is False:  # copy=False forbids a copy
            raise ValueError(f"Unable to avoid a copy while converting a {a.dtype} value to "
                             f"{np.dtype(dtype)}.")
        return a.astype(dtype)
    return a.copy() if copy else a


def _to_numpy(value):
    if type(value) is np.ndarray:
        return value
    to_host = getattr(value, "to_host", None)  # a buffer of a non-host device: copied here
    return np.asarray(value) if to_host is None else to_host()


def _scalar(t, what):
    a = _to_numpy(t._value)
    if a.size != 1:
        if a.size == 0:
            raise ValueError(f"The truth value of an empty tensor is ambiguous (shape {a.shape}).")
        raise ValueError(
            f"Only one-element tensors can be converted to a Python {what}; received a tensor "
            f"of shape {a.shape}. Use `ops.any`/`ops.all` for a truth value over many elements."
        )
    return a.reshape(())[()]


# ---- crossing the boundary between fkeras code (array mode) and user code (tensor mode) ----

def wrap_outputs(outputs):
    """An op's outputs (a buffer, or a tuple or list of them) as Tensors."""
    if type(outputs) is tuple:
        return tuple(Tensor(o) for o in outputs)
    if type(outputs) is list:
        return [Tensor(o) for o in outputs]
    return Tensor(outputs)


def wrap(x):
    """A Tensor for a device buffer (its eager mask carried along); other values unchanged."""
    if type(x) is np.ndarray or type(x) in _BUFFER_TYPES:
        t = Tensor(x)
        from fkeras.engine.masking import get_keras_mask

        mask = get_keras_mask(x)
        if mask is not None:
            t._keras_mask = wrap(mask)
        return t
    return x


def unwrap(x):
    """The device buffer of a Tensor (its mask carried along); other values unchanged."""
    if type(x) is Tensor:
        v = x._value
        mask = getattr(x, "_keras_mask", None)
        if mask is not None:
            from fkeras.engine.masking import set_keras_mask

            set_keras_mask(v, unwrap(mask))
        return v
    return x


def wrap_structure(structure):
    from fkeras.utils import nest

    if type(structure) is np.ndarray or type(structure) in _BUFFER_TYPES:
        return wrap(structure)
    if not nest.is_nested(structure):
        return structure
    return nest.map_structure(wrap, structure)


def unwrap_structure(structure):
    from fkeras.utils import nest

    if type(structure) is Tensor:
        return unwrap(structure)
    if not nest.is_nested(structure):
        return structure
    return nest.map_structure(unwrap, structure)


def run_user(fn, *args, **kwargs):
    """Calls user code `fn` in tensor mode: NumPy/device arrays in its arguments arrive as
    Tensors; its results go back to the caller's mode (buffers when called from fkeras code)."""
    if not _MODE.array:
        return fn(*args, **kwargs)
    _MODE.array = False
    try:
        out = fn(*wrap_structure(args), **wrap_structure(kwargs))
    finally:
        _MODE.array = True
    return unwrap_structure(out)


def run_builtin(fn, *args, **kwargs):
    """Calls fkeras code `fn` in array mode: Tensor arguments arrive as device buffers; results
    go back to the caller's mode (Tensors when called from user code)."""
    if _MODE.array:
        return fn(*args, **kwargs)
    _MODE.array = True
    try:
        out = fn(*unwrap_structure(args), **unwrap_structure(kwargs))
    finally:
        _MODE.array = False
    return wrap_structure(out)


class _ModeScope:
    __slots__ = ("_value", "_prev")

    def __init__(self, value):
        self._value = value

    def __enter__(self):
        self._prev = _MODE.array
        _MODE.array = self._value

    def __exit__(self, *exc):
        _MODE.array = self._prev


def array_mode():
    """Context manager: the enclosed fkeras-internal code gets bare buffers from ops."""
    return _ModeScope(True)


def tensor_mode():
    """Context manager: the enclosed code gets Tensors from ops (user code)."""
    return _ModeScope(False)


def user_callable(fn):
    """`fn` (a user's activation, loss, metric or regularizer function) made safe to call from
    fkeras code: it runs in tensor mode. fkeras's own functions are returned unchanged."""
    if fn is None or is_builtin_function(fn) or getattr(fn, "_fk_user_wrapped", False):
        return fn
    import functools

    @functools.wraps(fn)
    def call(*args, **kwargs):
        return run_user(fn, *args, **kwargs)

    call._fk_user_wrapped = True
    return call


def is_builtin_function(fn):
    """True for functions and callables defined inside the fkeras package."""
    module = getattr(fn, "__module__", None) or type(fn).__module__ or ""
    if isinstance(fn, type):
        return module.startswith("fkeras.")
    if not hasattr(fn, "__code__") and not isinstance(fn, type) and callable(fn):
        # A callable object: its class's __call__ decides.
        call = getattr(type(fn), "call", None) or getattr(type(fn), "__call__", None)
        module = getattr(call, "__module__", None) or type(fn).__module__ or ""
    return module.startswith("fkeras.") or module == "fkeras"




def array_mode_method(fn):
    """Decorator for fkeras-internal steps whose arguments are already device buffers: runs
    `fn` in array mode (a flag flip; nothing is converted)."""
    import functools

    @functools.wraps(fn)
    def inner(*args, **kwargs):
        prev = _MODE.array
        _MODE.array = True
        try:
            return fn(*args, **kwargs)
        finally:
            _MODE.array = prev

    return inner


def builtin_method(fn):
    """Decorator for public fkeras functions that user code calls with Tensors: runs `fn` in
    array mode with Tensor arguments unwrapped, and wraps its results for the caller."""
    import functools

    @functools.wraps(fn)
    def inner(*args, **kwargs):
        return run_builtin(fn, *args, **kwargs)

    return inner


def is_builtin_method(cls, name):
    """Whether `cls.<name>` (a layer's `call`, a loss's `call`, a metric's `update_state`) is
    fkeras's own code. Cached in the class itself: the training step asks every time."""
    key = "_fk_is_builtin_" + name  # (not "_fk_builtin_call": a Layer method)
    flag = cls.__dict__.get(key)
    if flag is None:
        flag = is_builtin_function(getattr(cls, name))
        type.__setattr__(cls, key, flag)
    return flag


def call_function(fn, *args, **kwargs):
    """Calls `fn` from fkeras code: directly when it is fkeras's own, in tensor mode (through
    `run_user`) when it is a user's function or callable object."""
    builtin = is_builtin_function(fn) if hasattr(fn, "__code__") else \
        is_builtin_method(type(fn), "__call__")
    if builtin:
        return fn(*args, **kwargs)
    return run_user(fn, *args, **kwargs)


fast_path.configure(Tensor)
