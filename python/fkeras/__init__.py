"""fkeras: the Keras API on a small, fast numeric core of its own."""

from fkeras.version import __version__
from fkeras import _native  # noqa: F401  (checks the build before anything else loads)
from fkeras import backend

__all__ = ["__version__", "backend"]
