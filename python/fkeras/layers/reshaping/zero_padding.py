"""ZeroPadding1D, ZeroPadding2D, ZeroPadding3D: zeros added before and after spatial axes."""

from fkeras import config
from fkeras.engine.input_spec import InputSpec
from fkeras.layers.layer import Layer
from fkeras.layers.reshaping.spatial_args import nonneg_tuple, pair_per_axis, spatial_axes
from fkeras.ops.padding import pad


class _ZeroPadding(Layer):
    rank = None

    def _setup(self, padding, data_format):
        self.data_format = config.data_format_or_default(data_format)
        self.padding = padding
        self.input_spec = InputSpec(ndim=self.rank + 2)
        self.built = True

    def _widths(self, ndim):
        widths = [(0, 0)] * ndim
        pairs = (self.padding,) if self.rank == 1 else self.padding
        for axis, pair in zip(spatial_axes(self.rank, self.data_format), pairs):
            widths[axis] = tuple(pair)
        return widths

    def call(self, inputs):
        return pad(inputs, self._widths(self.rank + 2))

    def compute_output_shape(self, input_shape):
        shape = list(input_shape)
        for axis, (b, a) in enumerate(self._widths(len(shape))):
            if shape[axis] is not None:
                shape[axis] += b + a
        return tuple(shape)

    def get_config(self):
        config_ = super().get_config()
        config_.update({"padding": self.padding, "data_format": self.data_format})
        return config_


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
