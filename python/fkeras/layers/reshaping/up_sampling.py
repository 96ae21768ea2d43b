"""UpSampling1D, UpSampling2D, UpSampling3D: integer-factor upsampling of spatial axes.

Nearest repeats each element; UpSampling2D's "bilinear" blends with half-pixel centres as
Keras 3 (ops.image.resize without antialiasing; see fkeras/ops/resize.py).
"""

import numpy as np

from fkeras import config, ops
from fkeras.layers.reshaping.base_spatial import SpatialResizing
from fkeras.layers.reshaping.spatial_args import standardize_tuple
from fkeras.ops.resize import upsample_bilinear, upsample_nearest


class _UpSampling(SpatialResizing):
    arg_name = "size"

    def call(self, inputs):
        return upsample_nearest(inputs, self._axes(), self._per_axis())

    def compute_output_shape(self, input_shape):
        shape = list(input_shape)
        for axis, f in zip(self._axes(), self._per_axis()):
            if shape[axis] is not None:
                shape[axis] *= f
        return tuple(shape)


class UpSampling1D(_UpSampling):
    """Repeats each time step `size` times: (N, T, C) -> (N, T * size, C).

    Args:
        size: positive int.

    Example:
    ```python
    y = UpSampling1D(3)(Input(shape=(4, 2)))   # y.shape == (None, 12, 2)
    ```
    """

    rank = 1

    def __init__(self, size=2, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(size, (int, np.integer)) or isinstance(size, bool):
            raise TypeError(f"Expected an integer value for `size`, got {type(size)}.")
        if size <= 0:
            raise ValueError(f"Argument `size` should be a positive integer. Received: "
                             f"size={size}")
        self._setup(int(size), "channels_last")

    def get_config(self):
        config_ = super().get_config()
        del config_["data_format"]
        return config_


class UpSampling2D(_UpSampling):
    """Upsamples rows and columns by integer factors.

    Args:
        size: an int or a pair (row factor, column factor).
        data_format: "channels_last", "channels_first" or None.
        interpolation: "nearest" (repeat) or "bilinear" (half-pixel centres, edges clamped,
            exactly as Keras 3 on every backend).

    Example:
    ```python
    y = UpSampling2D(2, interpolation="bilinear")(Input(shape=(4, 4, 3)))  # (None, 8, 8, 3)
    ```
    """

    rank = 2

    def __init__(self, size=(2, 2), data_format=None, interpolation="nearest", **kwargs):
        super().__init__(**kwargs)
        data_format = config.data_format_or_default(data_format)
        size = standardize_tuple(size, 2, "size")
        self.interpolation = str(interpolation).lower()
        if self.interpolation not in ("nearest", "bilinear"):
            raise ValueError("`interpolation` argument should be one of: 'nearest', "
                             f"'bilinear'. Received: interpolation={interpolation}. (fkeras "
                             "does not implement Keras's bicubic/lanczos3/lanczos5 here.)")
        self._setup(size, data_format)

    def call(self, inputs):
        if self.interpolation == "nearest":
            return super().call(inputs)
        x = inputs
        if self.data_format == "channels_first":
            x = ops.transpose(x, (0, 2, 3, 1))
        y = upsample_bilinear(x, self.size)
        if self.data_format == "channels_first":
            y = ops.transpose(y, (0, 3, 1, 2))
        return y

    def get_config(self):
        config_ = super().get_config()
        config_["interpolation"] = self.interpolation
        return config_


class UpSampling3D(_UpSampling):
    """Repeats each element `size[i]` times along spatial axis i (nearest).

    Args:
        size: an int or 3 ints.
        data_format: "channels_last", "channels_first" or None.

    Example:
    ```python
    y = UpSampling3D(2)(Input(shape=(2, 3, 4, 1)))   # y.shape == (None, 4, 6, 8, 1)
    ```
    """

    rank = 3

    def __init__(self, size=(2, 2, 2), data_format=None, **kwargs):
        super().__init__(**kwargs)
        data_format = config.data_format_or_default(data_format)
        self._setup(standardize_tuple(size, 3, "size"), data_format)
