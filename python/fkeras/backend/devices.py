"""Devices: a name, an array dtype, allocation, and a table from kernel name to callable.

Ops never branch on the device: they ask the current device for buffers and kernels.
- `reference`: NumPy float64 arrays, kernels from `fkeras.backend.reference` (the spec; used
  for gradient checks).
- `cpu`: NumPy float32 arrays, kernels from `fkeras._C` (reference fallback for a kernel that
  is not compiled, listed by `native_kernel_names`).
- `cuda`: DeviceArrays from `fkeras._C_cuda`, its kernels (fkeras/backend/cuda.py; a
  CudaDevice with the same empty/zeros/asarray/to_numpy/kernels interface).
"""

import contextlib
import threading

import numpy as np

from fkeras import _native
from fkeras.engine import fast_path


class Device:
    """A compute device: array dtype, allocation and its kernel table."""

    def __init__(self, name, dtype, kernels, native_names=()):
        self.name = name
        self.dtype = np.dtype(dtype)
        self.kernels = kernels
        self.native_kernel_names = frozenset(native_names)

    def empty(self, shape):
        return np.empty(shape, dtype=self.dtype)

    def zeros(self, shape):
        return np.zeros(shape, dtype=self.dtype)

    def asarray(self, x):
        """A C-contiguous array of this device's float dtype holding x (no copy if it is one).
        Scalars stay 0-d (np.ascontiguousarray alone would make them 1-d)."""
        a = np.asarray(x, dtype=self.dtype)
        return a if a.flags.c_contiguous else np.ascontiguousarray(a)

    def to_numpy(self, x):
        return np.asarray(x)

    def __repr__(self):
        return f"<Device {self.name}>"


def _reference_device():
    from fkeras.backend import reference

    return Device("reference", np.float64, dict(reference.KERNELS), reference.KERNELS.keys())


def _cpu_device():
    from fkeras.backend import reference

    table, native = {}, []
    for name, ref in reference.KERNELS.items():
        fn = getattr(_native._C, name, None)
        if fn is None:
            table[name] = ref
        else:
            table[name] = fn
            native.append(name)
    return Device("cpu", np.float32, table, native)


# The cpu kernels whose products go through the GEMM driver (cpp/include/fkeras/gemm.h).
BF16_KERNELS = frozenset(
    ["gemm", "dense_forward", "dense_backward", "conv2d_forward", "conv2d_backward_input",
     "conv2d_backward_weight"]
    + [f"{cell}_{kind}_{d}" for cell in ("simple_rnn", "lstm", "gru")
       for kind in ("cell", "sequence") for d in ("forward", "backward")])


def _bf16_products(kernel, set_flag):
    def call(*args, **kwargs):
        previous = set_flag(True)
        try:
            return kernel(*args, **kwargs)
        finally:
            set_flag(previous)

    call.__name__ = getattr(kernel, "__name__", "kernel")
    return call


def _cpu_bf16_device():
    # The cpu device whose GEMM-based kernels compute their products in bfloat16 (a layer
    # under the "mixed_bfloat16" policy runs on it; the tape keeps the device of each op, so
    # its backward does too). Same name, dtype and buffers as the cpu device.
    cpu = get_device("cpu")
    set_flag = getattr(_native._C, "set_gemm_bf16", None)
    table = dict(cpu.kernels)
    if set_flag is not None:
        for name in BF16_KERNELS & cpu.native_kernel_names:
            table[name] = _bf16_products(table[name], set_flag)
    return Device("cpu", np.float32, table, cpu.native_kernel_names)


def _cuda_device():
    from fkeras.backend import cuda

    return cuda.make_device()


_FACTORIES = {"reference": _reference_device, "cpu": _cpu_device, "cuda": _cuda_device}
_BF16 = "cpu/bf16"  # the key of the bf16-products cpu device (not a name users pass)
_devices = {}
_state = threading.local()
_default = ["cpu"]


def get_device(name=None):
    """Returns the Device called `name` ('cpu', 'reference' or 'cuda'); None: the current one."""
    if name is None:
        stack = getattr(_state, "stack", None)
        dev = _devices.get(stack[-1] if stack else _default[0])
        if dev is not None:
            return dev
        name = current_device_name()
    if isinstance(name, Device):
        return name
    key = str(name).lower().split(":")[0]
    if key == "gpu":
        key = "cuda"
    if key == "cuda":
        from fkeras.backend import cuda

        cuda.check_index(name)
    if key not in _FACTORIES:
        raise ValueError(
            f"Unknown device '{name}'. Expected one of: {', '.join(sorted(_FACTORIES))}."
        )
    dev = _devices.get(key)
    if dev is None:
        dev = _devices[key] = _FACTORIES[key]()
    return dev


def get_kernels(device=None):
    """The mapping from kernel name to callable for `device` (default: the current one)."""
    return get_device(device).kernels


def current_device_name():
    stack = getattr(_state, "stack", None)
    name = stack[-1] if stack else _default[0]
    return "cpu" if name == _BF16 else name


def set_device(name):
    """Sets the default device for new variables and computations."""
    get_device(name)
    _default[0] = str(name).lower().split(":")[0].replace("gpu", "cuda")
    fast_path.set_default_fast(_default[0] == "cpu")


@contextlib.contextmanager
def device(name):
    """`with fkeras.device("cpu"):` runs the enclosed code on that device."""
    dev = get_device(name)
    stack = getattr(_state, "stack", None)
    if stack is None:
        stack = _state.stack = []
    stack.append(dev.name)
    fast_path.enter_slow()  # ops in a device scope take their Python path (fast_path.py)
    try:
        yield dev
    finally:
        stack.pop()
        fast_path.exit_slow()


class _ProductsScope:
    """Pushes a cpu device key for the enclosed ops when `_key()` names one (a class, not a
    generator context manager: it is entered on every call of such a layer)."""

    __slots__ = ("_pushed",)

    def __enter__(self):
        key = self._key()
        self._pushed = key is not None
        if self._pushed:
            if key not in _devices:
                _devices[key] = _cpu_bf16_device() if key == _BF16 else get_device(key)
            stack = getattr(_state, "stack", None)
            if stack is None:
                stack = _state.stack = []
            stack.append(key)
            fast_path.enter_slow()
        return self

    def __exit__(self, *exc):
        if self._pushed:
            _state.stack.pop()
            fast_path.exit_slow()


class bf16_products(_ProductsScope):
    """Context manager: the enclosed ops run on the cpu device with bfloat16 products (the
    layer call of a "mixed_bfloat16" layer). Inside another device's scope, it changes
    nothing (no bfloat16 kernels elsewhere)."""

    __slots__ = ()

    @staticmethod
    def _key():
        return _BF16 if current_device_name() == "cpu" else None


def in_bf16_products():
    """True inside a `bf16_products` scope that is the innermost device scope."""
    stack = getattr(_state, "stack", None)
    return bool(stack) and stack[-1] == _BF16


class fp32_products(_ProductsScope):
    """Context manager: back to float32 products inside a `bf16_products` scope (a float32
    layer called by a "mixed_bfloat16" layer computes in float32, as in Keras)."""

    __slots__ = ()

    @staticmethod
    def _key():
        return "cpu" if in_bf16_products() else None


def available_devices():
    """Names of the devices usable here ('cuda' only with a built module and a GPU)."""
    names = ["cpu", "reference"]
    cuda = _native._C_cuda
    if cuda is not None and cuda.device_count() > 0:
        names.append("cuda")
    return names
