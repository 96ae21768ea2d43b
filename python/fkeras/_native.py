"""Loads the compiled modules and checks that they were built from this source tree.

`fkeras._C` (CPU kernels) is required; `fkeras._C_cuda` is optional and may be absent (built
without nvcc) or present on a machine without a GPU (it then reports "no CUDA device").
"""

from fkeras.version import __version__

try:
    from fkeras import _C
except ImportError as e:  # pragma: no cover - only on a broken install
    raise ImportError(
        "fkeras: the compiled module fkeras._C could not be imported "
        f"({e}). Reinstall with `pip install .` from the source tree."
    ) from e

if _C.__version__ != __version__:
    raise ImportError(
        f"fkeras: stale build: fkeras._C was built for version {_C.__version__} but the Python "
        f"package is {__version__}. Rebuild with `pip install .`."
    )

try:
    from fkeras import _C_cuda
except ImportError:
    _C_cuda = None

if _C_cuda is not None and _C_cuda.__version__ != __version__:
    raise ImportError(
        f"fkeras: stale build: fkeras._C_cuda was built for version {_C_cuda.__version__} but "
        f"the Python package is {__version__}. Rebuild with `pip install .`."
    )

__all__ = ["_C", "_C_cuda"]
