"""Cropping1D, Cropping2D, Cropping3D: elements removed before and after spatial axes."""

from fkeras import config
from fkeras.engine.input_spec import InputSpec
from fkeras.layers.layer import Layer
from fkeras.layers.reshaping.spatial_args import nonneg_tuple, pair_per_axis, spatial_axes
from fkeras.ops.padding import crop


class _Cropping(Layer):
    rank = None

    def _setup(self, cropping, data_format):
        self.data_format = config.data_format_or_default(data_format)
        self.cropping = cropping
        self.input_spec = InputSpec(ndim=self.rank + 2)
        self.built = True

    def _widths(self, ndim):
        widths = [(0, 0)] * ndim
        pairs = (self.cropping,) if self.rank == 1 else self.cropping
        for axis, pair in zip(spatial_axes(self.rank, self.data_format), pairs):
            widths[axis] = tuple(pair)
        return widths

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

    def get_config(self):
        config_ = super().get_config()
        config_.update({"cropping": self.cropping, "data_format": self.data_format})
        return config_


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
