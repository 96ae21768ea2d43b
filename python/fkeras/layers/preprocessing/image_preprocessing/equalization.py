"""Equalization: histogram equalization per channel (deterministic, training only)."""

import numpy as np

from fkeras.layers.preprocessing.image_preprocessing.base import (
    BaseImagePreprocessingLayer,
    standardize_data_format,
)


def equalize_channel(channel, bins):
    """One channel (any shape, values on [0, 255]) equalized over all its values (Keras 3
    pools the whole batch into one histogram per channel)."""
    idx = np.clip((channel.astype(np.float32) * np.float32((bins - 1) / 255.0))
                  .astype(np.int32), 0, bins - 1)
    hist = np.bincount(idx.reshape(-1), minlength=bins)
    if np.count_nonzero(hist) <= 1:
        return channel
    cdf = np.cumsum(hist)
    cdf_min = cdf[np.nonzero(cdf)[0][0]]
    denominator = cdf[-1] - cdf_min
    denominator = 1 if denominator == 0 else denominator
    lut = np.clip(np.round((cdf - cdf_min) * 255.0 / denominator), 0, 255)
    lookup = np.clip(channel / 255.0 * (bins - 1), 0, bins - 1).astype(np.int32)
    return lut[lookup]


class Equalization(BaseImagePreprocessingLayer):
    """Equalizes the histogram of each channel during training (the identity at inference,
    as Keras 3). The histogram of a channel is taken over the whole batch.

    Args:
        value_range: (min, max) of the input values.
        bins: the number of histogram bins.
        data_format: "channels_last", "channels_first" or None.

    Example:
    ```python
    y = Equalization(value_range=(0, 1))(images)
    ```
    """

    def __init__(self, value_range=(0, 255), bins=256, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.bins = bins
        self._set_value_range(value_range)
        self.data_format = standardize_data_format(data_format)

    def _transform_images(self, images, transformation, interpolation):
        x = self._transform_value_range(images, self.value_range, (0, 255))
        out = np.stack([equalize_channel(x[..., c], self.bins) for c in range(x.shape[-1])],
                       axis=-1)
        return self._transform_value_range(out.astype(np.float64), (0, 255), self.value_range)

    def transform_images(self, images, transformation=None, training=True):
        return super().transform_images(images, {} if training else None, training)

    def transform_segmentation_masks(self, segmentation_masks, transformation, training=True):
        return segmentation_masks

    def get_config(self):
        config = super().get_config()
        config.update({"bins": self.bins, "value_range": self.value_range})
        return config
