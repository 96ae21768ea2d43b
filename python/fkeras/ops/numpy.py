"""keras.ops.numpy: the NumPy-like ops, the same functions as `fkeras.ops.<name>`."""

from fkeras.ops import groupings as _groupings

__getattr__ = _groupings.resolver(_groupings.NUMPY, __name__)


def __dir__():
    return sorted(_groupings.NUMPY)
