"""RandomInvert: replaces images by max - x at random."""

import numpy as np

from fkeras.layers.preprocessing.image_preprocessing.base import BaseImagePreprocessingLayer


class RandomInvert(BaseImagePreprocessingLayer):
    """Randomly inverts images during training (the identity at inference).

    With probability p ~ U(factor) per image, x becomes value_range[1] - x.

    Args:
        factor: a number in [0, 1] or a pair, the probability range.
        value_range: (min, max) of the input values.
        seed: int or None.
        data_format: "channels_last", "channels_first" or None.

    Example:
    ```python
    y = RandomInvert(factor=1.0, value_range=(0, 1))(images)   # 1 - x
    ```
    """

    _USE_BASE_FACTOR = False
    _FACTOR_BOUNDS = (0, 1)

    def __init__(self, factor=1.0, value_range=(0, 255), seed=None, data_format=None,
                 **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self._set_factor(factor)
        self.value_range = value_range
        self._make_generator(seed)

    def get_random_transformation(self, data, training=True, seed=None):
        if not training:
            return None
        return {"apply_inversion": self._apply_mask(self._rng(seed), self._batch_size(data))}

    def transform_images(self, images, transformation, training=True):
        images = np.asarray(images, dtype=np.float32)
        if not training or transformation is None:
            return images
        apply = np.asarray(transformation["apply_inversion"]).reshape(-1, 1, 1, 1)
        return np.where(apply, self.value_range[1] - images, images).astype(np.float32)

    def transform_segmentation_masks(self, segmentation_masks, transformation, training=True):
        return segmentation_masks

    def get_config(self):
        config = super().get_config()
        config.update({"factor": self.factor, "value_range": self.value_range,
                       "seed": self.seed})
        return config
