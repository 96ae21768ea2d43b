"""fkeras: the Keras API on a small, fast numeric core of its own.

`import fkeras as keras` and write Keras code: `keras.layers.Dense`, `keras.Model`, ...
"""

from fkeras._version import __version__
from fkeras import _native  # noqa: F401  (checks the build before anything else loads)
from fkeras import backend, config, ops
from fkeras import activations, constraints, initializers, regularizers
from fkeras import layers, models, random, utils
from fkeras.backend import device
from fkeras.engine.keras_tensor import KerasTensor
from fkeras.engine.tape import GradientTape
from fkeras.engine.variable import Variable
from fkeras.layers import Input, InputSpec, Layer
from fkeras.models import Model, Sequential
from fkeras.utils import clear_session



def version():
    """The fkeras version string (keras.version())."""
    return __version__


__all__ = [
    "GradientTape", "Input", "InputSpec", "KerasTensor", "Layer", "Model", "Sequential",
    "Variable", "__version__", "activations", "backend", "clear_session", "config",
    "constraints", "device", "initializers", "layers", "models", "ops", "random", "regularizers",
    "utils", "version",
]
