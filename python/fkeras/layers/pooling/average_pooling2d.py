"""AveragePooling2D (defined with the 1-D and 3-D variants in average_pooling.py)."""

from fkeras.layers.pooling.average_pooling import AveragePooling2D  # noqa: F401
