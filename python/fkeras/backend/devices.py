"""Devices: a name, an array dtype, allocation, and a table from kernel name to callable.

Ops never branch on the device: they ask the current device for buffers and kernels.
Device buffers follow one small protocol (NumPy arrays do; `_C_cuda.DeviceArray` does):
`shape`, `dtype` (a NumPy dtype), `size`, `ndim`, `reshape(shape)` (a view), `[i]` / `[a:b]`
on the first axis (views) and `[...] = value`. Anything else goes through the device
(`copy_into`, `fill`, `add`, `zeros_like`, `ones_like`, `contiguous`, `to_numpy`, `asarray`),
and `device_of(buffer)` names the device a buffer lives on. A device with `is_host = False`
runs the ops marked `device_native`; every other op runs on the host
(`fkeras.ops.device_dispatch`; ARCHITECTURE.md, "Placement").
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
    """A host compute device: NumPy buffers of one float dtype, and its kernel table."""

    is_host = True
    xp = np  # the array namespace ops compute with (fkeras/backend/cuda_xp.py on the GPU)

    def __init__(self, name, dtype, kernels, native_names=()):
        self.name = name
        self.dtype = np.dtype(dtype)
        self.kernels = kernels
        self.native_kernel_names = frozenset(native_names)
        self.xp = np  # an instance attribute: the ops' `dev.xp` is one dict lookup

    def empty(self, shape, dtype=None):
        return np.empty(shape, dtype=dtype or self.dtype)

    def zeros(self, shape, dtype=None):
        return np.zeros(shape, dtype=dtype or self.dtype)

    def asarray(self, x):
        """A C-contiguous array of this device's float dtype holding x (no copy if it is one).
        Scalars stay 0-d (np.ascontiguousarray alone would make them 1-d). A buffer of
        another device is copied to the host first."""
        a = np.asarray(host_value(x), dtype=self.dtype)
        return a if a.flags.c_contiguous else np.ascontiguousarray(a)

    def holds(self, x):
        return isinstance(x, np.ndarray)

    def to_numpy(self, x):
        return np.asarray(host_value(x))

    def upload(self, x):
        """x as a buffer of this device, keeping its dtype (the host: x itself)."""
        return host_value(x)

    def upload_batch(self, arrays):
        return [None if a is None else host_value(a) for a in arrays]

    @staticmethod
    def contiguous(x):
        return x if x.flags.c_contiguous else np.ascontiguousarray(x)

    @staticmethod
    def copy_into(dst, src):
        np.copyto(dst, src, casting="unsafe")

    @staticmethod
    def fill(dst, value):
        dst[...] = value

    @staticmethod
    def add(a, b):
        return a + b

    @staticmethod
    def zeros_like(a):
        return np.zeros_like(a)

    @staticmethod
    def ones_like(a):
        return np.ones_like(a)

    @staticmethod
    def shares_memory(a, b):
        return isinstance(b, np.ndarray) and np.shares_memory(a, b)

    @staticmethod
    def copy(a):
        return a.copy()

    @staticmethod
    def scale(a, alpha):
        """alpha * a, alpha rounded to the buffer's float type first."""
        return a * a.dtype.type(alpha)

    @staticmethod
    def axpby(a, b, alpha, beta):
        """alpha * a + beta * b (same shapes)."""
        return a * alpha + b * beta

    @staticmethod
    def sum_scaled(a, alpha):
        """alpha * sum(a) as a 0-d buffer of a's dtype."""
        return np.asarray(a.sum() * alpha, dtype=a.dtype)

    @staticmethod
    def broadcast_scalar(shape, s, alpha):
        """A buffer of `shape` filled with alpha * s (s: a one-element buffer)."""
        return np.full(shape, float(s) * alpha, dtype=np.asarray(s).dtype)


_BUFFER_TYPES = set()  # the buffer types of the non-host devices created so far
NON_HOST = _BUFFER_TYPES  # truthy once a non-host device exists (a cheap check for hot paths)


def is_buffer(x):
    """Whether x is a device buffer: a NumPy array, or a buffer of a non-host device."""
    return isinstance(x, np.ndarray) or type(x) in _BUFFER_TYPES


def host_value(x):
    """x, or a NumPy copy of it when it is a buffer of a non-host device."""
    to_host = getattr(x, "to_host", None)
    return x if to_host is None or isinstance(x, np.ndarray) else to_host()


def host_array(x, dtype=None):
    """x (a Tensor, Variable, buffer of any device or array-like) as a NumPy array on the
    host, copied from the device when it lives on one (no copy for host buffers)."""
    value = getattr(x, "_value", x)
    return np.asarray(host_value(value), dtype=dtype)


def device_of(buffer):
    """The Device a buffer lives on: the cpu device for NumPy arrays and other host values,
    else the non-host device whose buffer type it is."""
    if not isinstance(buffer, np.ndarray):
        for dev in _devices.values():
            if not dev.is_host and dev.holds(buffer):
                return dev
    return get_device("cpu")

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
     "conv2d_backward_weight", "conv2d_forward_maxpool2d"]
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
    if isinstance(name, Device) or hasattr(name, "kernels"):  # a Device or CudaDevice
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
        if not dev.is_host:
            _BUFFER_TYPES.add(dev.array_type)
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
