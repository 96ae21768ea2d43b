"""AutoContrast: stretches each image channel to the full value range (deterministic)."""

import numpy as np

from fkeras.layers.preprocessing.image_preprocessing.base import BaseImagePreprocessingLayer


class AutoContrast(BaseImagePreprocessingLayer):
    """Rescales each image so its darkest value becomes the range's minimum and its
    brightest the maximum, per channel. Applied in training and inference alike (Keras 3);
    a constant image is returned unchanged.

    Args:
        value_range: (min, max) of the input values.

    Example:
    ```python
    y = AutoContrast(value_range=(0, 1))(images)
    ```
    """

    _USE_BASE_FACTOR = False

    def __init__(self, value_range=(0, 255), **kwargs):
        super().__init__(**kwargs)
        self._set_value_range(value_range)

    def transform_images(self, images, transformation=None, training=True):
        original = np.asarray(images, dtype=np.float32)
        x = self._transform_value_range(original.astype(np.float64), self.value_range, (0, 255))
        # Keras reduces over axes (1, 2) of the batch whatever the data format.
        low = x.min(axis=(1, 2), keepdims=True)
        high = x.max(axis=(1, 2), keepdims=True)
        with np.errstate(divide="ignore", invalid="ignore"):
            scale = 255.0 / (high - low)
            out = np.clip(x * scale - low * scale, 0.0, 255.0)
        out = self._transform_value_range(out, (0, 255), self.value_range)
        return np.where(np.isnan(out), original, out).astype(np.float32)

    def transform_segmentation_masks(self, segmentation_masks, transformation, training=True):
        return segmentation_masks

    def get_config(self):
        config = super().get_config()
        config.update({"value_range": self.value_range})
        return config
