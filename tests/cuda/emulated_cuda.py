"""A host emulation of `fkeras._C_cuda` for testing placement without a GPU.

`EmulatedArray` has the interface of `_C_cuda.DeviceArray` (shape, dtype, views by reshape and
first-axis index/slice, `[...] =`, copy_from, fill, to_host, from_host, zeros, ptr, block_ptr)
over host memory, and like DeviceArray it refuses `__array__`: an op or engine path that
handles a device buffer with NumPy fails here as it would on a GPU. The kernels are the
`fkeras._C` kernels behind a wrapper that unwraps EmulatedArrays and rejects NumPy arrays
(a host buffer handed to a device kernel). The module counts uploads and downloads.

What this proves: the engine's placement (which op runs where, what is uploaded when, that
variables, slots and gradients stay device buffers). What it does not: the CUDA kernels
themselves (their tests are tests/cuda/test_*_gpu.py, and the host math tests).
"""

import types

import numpy as np

from fkeras import _native
from fkeras.backend import cuda as cuda_backend

_DTYPES = frozenset(np.dtype(d) for d in
                    ("float32", "int32", "int64", "float64", "bool", "uint8", "int8", "int16",
                     "uint16", "uint32", "uint64", "float16"))


class EmulatedArray:
    """A DeviceArray stand-in: a C-contiguous block of host memory behind the device API."""

    __slots__ = ("_a", "_block", "__weakref__")
    uploads = 0
    downloads = 0
    pinned_calls = 0

    def __init__(self, shape, dtype="float32"):
        dt = np.dtype(dtype)
        if dt not in _DTYPES:
            raise ValueError(f"DeviceArray: unsupported dtype {dt}")
        self._a = np.empty(tuple(int(d) for d in shape), dt)
        self._block = self._a

    @classmethod
    def _view(cls, a, block):
        v = cls.__new__(cls)
        v._a, v._block = a, block
        return v

    @classmethod
    def from_host(cls, array):
        a = np.asarray(array)
        out = cls(a.shape, a.dtype)
        out._a[...] = a
        EmulatedArray.uploads += 1
        return out

    @classmethod
    def zeros(cls, shape, dtype="float32"):
        out = cls(shape, dtype)
        out._a[...] = 0
        return out

    shape = property(lambda self: self._a.shape)
    dtype = property(lambda self: self._a.dtype)
    size = property(lambda self: self._a.size)
    ndim = property(lambda self: self._a.ndim)
    nbytes = property(lambda self: self._a.nbytes)
    ptr = property(lambda self: self._a.__array_interface__["data"][0])
    block_ptr = property(lambda self: self._block.__array_interface__["data"][0])

    def reshape(self, *shape):
        if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
            shape = tuple(shape[0])
        return self._view(self._a.reshape(shape), self._block)

    def __getitem__(self, key):
        if key is Ellipsis:
            return self._view(self._a[...], self._block)
        if isinstance(key, slice) and key.step not in (None, 1):
            raise TypeError("DeviceArray: only step-1 slices are views")
        if not isinstance(key, (int, np.integer, slice)):
            raise TypeError(f"DeviceArray: indices must be an int, a step-1 slice or ..., "
                            f"received {type(key).__name__}")
        return self._view(self._a[key], self._block)

    def __setitem__(self, key, value):
        dst = self[key]
        if isinstance(value, EmulatedArray):
            dst.copy_from(value)
        elif isinstance(value, (int, float, bool, np.number)):
            dst.fill(float(value))
        else:
            host = np.asarray(value, dtype=dst.dtype)
            if host.ndim == 0:
                dst.fill(float(host))
                return
            if host.shape != dst.shape:
                raise ValueError(f"DeviceArray.copy_from_host: shape {host.shape} does not "
                                 f"match the array's {dst.shape}")
            dst._a[...] = host
            EmulatedArray.uploads += 1

    def copy_from(self, src):
        if src.dtype != self.dtype or src.size != self.size:
            raise ValueError("DeviceArray.copy_from: source does not match the destination")
        self._a.reshape(-1)[...] = src._a.reshape(-1)

    def fill(self, value):
        self._a[...] = value

    def fill_zero(self):
        self._a[...] = 0

    def to_host(self):
        EmulatedArray.downloads += 1
        return self._a.copy()

    def copy_from_host(self, array):
        self[...] = np.asarray(array)

    def __len__(self):
        if self._a.ndim == 0:
            raise TypeError("len() of a 0-d DeviceArray")
        return self._a.shape[0]

    def __array__(self, *args, **kwargs):
        raise TypeError("A DeviceArray lives in GPU memory: copy it with .to_host()")

    def __repr__(self):
        return f"EmulatedArray(shape={self.shape}, dtype={self.dtype})"


def _unwrap(x, name):
    if isinstance(x, EmulatedArray):
        return x._a
    if isinstance(x, np.ndarray) and not (name.startswith("attention") and x.dtype == bool):
        # (the CUDA attention bindings take a host boolean mask and upload it themselves)
        raise TypeError(f"{name}: a host NumPy array was passed to a device kernel "
                        f"(shape {x.shape}, dtype {x.dtype})")
    return x


def _kernel(name, fn):
    def call(*args, **kwargs):
        args = [_unwrap(a, name) for a in args]
        kwargs = {k: _unwrap(v, name) for k, v in kwargs.items()}
        return fn(*args, **kwargs)

    call.__name__ = name
    return call


def _array_add(out, a, b):
    np.add(a._a, b._a, out=out._a)


def _array_axpby(out, a, b, alpha, beta):
    np.add(a._a * np.float32(alpha), b._a * np.float32(beta), out=out._a)


def _array_scale(out, a, alpha):
    np.multiply(a._a, np.float32(alpha), out=out._a)


def _array_sum(out, a, alpha=1.0):
    # As the CUDA kernel: float64 accumulation, one rounding to float32.
    out._a[...] = np.float32(alpha * a._a.astype(np.float64).sum())


def _array_broadcast_scalar(out, src, alpha=1.0):
    out._a[...] = np.float32(alpha * float(src._a.reshape(-1)[0]))


def _upload_pinned(arrays):
    EmulatedArray.pinned_calls += 1
    return [EmulatedArray.from_host(a) for a in arrays]


def make_module():
    """A module with the `_C_cuda` interface that placement uses, over host memory."""
    from fkeras.backend import devices

    cpu = devices.get_device("cpu")
    mod = types.SimpleNamespace(
        DeviceArray=EmulatedArray, device_count=lambda: 1, status=lambda: "1 emulated device",
        synchronize=lambda: None, array_add=_array_add, array_sum=_array_sum,
        array_axpby=_array_axpby, array_scale=_array_scale,
        array_broadcast_scalar=_array_broadcast_scalar,
        device_info=lambda i: {"name": "emulated", "total_memory": 0,
                               "compute_capability": (9, 0), "multiprocessors": 0},
        memory_stats=lambda device=-1: {}, empty_cache=lambda device=-1: None,
        upload_pinned=_upload_pinned)
    for name in cuda_backend.kernel_names():
        setattr(mod, name, _kernel(name, cpu.kernels[name]))
    return mod


def install(monkeypatch):
    """Makes `fkeras.device("cuda")` the emulated device for one test."""
    from fkeras.backend import devices

    mod = make_module()
    monkeypatch.setattr(_native, "_C_cuda", mod)
    monkeypatch.setitem(devices._FACTORIES, "cuda", lambda: cuda_backend.CudaDevice(mod))
    monkeypatch.setattr(devices, "_devices", {k: v for k, v in devices._devices.items()
                                               if k != "cuda"})
    EmulatedArray.uploads = EmulatedArray.downloads = EmulatedArray.pinned_calls = 0
    return mod
