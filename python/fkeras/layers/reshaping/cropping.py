"""Cropping1D, Cropping2D, Cropping3D: elements removed before and after spatial axes."""

from fkeras.layers.reshaping.base_spatial import SpatialResizing
from fkeras.layers.reshaping.spatial_args import nonneg_tuple, pair_per_axis
from fkeras.ops.padding import crop


class _Cropping(SpatialResizing):
    arg_name = "cropping"

    def call(self, inputs):
        self.compute_output_shape(tuple(inputs.shape))
        return crop(inputs, self._widths(self.rank + 2))

    def compute_output_shape(self, input_shape):
        shape = list(input_shape)
        for axis, (b, a) in enumerate(self._widths(len(shape))):
            if shape[axis] is not None:
                if b + a >= shape[axis]:
                    raise ValueError(
                        "Values in `cropping` argument should be smaller than the "
                        "corresponding spatial dimension of the input. Received: "
                        f"input_shape={tuple(input_shape)}, cropping={self.cropping}")
                shape[axis] -= b + a
        return tuple(shape)


class Cropping1D(_Cropping):
    """Crops the time axis of (N, T, C).

    Args:
        cropping: an int (both sides) or a pair (before, after).

    Example:
    ```python
    y = Cropping1D((1, 2))(Input(shape=(8, 3)))   # y.shape == (None, 5, 3)
    ```
    """

    rank = 1

    def __init__(self, cropping=(1, 1), **kwargs):
        super().__init__(**kwargs)
        self._setup(nonneg_tuple(cropping, 2, "cropping"), "channels_last")

    def get_config(self):
        config_ = super().get_config()
        del config_["data_format"]
        return config_


class Cropping2D(_Cropping):
    """Crops rows and columns of an image batch.

    Args:
        cropping: an int, a pair (symmetric rows, symmetric columns), or
            ((top, bottom), (left, right)).
        data_format: "channels_last", "channels_first" or None.

    Example:
    ```python
    y = Cropping2D(((1, 0), (2, 1)))(Input(shape=(6, 8, 3)))   # (None, 5, 5, 3)
    ```
    """

    rank = 2

    def __init__(self, cropping=((0, 0), (0, 0)), data_format=None, **kwargs):
        super().__init__(**kwargs)
        self._setup(pair_per_axis(cropping, 2, "cropping", "crop"), data_format)


class Cropping3D(_Cropping):
    """Crops the three spatial axes of a volume batch.

    Args:
        cropping: an int, 3 ints (symmetric per axis), or 3 (before, after) pairs.
        data_format: "channels_last", "channels_first" or None.

    Example:
    ```python
    y = Cropping3D(1)(Input(shape=(6, 6, 6, 2)))   # y.shape == (None, 4, 4, 4, 2)
    ```
    """

    rank = 3

    def __init__(self, cropping=((1, 1), (1, 1), (1, 1)), data_format=None, **kwargs):
        super().__init__(**kwargs)
        self._setup(pair_per_axis(cropping, 3, "cropping", "crop"), data_format)
