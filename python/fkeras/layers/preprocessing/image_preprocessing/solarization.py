"""Solarization: inverts the values above a threshold (after an optional addition)."""

import numpy as np

from fkeras.layers.preprocessing.image_preprocessing.base import BaseImagePreprocessingLayer
from fkeras.layers.preprocessing.image_preprocessing.geometric import split_factor

_ERROR = ("The `addition_factor` and `threshold_factor` arguments should be a number (or a list "
          "of two numbers) in the range [0, 1]. ")


def _check(value):
    if value > 1.0 or value < 0:
        raise ValueError(_ERROR + f"Received: input_number={value}")


def _range(factor, name):
    lower, upper = split_factor(factor, name, _ERROR, _check)
    return (0, factor) if not isinstance(factor, (tuple, list)) else (lower, upper)


class Solarization(BaseImagePreprocessingLayer):
    """Solarizes images during training (the identity at inference), as Keras 3.

    On the [0, 255] scale: r = clip(x + a, 0, 255), out = r where r < t else 255 - r, with
    a ~ U(addition_factor[0], 255 * addition_factor[1]) and t likewise from
    `threshold_factor` (so the defaults, t = 0, invert every value).

    Args:
        addition_factor: a number in [0, 1] (the range [0, f]) or a pair.
        threshold_factor: a number in [0, 1] or a pair.
        value_range: (min, max) of the input values.
        seed: int or None.

    Example:
    ```python
    y = Solarization(threshold_factor=(0.5, 0.5), value_range=(0, 1))(images)
    ```
    """

    _USE_BASE_FACTOR = False

    def __init__(self, addition_factor=0.0, threshold_factor=0.0, value_range=(0, 255),
                 seed=None, **kwargs):
        super().__init__(**kwargs)
        self._make_generator(seed)
        self.addition_factor = _range(addition_factor, "addition_factor")
        self.threshold_factor = _range(threshold_factor, "threshold_factor")
        self._set_value_range(value_range)

    def get_random_transformation(self, data, training=True, seed=None):
        if not training:
            return None
        shape = (self._batch_size(data), 1, 1, 1)
        rng = self._rng(seed)
        additions = rng.uniform(self.addition_factor[0], self.addition_factor[1] * 255, shape)
        thresholds = rng.uniform(self.threshold_factor[0], self.threshold_factor[1] * 255, shape)
        return {"additions": additions.astype(np.float32),
                "thresholds": thresholds.astype(np.float32)}

    def transform_images(self, images, transformation, training=True):
        images = np.asarray(images, dtype=np.float32)
        if not training or transformation is None:
            return images
        scaled = self._transform_value_range(images, self.value_range, (0, 255))
        r = np.clip(scaled + transformation["additions"], 0, 255)
        r = np.where(r < transformation["thresholds"], r, 255 - r)
        return self._transform_value_range(r, (0, 255), self.value_range).astype(np.float32)

    def transform_segmentation_masks(self, segmentation_masks, transformation, training=True):
        return segmentation_masks

    def get_config(self):
        config = super().get_config()
        config.update({"value_range": self.value_range,
                       "addition_factor": self.addition_factor,
                       "threshold_factor": self.threshold_factor, "seed": self.seed})
        return config
