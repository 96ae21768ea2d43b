"""ZeroPadding1D, ZeroPadding2D, ZeroPadding3D: zeros added before and after spatial axes."""

from fkeras.layers.reshaping.base_spatial import SpatialResizing
from fkeras.layers.reshaping.spatial_args import nonneg_tuple, pair_per_axis
from fkeras.ops.padding import pad


class _ZeroPadding(SpatialResizing):
    arg_name = "padding"

    def call(self, inputs):
        return pad(inputs, self._widths(self.rank + 2))

    def compute_output_shape(self, input_shape):
        shape = list(input_shape)
        for axis, (b, a) in enumerate(self._widths(len(shape))):
            if shape[axis] is not None:
                shape[axis] += b + a
        return tuple(shape)


class ZeroPadding1D(_ZeroPadding):
    """Pads the time axis of (N, T, C) with zeros.

    Args:
        padding: an int (both sides) or a pair (before, after).
        data_format: "channels_last", "channels_first" or None.

    Example:
    ```python
    y = ZeroPadding1D((1, 2))(Input(shape=(5, 3)))   # y.shape == (None, 8, 3)
    ```
    """

    rank = 1

    def __init__(self, padding=1, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self._setup(nonneg_tuple(padding, 2, "padding"), data_format)


class ZeroPadding2D(_ZeroPadding):
    """Pads the rows and columns of an image batch with zeros.

    Args:
        padding: an int, a pair (symmetric rows, symmetric columns), or
            ((top, bottom), (left, right)).
        data_format: "channels_last", "channels_first" or None.

    Example:
    ```python
    y = ZeroPadding2D(((1, 0), (2, 1)))(Input(shape=(5, 5, 3)))   # (None, 6, 8, 3)
    ```
    """

    rank = 2

    def __init__(self, padding=(1, 1), data_format=None, **kwargs):
        super().__init__(**kwargs)
        self._setup(pair_per_axis(padding, 2, "padding", "pad"), data_format)


class ZeroPadding3D(_ZeroPadding):
    """Pads the three spatial axes of a volume batch with zeros.

    Args:
        padding: an int, 3 ints (symmetric per axis), or 3 (before, after) pairs.
        data_format: "channels_last", "channels_first" or None.

    Example:
    ```python
    y = ZeroPadding3D(1)(Input(shape=(4, 4, 4, 2)))   # y.shape == (None, 6, 6, 6, 2)
    ```
    """

    rank = 3

    def __init__(self, padding=((1, 1), (1, 1), (1, 1)), data_format=None, **kwargs):
        super().__init__(**kwargs)
        self._setup(pair_per_axis(padding, 3, "padding", "pad"), data_format)
