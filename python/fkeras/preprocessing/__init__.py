"""Keras 3's `keras.preprocessing` module: its `image` and `sequence` submodules and the
dataset builders, the same functions as in `fkeras.utils`."""

from fkeras.preprocessing import image, sequence
from fkeras.utils import (image_dataset_from_directory, text_dataset_from_directory,
                          timeseries_dataset_from_array)

__all__ = ["image", "image_dataset_from_directory", "sequence", "text_dataset_from_directory",
           "timeseries_dataset_from_array"]
