"""RandomColorDegeneration: blends each image towards its grayscale version."""

import numpy as np

from fkeras.layers.preprocessing.image_preprocessing import transforms
from fkeras.layers.preprocessing.image_preprocessing.color import ColorLayer, check_channels


class RandomColorDegeneration(ColorLayer):
    """Randomly desaturates images during training (the identity at inference).

    out = x + f (gray(x) - x), f ~ U(factor) per image, clipped to `value_range`.

    Args:
        factor: a number in [-1, 1] or a pair.
        value_range: (min, max) of the input values.
        data_format: "channels_last", "channels_first" or None.
        seed: int or None.

    Example:
    ```python
    y = RandomColorDegeneration((1.0, 1.0))(images)   # fully grey
    ```
    """

    def __init__(self, factor, value_range=(0, 255), data_format=None, seed=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self._set_factor(factor)
        self._set_value_range(value_range)
        self._make_generator(seed)

    def _adjust(self, images, factor):
        gray = transforms.rgb_to_grayscale(images)
        out = images + factor.reshape(-1, 1, 1, 1) * (gray - images)
        return np.clip(out, self.value_range[0], self.value_range[1])

    def compute_output_shape(self, input_shape):
        check_channels(input_shape, self.data_format)
        return tuple(input_shape)
