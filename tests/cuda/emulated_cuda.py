"""A host emulation of `fkeras._C_cuda` for testing placement without a GPU.

`EmulatedArray` has the interface of `_C_cuda.DeviceArray` (shape, dtype, views by reshape and
first-axis index/slice, `[...] =`, copy_from, fill, to_host, from_host, zeros, ptr, block_ptr)
over host memory, and like DeviceArray it refuses `__array__`: an op or engine path that
handles a device buffer with NumPy fails here as it would on a GPU. The kernels are the
`fkeras._C` kernels behind a wrapper that unwraps EmulatedArrays and rejects NumPy arrays
(a host buffer handed to a device kernel). The module counts uploads and downloads.

The array namespace kernels (`xp_*`, used by fkeras/backend/cuda_xp.py) compute with NumPy as
the GPU does: float32 elementwise, reductions accumulated in float64 and rounded once.

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
        if self._a.ndim == 0:
            raise TypeError("DeviceArray: a 0-d array cannot be indexed")
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


# ---- the array namespace kernels (bind_xp.cpp): NumPy inside, the GPU's contracts outside ----

_BINARY_FNS = [np.add, np.subtract, np.multiply, np.divide, np.maximum, np.minimum, np.power,
               np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal,
               lambda a, b: np.broadcast_to(a, np.broadcast_shapes(np.shape(a), np.shape(b)))]
_UNARY_FNS = [np.negative, np.abs, np.square, np.sqrt, np.exp, np.log, np.sign]


def _xp_operand(v, fn, arg):
    if isinstance(v, EmulatedArray):
        if v.dtype != np.float32:
            raise ValueError(f"{fn}: argument '{arg}' must be float32, received {v.dtype}")
        return v._a
    if isinstance(v, (int, float, bool)) and not isinstance(v, np.ndarray):
        return np.float32(v)
    raise TypeError(f"{fn}: argument '{arg}' must be a DeviceArray or a number, received "
                    f"{type(v).__name__}")


def _xp_out(out, fn, shape):
    if not isinstance(out, EmulatedArray) or out.dtype != np.float32:
        raise ValueError(f"{fn}: argument 'out' must be a float32 DeviceArray")
    if tuple(out.shape) != tuple(shape):
        raise ValueError(f"{fn}: operands do not broadcast to the output shape {out.shape}")


def _xp_binary(out, a, b, op):
    a, b = _xp_operand(a, "xp_binary", "a"), _xp_operand(b, "xp_binary", "b")
    shape = np.broadcast_shapes(np.shape(a), np.shape(b), out.shape)
    _xp_out(out, "xp_binary", shape)
    with np.errstate(all="ignore"):
        out._a[...] = _BINARY_FNS[op](a, b)


def _xp_unary(out, x, op):
    x = _xp_operand(x, "xp_unary", "x")
    _xp_out(out, "xp_unary", np.shape(x))
    with np.errstate(all="ignore"):
        out._a[...] = _UNARY_FNS[op](x)


def _xp_where(out, cond, x, y):
    if cond.dtype not in (np.float32, np.bool_, np.uint8):
        raise ValueError(f"xp_where: argument 'cond' must be float32, bool or uint8")
    x, y = _xp_operand(x, "xp_where", "x"), _xp_operand(y, "xp_where", "y")
    shape = np.broadcast_shapes(cond.shape, np.shape(x), np.shape(y), out.shape)
    _xp_out(out, "xp_where", shape)
    out._a[...] = np.where(cond._a != 0, x, y)


def _xp_reduce(out, x, op, axes):
    # As the GPU: float64 accumulation, one rounding to float32.
    x = _xp_operand(x, "xp_reduce", "x").astype(np.float64)
    axes = tuple(int(a) for a in axes)
    n_red = int(np.prod([x.shape[a] for a in axes])) if axes else 1
    n_out = int(np.prod([d for i, d in enumerate(x.shape) if i not in axes]))
    if n_red == 0 and op >= 2 and n_out:
        raise ValueError("xp_reduce: zero-size reduction of max/min has no identity")
    with np.errstate(all="ignore"):
        if op in (0, 1):
            r = np.sum(x, axis=axes)
            if op == 1:
                r = r / n_red if n_red else np.full_like(r, np.nan)
        else:
            r = (np.max if op == 2 else np.min)(x, axis=axes) if x.size else \
                np.zeros([d for i, d in enumerate(x.shape) if i not in axes])
    if out.size != np.size(r):
        raise ValueError(f"xp_reduce: argument 'out' must have {np.size(r)} elements")
    out._a[...] = np.asarray(r, np.float32).reshape(out.shape)


def _xp_copy2d(dst, dst_offset, dst_ld, src, src_offset, src_ld, rows, cols):
    if dst.dtype != src.dtype:
        raise ValueError("xp_copy2d: 'dst' and 'src' dtypes differ")
    if rows <= 0 or cols <= 0:
        return
    r = np.arange(rows)[:, None]
    c = np.arange(cols)[None, :]
    d, s = dst_offset + r * dst_ld + c, src_offset + r * src_ld + c
    if d.max() >= dst.size or s.max() >= src.size:
        raise ValueError("xp_copy2d: the copy does not fit")
    dst._a.reshape(-1)[d] = src._a.reshape(-1)[s]


def make_module():
    """A module with the `_C_cuda` interface that placement uses, over host memory."""
    from fkeras.backend import devices

    cpu = devices.get_device("cpu")
    mod = types.SimpleNamespace(
        DeviceArray=EmulatedArray, device_count=lambda: 1, status=lambda: "1 emulated device",
        synchronize=lambda: None, array_add=_array_add, array_sum=_array_sum,
        array_axpby=_array_axpby, array_scale=_array_scale,
        array_broadcast_scalar=_array_broadcast_scalar,
        xp_binary=_xp_binary, xp_unary=_xp_unary, xp_where=_xp_where, xp_reduce=_xp_reduce,
        xp_copy2d=_xp_copy2d,
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
