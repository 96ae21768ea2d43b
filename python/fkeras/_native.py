"""Loads the compiled modules and checks that they were built from this source tree.

`fkeras._C` (CPU kernels) is required; `fkeras._C_cuda` is optional and may be absent (built
without nvcc) or present on a machine without a GPU (it then reports "no CUDA device").
"""

from fkeras._version import __version__

try:
    from fkeras import _C
except ImportError as e:  # pragma: no cover - only on a broken install
    raise ImportError(
        "fkeras: the compiled module fkeras._C could not be imported "
        f"({e}). Reinstall with `pip install .` from the source tree."
    ) from e



def check_build(module, expected=__version__):
    """Raises ImportError if a compiled module was built from another version of the source."""
    if module.__version__ != expected:
        raise ImportError(
            f"fkeras: stale build: {module.__name__} was built for version {module.__version__} "
            f"but the Python package is {expected}. Rebuild with `pip install .`."
        )


check_build(_C)

try:
    from fkeras import _C_cuda
except ImportError:
    _C_cuda = None

if _C_cuda is not None:
    check_build(_C_cuda)

__all__ = ["_C", "_C_cuda", "check_build"]
