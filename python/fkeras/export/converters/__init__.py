"""Per-layer ONNX converters, in one table keyed by layer class (`CONVERTERS`).

Importing this package registers every converter module; `find_converter(layer)` looks a
layer up and raises a ValueError naming it when it has no conversion.
"""

from fkeras.export.converters import (  # noqa: F401  (each module registers its converters)
    activations,
    attention,
    conv,
    core,
    merging,
    normalization,
    ops,
    pooling,
    reshaping,
    rnn,
)
from fkeras.export.converters.base import CONVERTERS, find_converter  # noqa: F401
