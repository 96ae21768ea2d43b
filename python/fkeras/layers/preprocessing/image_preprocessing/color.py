"""Shared pieces of the colour augmentation layers: a per-image draw of the factor range and
channels-last views of the images."""

import numpy as np

from fkeras.layers.preprocessing.image_preprocessing.base import BaseImagePreprocessingLayer


class ColorLayer(BaseImagePreprocessingLayer):
    """Base of the layers whose transformation is {"factor": (N,) values ~ U(self.factor)};
    `_adjust(nhwc_images, factor)` does the work on float64 NHWC arrays."""

    _TRANSFORM_KEY = "factor"

    def get_random_transformation(self, data, training=True, seed=None):
        batch = self._batch_size(data)
        factor = self._rng(seed).uniform(self.factor[0], self.factor[1], size=(batch,))
        return {self._TRANSFORM_KEY: self._post_draw(factor).astype(np.float32)}

    def _post_draw(self, factor):
        return factor

    def transform_images(self, images, transformation, training=True):
        images = np.asarray(images, dtype=np.float32)
        if not training or transformation is None:
            return images
        factor = np.asarray(transformation[self._TRANSFORM_KEY], np.float64).reshape(-1)
        out = self._adjust(self.to_nhwc(images).astype(np.float64), factor)
        return self.from_nhwc(out)

    def transform_segmentation_masks(self, segmentation_masks, transformation, training=True):
        return segmentation_masks

    def get_config(self):
        config = super().get_config()
        config.update({"factor": self.factor, "value_range": self.value_range,
                       "seed": self.seed})
        return config


def check_channels(shape, data_format):
    """Keras's rank and 3-channel checks of RandomColorDegeneration's output shape."""
    axis = -1 if data_format == "channels_last" else -3
    if len(shape) not in (3, 4):
        raise ValueError("Invalid images rank: expected rank 3 (single image) or rank 4 (batch "
                         f"of images). Received: input_shape={tuple(shape)}")
    channels = shape[axis]
    if channels is not None and channels != 3:
        raise ValueError(f"Input images must have 3 channels, but received images with "
                         f"{channels} channels.")
