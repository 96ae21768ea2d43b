"""The `cuda` device: DeviceArrays from fkeras._C_cuda and the kernels bound there.

What placement does today (see docs/cuda.md): `fkeras.device("cuda")` (also "cuda:0", "gpu")
returns a `CudaDevice` whose `empty`/`zeros`/`asarray` allocate `fkeras._C_cuda.DeviceArray`s
through the caching allocator, and whose `kernels` table holds the `_C_cuda` functions named
like the CPU kernels (only the families bound in this build: `missing_kernel_names` lists the
rest). Layers, variables, optimizers and `fit` do not yet run on it.
"""

import numpy as np

from fkeras import _native

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
    """The GPU device: float32 DeviceArrays and the `_C_cuda` kernel table.

    Args:
        module: the `fkeras._C_cuda` module.
    """

    name = "cuda"

    def __init__(self, module):
        self.module = module
        self.dtype = np.dtype(np.float32)
        names = kernel_names()
        self.kernels = {n: getattr(module, n) for n in names if hasattr(module, n)}
        self.native_kernel_names = frozenset(self.kernels)
        self.missing_kernel_names = frozenset(n for n in names if n not in self.kernels)

    def empty(self, shape, dtype="float32"):
        """An uninitialised DeviceArray of `shape`."""
        return self.module.DeviceArray(_shape(shape), str(np.dtype(dtype)))

    def zeros(self, shape, dtype="float32"):
        """A DeviceArray of `shape` filled with zeros."""
        return self.module.DeviceArray.zeros(_shape(shape), str(np.dtype(dtype)))

    def asarray(self, x, dtype=None):
        """`x` as a DeviceArray (itself if it already is one of the right dtype; else a copy
        of the host data, float32 unless `dtype` or an integer array says otherwise)."""
        if isinstance(x, self.module.DeviceArray):
            if dtype is None or np.dtype(dtype) == np.dtype(x.dtype):
                return x
            raise ValueError(
                f"CudaDevice.asarray: cannot convert a {x.dtype} DeviceArray to {np.dtype(dtype)} "
                "on the device."
            )
        a = np.asarray(x)
        if dtype is None:
            dtype = a.dtype if a.dtype in (np.int32, np.int64) else self.dtype
        return self.module.DeviceArray.from_host(np.ascontiguousarray(a, dtype=dtype))

    def to_numpy(self, x):
        """A NumPy copy of a DeviceArray (NumPy input is returned as is)."""
        if isinstance(x, self.module.DeviceArray):
            return x.to_host()
        return np.asarray(x)

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
