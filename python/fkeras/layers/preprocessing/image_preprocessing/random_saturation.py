"""RandomSaturation: scales the saturation of each image by a random factor."""

import numpy as np

from fkeras.layers.preprocessing.image_preprocessing import transforms
from fkeras.layers.preprocessing.image_preprocessing.color import ColorLayer


class RandomSaturation(ColorLayer):
    """Randomly adjusts saturation during training (the identity at inference).

    f ~ U(factor) per image; the HSV saturation is multiplied by f / (1 - f + eps) and clipped
    to `value_range` (0.5 keeps it, 0 gives grey, 1 the most saturated), as Keras 3.

    Args:
        factor: a number in [-1, 1] or a pair (lower, upper).
        value_range: (min, max) of the input values.
        data_format: "channels_last", "channels_first" or None.
        seed: int or None.

    Example:
    ```python
    y = RandomSaturation((0.5, 0.9), value_range=(0, 1), seed=1)(images)
    ```
    """

    def __init__(self, factor, value_range=(0, 255), data_format=None, seed=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self._set_factor(factor)
        self._set_value_range(value_range)
        self._make_generator(seed)

    def _post_draw(self, factor):
        return factor / (1.0 - factor + 1e-7)

    def _adjust(self, images, factor):
        hsv = transforms.rgb_to_hsv(images)
        sat = np.clip(hsv[..., 1] * factor[:, None, None], self.value_range[0],
                      self.value_range[1])
        return transforms.hsv_to_rgb(np.stack([hsv[..., 0], sat, hsv[..., 2]], axis=-1))
