"""Utilities (keras.utils)."""

from fkeras.utils.file_utils import get_file
from fkeras.utils.numerical_utils import normalize, to_categorical
from fkeras.utils.progbar import Progbar
from fkeras.utils.random import set_random_seed
from fkeras.utils.sequence_utils import pad_sequences


def clear_session():
    """Resets the automatic layer names (`dense`, `dense_1`, ... start again)."""
    from fkeras.engine import naming

    naming.reset()


__all__ = ["Progbar", "clear_session", "get_file", "normalize", "pad_sequences",
           "set_random_seed", "to_categorical"]
