"""`keras.preprocessing.sequence`: `pad_sequences` (the `fkeras.utils` function)."""

from fkeras.utils import pad_sequences

__all__ = ["pad_sequences"]
