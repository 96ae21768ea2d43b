"""RandomGrayscale: converts images to grayscale at random (channels kept)."""

import numpy as np

from fkeras.layers.preprocessing.image_preprocessing import transforms
from fkeras.layers.preprocessing.image_preprocessing.base import (
    BaseImagePreprocessingLayer,
    standardize_data_format,
)


class RandomGrayscale(BaseImagePreprocessingLayer):
    """Randomly converts images to grayscale during training (the identity at inference).

    Each image is converted with probability `factor`; the luma (ITU-R 601 weights) is
    repeated over the channels, so the shape is unchanged.

    Args:
        factor: the probability, in [0, 1].
        data_format: "channels_last", "channels_first" or None.
        seed: int or None (not part of Keras's config).

    Example:
    ```python
    y = RandomGrayscale(factor=1.0)(images)
    ```
    """

    def __init__(self, factor=0.5, data_format=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        if factor < 0 or factor > 1:
            raise ValueError(f"`factor` should be between 0 and 1. Received: factor={factor}")
        self.factor = factor
        self.data_format = standardize_data_format(data_format)
        self._make_generator(seed)

    def get_random_transformation(self, images, training=True, seed=None):
        batch = self._batch_size(images)
        draws = self._rng(seed).uniform(0.0, 1.0, size=(batch,))
        return (draws < self.factor).reshape(-1, 1, 1, 1)

    def _transform_images(self, images, transformation, interpolation):
        gray = transforms.rgb_to_grayscale(images) if images.shape[-1] == 3 else images
        return np.where(np.asarray(transformation).reshape(-1, 1, 1, 1), gray, images)

    def get_config(self):
        config = super().get_config()
        config.update({"factor": self.factor})
        return config
