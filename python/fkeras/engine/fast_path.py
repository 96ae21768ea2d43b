"""The eager fast path of the common elementwise ops (fkeras._eager, cpp/eager/eager.cpp).

An op function or Tensor operator made here runs its NumPy ufunc directly when no tape is
open, the default device is the cpu and the operands are plain float32 arrays/Tensors (or a
Python number beside one); any other call goes, unchanged, to the op's Python function,
which defines the semantics. Both paths give the same array: the fast one only skips the
dispatch (promotion, registry, device, tape) that such a call does not need.

The state the C side reads is kept in step here: array mode is the C module's flag (tensor.py
uses `MODE`), tapes and device scopes call `enter_slow`/`exit_slow`, and `set_device` calls
`set_default_fast`. Without the compiled module every function is its Python fallback.
"""

import functools
import threading

import numpy as np

try:
    from fkeras import _eager
except ImportError:  # pragma: no cover - a build without the module: Python paths only
    _eager = None

UNARY, BINARY, BINARY_REFLECTED, GETITEM = 0, 1, 2, 3


class _PyMode(threading.local):
    array = False


# engine/tensor.py's array-mode flag (`MODE.array`), shared with the C fast path.
MODE = _eager.mode if _eager is not None else _PyMode()


def configure(tensor_type):
    """Enables the fast path for `tensor_type` (fkeras.Tensor); False if it stays off."""
    if _eager is None:
        return False
    return _eager.configure(np.ndarray, tensor_type, np.dtype("float32"), np.dtype("int32"),
                            np.dtype("int64"), np.dtype("bool"),
                            np.zeros((2, 3), dtype=np.float32))


def apply_function(fallback, cpu_device):
    """registry.apply with the fast path in front: an op on plain buffers runs its forward on
    `cpu_device` directly (eager.cpp says when); other calls run `fallback`."""
    if _eager is None:
        return fallback
    _eager.configure_apply(cpu_device, np.generic, np.asarray, np.ascontiguousarray,
                           fallback)
    return _eager.apply


def enter_slow():
    if _eager is not None:
        _eager.enter_slow()


def exit_slow():
    if _eager is not None:
        _eager.exit_slow()


def set_default_fast(enabled):
    if _eager is not None:
        _eager.set_default_fast(bool(enabled))


def state():
    """This thread's fast-path state (array_mode, blocked, default_fast, ready), for tests."""
    return _eager.state() if _eager is not None else None


def function(ufunc, fallback, kind=BINARY):
    """The op function `fallback` with the fast path in front (signature, name and doc kept:
    `inspect.signature` follows `__wrapped__`)."""
    if _eager is None:
        return fallback
    fast = _eager.FastOp(ufunc, fallback, kind)
    functools.update_wrapper(fast, fallback)
    return fast


def is_function(obj):
    """True for an op function made by `function` (a C object, not a Python function)."""
    return _eager is not None and type(obj) is _eager.FastOp


def method(ufunc, fallback, kind=BINARY):
    """A Tensor operator method (bound like a function); `fallback(self, other)` is the
    Python method. For BINARY_REFLECTED (`__radd__`), the fast path computes ufunc(other,
    self) and the fallback is still called as `fallback(self, other)`."""
    if _eager is None:
        return fallback
    if kind == BINARY_REFLECTED:
        op = _eager.FastOp(ufunc, _unreflect(fallback), kind)
    else:
        op = _eager.FastOp(ufunc, fallback, kind)
    functools.update_wrapper(op, fallback)
    return op


def _unreflect(method):
    # The C side calls a reflected fallback with the operands in op order (other, self).
    def call(x1, x2):
        return method(x2, x1)

    return call
