"""The `cuda` device: kernels from fkeras._C_cuda on device arrays."""

from fkeras import _native


def make_device():
    cuda = _native._C_cuda
    if cuda is None:
        raise RuntimeError(
            "fkeras was built without CUDA (fkeras._C_cuda is absent): rebuild with nvcc on "
            "the PATH (FKERAS_CUDA=ON makes it required)."
        )
    if cuda.device_count() == 0:
        raise RuntimeError(f"fkeras cannot use the cuda device: {cuda.status()}.")
    raise RuntimeError("fkeras: the cuda device's kernels are not available in this build yet.")
