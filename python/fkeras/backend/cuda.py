"""The `cuda` device: DeviceArrays from fkeras._C_cuda and the kernels bound there.

`fkeras.device("cuda")` (also "cuda:0", "gpu") makes a `CudaDevice` current: `empty`/`zeros`/
`asarray`/`upload_batch` allocate `fkeras._C_cuda.DeviceArray`s through the caching
allocator, `kernels` holds the `_C_cuda` functions named like the CPU kernels, and the
buffer-protocol methods (`copy_into`, `add`, `axpby`, ...) run the runtime's array kernels.
Which ops run on it and which on the host: fkeras/ops/device_dispatch.py; docs/cuda.md.
"""

import numpy as np

from fkeras import _native
from fkeras.backend.devices import host_value

_BUILT_WITHOUT = (
    "fkeras was built without CUDA (fkeras._C_cuda is absent): rebuild with nvcc on the PATH "
    "(pip install . with FKERAS_CUDA=ON makes it required)."
)


def cuda_module():
    """`fkeras._C_cuda`, or RuntimeError saying why it cannot be used (not built, no GPU)."""
    cuda = _native._C_cuda
    if cuda is None:
        raise RuntimeError(_BUILT_WITHOUT)
    if cuda.device_count() == 0:
        raise RuntimeError(f"fkeras cannot use the cuda device: {cuda.status()}.")
    return cuda


def check_index(name):
    """Validates the index of a device name such as 'cuda:0' (only device 0 is used today)."""
    text = str(name)
    if ":" not in text:
        return 0
    idx = text.split(":", 1)[1]
    if not idx.isdigit():
        raise ValueError(f"Invalid device name '{name}': expected 'cuda' or 'cuda:<index>'.")
    idx = int(idx)
    count = cuda_module().device_count()
    if idx >= count:
        raise ValueError(f"Invalid device '{name}': this machine has {count} CUDA device(s).")
    if idx != 0:
        raise ValueError(
            f"Device '{name}': fkeras uses CUDA device 0 only for now (select another GPU with "
            "CUDA_VISIBLE_DEVICES)."
        )
    return idx


def kernel_names():
    """Names of the kernel table (the CPU `fkeras._C` kernels, runtime functions excluded)."""
    from fkeras.backend import reference

    return sorted(reference.KERNELS)


class CudaDevice:
    """The GPU device: DeviceArrays and the `_C_cuda` kernel table, with the device buffer
    protocol of `fkeras.backend.devices` (ops marked `device_native` run here; the rest run
    on the host through `fkeras.ops.device_dispatch`).

    Args:
        module: the `fkeras._C_cuda` module (or a module with the same interface).
    """

    name = "cuda"
    is_host = False

    def __init__(self, module):
        self.module = module
        self.array_type = module.DeviceArray
        self.dtype = np.dtype(np.float32)
        names = kernel_names()
        self.kernels = {n: getattr(module, n) for n in names if hasattr(module, n)}
        self.native_kernel_names = frozenset(self.kernels)
        self.missing_kernel_names = frozenset(n for n in names if n not in self.kernels)
        from fkeras.backend.cuda_xp import CudaXP

        self.xp = CudaXP(self)  # NumPy's functions on DeviceArrays (fkeras/backend/cuda_xp.py)

    def holds(self, x):
        return isinstance(x, self.array_type)

    def empty(self, shape, dtype=None):
        """An uninitialised DeviceArray of `shape` (float32 unless `dtype` says otherwise)."""
        return self.array_type(_shape(shape), str(np.dtype(dtype or self.dtype)))

    def zeros(self, shape, dtype=None):
        """A DeviceArray of `shape` filled with zeros."""
        return self.array_type.zeros(_shape(shape), str(np.dtype(dtype or self.dtype)))

    def asarray(self, x, dtype=None):
        """`x` as a DeviceArray: itself if it already is one of the right dtype, else a copy of
        the host data. Floating data becomes float32 (the device float dtype, as on the cpu
        device); integer, bool and uint8 data keep their dtype."""
        if not isinstance(x, np.ndarray):
            x = getattr(x, "_value", x)  # a Tensor or Variable: its buffer
        if isinstance(x, self.array_type):
            if dtype is None and x.dtype.kind == "f" and x.dtype != self.dtype:
                dtype = self.dtype  # float16/float64 values compute in float32, as on the cpu
            if dtype is None or np.dtype(dtype) == x.dtype:
                return x
            x = x.to_host()  # another dtype: converted on the host (no cast kernel)
        a = np.asarray(x)
        if dtype is None:
            dtype = _held_dtype(a.dtype, self.dtype)
        return self.array_type.from_host(np.asarray(a, dtype=dtype, order="C"))  # 0-d stays 0-d

    def upload(self, x):
        """x as a DeviceArray keeping its dtype (a variable's value, a batch)."""
        if self.holds(x):
            return x
        a = np.asarray(host_value(getattr(x, "_value", x)))
        _held_dtype(a.dtype, self.dtype)  # (refuses strings and objects)
        return self.array_type.from_host(np.asarray(a, order="C"))

    def upload_batch(self, arrays):
        """Host arrays (None kept) as DeviceArrays, through one pinned staging buffer and one
        synchronization (the step's batch); device buffers are kept as they are."""
        out = [None if a is None else getattr(a, "_value", a) for a in arrays]
        todo = [i for i, a in enumerate(out) if a is not None and not self.holds(a)
                and np.asarray(a).dtype.kind in "fiub"]  # (strings stay on the host)
        if todo:
            host = []
            for i in todo:
                a = np.asarray(host_value(out[i]))
                host.append(np.asarray(a, dtype=_held_dtype(a.dtype, self.dtype), order="C"))
            for i, d in zip(todo, self.module.upload_pinned(host)):
                out[i] = d
        return out

    def to_numpy(self, x):
        """A NumPy copy of a DeviceArray (NumPy input is returned as is)."""
        if isinstance(x, self.array_type):
            return x.to_host()
        return np.asarray(x)

    @staticmethod
    def contiguous(x):
        return x  # DeviceArrays are C-contiguous by construction

    def copy_into(self, dst, src):
        """dst[...] = src: a device copy, or an upload of host data converted to dst's dtype."""
        if isinstance(src, self.array_type) and src.dtype != dst.dtype:
            src = src.to_host()
        dst[...] = src

    @staticmethod
    def fill(dst, value):
        dst.fill(float(value))

    def add(self, a, b):
        """a + b for float32 DeviceArrays of one shape (the tape's gradient sums)."""
        out = self.empty(a.shape)
        self.module.array_add(out, a, self.asarray(b))
        return out

    def zeros_like(self, a):
        return self.zeros(a.shape, a.dtype)

    def ones_like(self, a):
        out = self.empty(a.shape, a.dtype)
        out.fill(1.0)
        return out

    def scale(self, a, alpha):
        """alpha * a for a float32 DeviceArray."""
        out = self.empty(a.shape)
        self.module.array_scale(out, self.asarray(a), float(alpha))
        return out

    def axpby(self, a, b, alpha, beta):
        """alpha * a + beta * b for float32 DeviceArrays of one shape."""
        out = self.empty(a.shape)
        self.module.array_axpby(out, a, self.asarray(b), float(alpha), float(beta))
        return out

    def copy(self, a):
        out = self.empty(a.shape, a.dtype)
        out.copy_from(a)
        return out

    def sum_scaled(self, a, alpha):
        """alpha * sum(a) as a 0-d DeviceArray (float64 accumulation, on the device)."""
        out = self.empty(())
        self.module.array_sum(out, a, float(alpha))
        return out

    def broadcast_scalar(self, shape, s, alpha):
        """A DeviceArray of `shape` filled with alpha * s, s a one-element DeviceArray."""
        out = self.empty(shape)
        self.module.array_broadcast_scalar(out, self.asarray(s), float(alpha))
        return out

    def shares_memory(self, a, b):
        return isinstance(b, self.array_type) and a.size > 0 and b.size > 0 \
            and a.block_ptr == b.block_ptr

    def synchronize(self):
        """Waits for the work queued on fkeras' CUDA stream."""
        self.module.synchronize()

    def memory_stats(self):
        """The caching allocator's figures (allocated/cached/peak bytes, cudaMalloc count)."""
        return self.module.memory_stats()

    def empty_cache(self):
        """Returns cached, unused GPU memory to the driver."""
        self.module.empty_cache()

    def __repr__(self):
        return f"<Device cuda:0 ({self.module.device_info(0)['name']})>"


def _held_dtype(dtype, float_dtype):
    """The dtype a host array of `dtype` gets on the device: float64 becomes the device float
    dtype (float32, as on the cpu device); bool, integers, float16 and float32 are kept."""
    if dtype.kind in "biu" or dtype in (np.float16, np.float32):
        return dtype
    if dtype.kind == "f":
        return float_dtype
    raise TypeError(f"The cuda device holds bool, integer and float16/32 arrays; received "
                    f"{dtype}.")


def _shape(shape):
    if isinstance(shape, (int, np.integer)):
        return [int(shape)]
    return [int(d) for d in shape]


def make_device():
    """The CudaDevice; RuntimeError when fkeras has no CUDA module or the machine no GPU."""
    return CudaDevice(cuda_module())


def describe_gpus():
    """Lines describing each GPU (name, memory, compute capability), or why there are none."""
    cuda = _native._C_cuda
    if cuda is None:
        return ["gpus: none (" + _BUILT_WITHOUT + ")"]
    n = cuda.device_count()
    if n == 0:
        return [f"gpus: none ({cuda.status()})"]
    lines = []
    for i in range(n):
        info = cuda.device_info(i)
        major, minor = info["compute_capability"]
        lines.append(
            f"gpu {i}: {info['name']}, {info['total_memory'] / 2**30:.1f} GiB, compute capability "
            f"{major}.{minor}, {info['multiprocessors']} SMs"
        )
    return lines
