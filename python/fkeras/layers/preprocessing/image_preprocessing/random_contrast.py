"""RandomContrast: scales each image's deviation from its mean by a random factor."""

import numpy as np

from fkeras.layers.preprocessing.image_preprocessing.base import BaseImagePreprocessingLayer


class RandomContrast(BaseImagePreprocessingLayer):
    """Randomly adjusts contrast during training (the identity at inference).

    Each image and channel becomes (x - mean) * f + mean, the mean over the spatial axes, with
    f drawn from [1 - lower, 1 + upper]; the result is clipped to `value_range`.

    Args:
        factor: a number in [0, 1] (the range [1 - factor, 1 + factor]) or a pair.
        value_range: (min, max) of the input values, e.g. (0, 255) or (0, 1).
        seed: int or None.

    Example:
    ```python
    y = RandomContrast((0.5, 0.5), value_range=(0, 1))(images)
    ```
    """

    _FACTOR_BOUNDS = (0, 1)

    def __init__(self, factor, value_range=(0, 255), seed=None, **kwargs):
        super().__init__(**kwargs)
        self._set_factor(factor)
        self.value_range = value_range
        self._make_generator(seed)

    def get_random_transformation(self, data, training=True, seed=None):
        images = data["images"] if isinstance(data, dict) else data
        shape = (np.shape(images)[0], 1, 1, 1)
        if not training:
            return {"contrast_factor": np.zeros(shape, np.float32)}
        factor = self._rng(seed).uniform(1.0 - self.factor[0], 1.0 + self.factor[1], size=shape)
        return {"contrast_factor": factor.astype(np.float32)}

    def transform_images(self, images, transformation, training=True):
        images = np.asarray(images, dtype=np.float32)
        if not training:
            return images
        axes = (1, 2) if self.data_format == "channels_last" else (2, 3)
        mean = images.mean(axis=axes, keepdims=True, dtype=np.float64)
        factor = np.asarray(transformation["contrast_factor"], np.float64)
        out = (images - mean) * factor + mean
        return np.clip(out, self.value_range[0], self.value_range[1]).astype(np.float32)

    def transform_segmentation_masks(self, segmentation_masks, transformation, training=True):
        return segmentation_masks

    def get_config(self):
        config = super().get_config()
        config.update({"factor": self.factor, "value_range": self.value_range,
                       "seed": self.seed})
        return config
