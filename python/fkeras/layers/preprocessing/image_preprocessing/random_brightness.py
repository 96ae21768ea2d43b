"""RandomBrightness: adds a random offset to every pixel of an image."""

import numpy as np

from fkeras.layers.preprocessing.image_preprocessing.base import BaseImagePreprocessingLayer

_VALUE_RANGE_ERROR = "The `value_range` argument should be a list of two numbers. "


class RandomBrightness(BaseImagePreprocessingLayer):
    """Randomly adjusts brightness during training (the identity at inference).

    Each image gets delta = f * (max - min) added, f drawn from the factor range, and is
    clipped to `value_range`.

    Args:
        factor: a number in [-1, 1] (the range [-factor, factor]) or a pair (lower, upper).
        value_range: (min, max) of the input values.
        seed: int or None.

    Example:
    ```python
    y = RandomBrightness((0.1, 0.1), value_range=(0, 1))(images)   # + 0.1
    ```
    """

    def __init__(self, factor, value_range=(0, 255), seed=None, **kwargs):
        super().__init__(factor=factor, **kwargs)
        self._make_generator(seed)
        if not isinstance(value_range, (tuple, list)) or len(value_range) != 2:
            raise ValueError(_VALUE_RANGE_ERROR + f"Received: value_range={value_range}")
        self.value_range = sorted(value_range)

    def get_random_transformation(self, data, training=True, seed=None):
        images = data["images"] if isinstance(data, dict) else data
        shape = (np.shape(images)[0], 1, 1, 1)
        if not training:
            return {"rgb_delta": np.zeros(shape, np.float32)}
        delta = self._rng(seed).uniform(self.factor[0], self.factor[1], size=shape)
        delta = delta * (self.value_range[1] - self.value_range[0])
        return {"rgb_delta": delta.astype(np.float32)}

    def transform_images(self, images, transformation, training=True):
        images = np.asarray(images, dtype=np.float32)
        if not training:
            return images
        out = images + np.asarray(transformation["rgb_delta"], np.float32)
        return np.clip(out, self.value_range[0], self.value_range[1]).astype(np.float32)

    def transform_segmentation_masks(self, segmentation_masks, transformation, training=True):
        return segmentation_masks

    def get_config(self):
        config = super().get_config()
        config.update({"factor": self.factor, "value_range": self.value_range,
                       "seed": self.seed})
        return config
