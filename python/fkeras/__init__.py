"""fkeras: the Keras API on a small, fast numeric core of its own.

`import fkeras as keras` and write Keras code: `keras.layers.Dense`, `keras.Model`, ...
"""

from fkeras._version import __version__
from fkeras import _native  # noqa: F401  (checks the build before anything else loads)
from fkeras import backend, config, ops
from fkeras import activations, constraints, initializers, regularizers
from fkeras import layers, models, random, utils
from fkeras import callbacks, losses, metrics, optimizers
from fkeras import distribution, dtype_policies
from fkeras.dtype_policies import DTypePolicy, FloatDTypePolicy
from fkeras.backend import device
from fkeras.engine.keras_tensor import KerasTensor
from fkeras.engine.tape import GradientTape
from fkeras.engine.tensor import Tensor
from fkeras.engine.variable import Variable
from fkeras.layers import Input, InputSpec, Layer
from fkeras.models import Model, Sequential
from fkeras.utils import clear_session
from fkeras.engine.operation import Function, Operation
from fkeras.engine.scopes import RematScope, name_scope, remat
from fkeras.initializers import Initializer
from fkeras.losses import Loss
from fkeras.metrics import Metric
from fkeras.optimizers import Optimizer
from fkeras.regularizers import Regularizer
from fkeras import quantizers
from fkeras.quantizers import Quantizer



def version():
    """The fkeras version string (keras.version())."""
    return __version__


__all__ = [
    "DTypePolicy", "FloatDTypePolicy", "GradientTape", "Input", "InputSpec", "KerasTensor",
    "Layer", "Model", "Sequential", "Tensor", "Variable", "__version__", "activations",
    "applications", "backend", "callbacks", "clear_session", "config", "constraints",
    "datasets", "device", "distribution", "dtype_policies", "export", "initializers", "layers",
    "losses", "metrics", "models", "ops", "optimizers", "random", "regularizers", "saving",
    "utils", "version", "Function", "Operation", "RematScope", "name_scope", "remat",
    "Initializer", "Loss", "Metric", "Optimizer", "Regularizer",
]
__all__ += ["mixed_precision", "preprocessing", "tree"]
__all__ += ["quantizers", "Quantizer"]


def __getattr__(name):
    # fkeras.datasets, fkeras.saving and fkeras.applications load on first use (training
    # needs none of them).
    if name in ("applications", "datasets", "export", "saving"):
        import importlib

        return importlib.import_module(f"fkeras.{name}")
    if name in ("mixed_precision", "preprocessing", "tree"):  # Keras 3's other namespaces
        import importlib

        return importlib.import_module(f"fkeras.{name}")
    raise AttributeError(f"module 'fkeras' has no attribute '{name}'")
