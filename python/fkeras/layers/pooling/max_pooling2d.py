"""MaxPooling2D (defined with the 1-D and 3-D variants in max_pooling.py)."""

from fkeras.layers.pooling.max_pooling import MaxPooling2D  # noqa: F401
