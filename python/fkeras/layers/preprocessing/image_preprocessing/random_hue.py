"""RandomHue: rotates the hue of each image by a random amount."""

import numpy as np

from fkeras.layers.preprocessing.image_preprocessing import transforms
from fkeras.layers.preprocessing.image_preprocessing.color import ColorLayer


class RandomHue(ColorLayer):
    """Randomly shifts hue during training (the identity at inference).

    The hue (in [0, 1]) of each image moves by +/- f / 2, f ~ U(factor), a random sign.

    Args:
        factor: a number in [0, 1] (the range [0, factor]) or a pair.
        value_range: (min, max) of the input values.
        data_format: "channels_last", "channels_first" or None.
        seed: int or None.

    Example:
    ```python
    y = RandomHue(0.2, value_range=(0, 1), seed=1)(images)
    ```
    """

    _FACTOR_BOUNDS = (0, 1)

    def __init__(self, factor, value_range=(0, 255), data_format=None, seed=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self._set_factor(factor)
        self.value_range = value_range
        self._make_generator(seed)

    def get_random_transformation(self, data, training=True, seed=None):
        batch = self._batch_size(data)
        rng = self._rng(seed)
        invert = np.where(rng.uniform(size=(batch,)) > 0.5, -1.0, 1.0)
        factor = rng.uniform(self.factor[0], self.factor[1], size=(batch,))
        return {"factor": (invert * factor * 0.5).astype(np.float32)}

    def _adjust(self, images, factor):
        images = self._transform_value_range(images, self.value_range, (0, 1))
        hsv = transforms.rgb_to_hsv(images)
        hue = hsv[..., 0] + factor[:, None, None]
        hue = np.where(hue > 1.0, hue - 1.0, hue)
        hue = np.where(hue < 0.0, hue + 1.0, hue)
        rgb = np.clip(transforms.hsv_to_rgb(np.stack([hue, hsv[..., 1], hsv[..., 2]], -1)), 0, 1)
        return self._transform_value_range(rgb, (0, 1), self.value_range)
