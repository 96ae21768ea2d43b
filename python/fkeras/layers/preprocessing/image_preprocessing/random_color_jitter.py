"""RandomColorJitter: brightness, contrast, saturation and hue jitter in sequence."""

import numpy as np

from fkeras.layers.preprocessing.image_preprocessing.base import BaseImagePreprocessingLayer
from fkeras.layers.preprocessing.image_preprocessing.random_brightness import RandomBrightness
from fkeras.layers.preprocessing.image_preprocessing.random_contrast import RandomContrast
from fkeras.layers.preprocessing.image_preprocessing.random_hue import RandomHue
from fkeras.layers.preprocessing.image_preprocessing.random_saturation import RandomSaturation

_PARTS = (("brightness_factor", "random_brightness", RandomBrightness),
          ("contrast_factor", "random_contrast", RandomContrast),
          ("saturation_factor", "random_saturation", RandomSaturation),
          ("hue_factor", "random_hue", RandomHue))


class RandomColorJitter(BaseImagePreprocessingLayer):
    """Randomly jitters colours during training (the identity at inference).

    Applies, in this order, RandomBrightness, RandomContrast, RandomSaturation and RandomHue
    for each factor that is not None, each with its own draw per call.

    Args:
        value_range: (min, max) of the input values.
        brightness_factor, contrast_factor, saturation_factor, hue_factor: the `factor` of
            the matching layer, or None to skip it.
        seed: int or None.
        data_format: "channels_last", "channels_first" or None.

    Example:
    ```python
    y = RandomColorJitter(value_range=(0, 1), brightness_factor=0.2, hue_factor=0.1)(images)
    ```
    """

    def __init__(self, value_range=(0, 255), brightness_factor=None, contrast_factor=None,
                 saturation_factor=None, hue_factor=None, seed=None, data_format=None,
                 **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.value_range = value_range
        self.brightness_factor = brightness_factor
        self.contrast_factor = contrast_factor
        self.saturation_factor = saturation_factor
        self.hue_factor = hue_factor
        self._make_generator(seed)
        for arg, attr, cls in _PARTS:
            factor = getattr(self, arg)
            part = None if factor is None else \
                cls(factor=factor, value_range=value_range, seed=seed,
                    data_format=self.data_format)
            setattr(self, attr, part)

    def get_random_transformation(self, data, training=True, seed=None):
        if not training:
            return None
        rng = self._rng(seed)
        return {"seeds": [int(s) for s in rng.integers(0, 2**62, size=len(_PARTS))]}

    def transform_images(self, images, transformation, training=True):
        images = np.asarray(images, dtype=np.float32)
        if not training or transformation is None:
            return images
        for (_, attr, _), seed in zip(_PARTS, transformation["seeds"]):
            part = getattr(self, attr)
            if part is not None:
                t = part.get_random_transformation(images, training=True, seed=seed)
                images = part.transform_images(images, t)
        return images

    def transform_segmentation_masks(self, segmentation_masks, transformation, training=True):
        return segmentation_masks

    def get_config(self):
        config = super().get_config()
        config.update({"value_range": self.value_range,
                       "brightness_factor": self.brightness_factor,
                       "contrast_factor": self.contrast_factor,
                       "saturation_factor": self.saturation_factor,
                       "hue_factor": self.hue_factor, "seed": self.seed})
        return config
