"""RandomSharpness: blends each image with a smoothed copy by a random factor."""

import numpy as np

from fkeras.layers.preprocessing.image_preprocessing import transforms
from fkeras.layers.preprocessing.image_preprocessing.color import ColorLayer

_A, _B = 1.0 / 13.0, 5.0 / 13.0
_SMOOTH = [[_A, _A, _A], [_A, _B, _A], [_A, _A, _A]]


class RandomSharpness(ColorLayer):
    """Randomly sharpens or blurs images during training (the identity at inference).

    out = x + (1 - 2 f) (smooth(x) - x), f ~ U(factor), smooth a 3x3 kernel (5/13 centre,
    1/13 around, zero padding); clipped to `value_range`.

    Args:
        factor: a number in [0, 1] or a pair (0.5 keeps the image).
        value_range: (min, max) of the input values.
        data_format: "channels_last", "channels_first" or None.
        seed: int or None.

    Example:
    ```python
    y = RandomSharpness((0.8, 0.8), value_range=(0, 1))(images)
    ```
    """

    _USE_BASE_FACTOR = False
    _FACTOR_BOUNDS = (0, 1)

    def __init__(self, factor, value_range=(0, 255), data_format=None, seed=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self._set_factor(factor)
        self._set_value_range(value_range)
        self._make_generator(seed)

    def _adjust(self, images, factor):
        sharp = (factor * 2.0).reshape(-1, 1, 1, 1)
        smooth = transforms.correlate3x3(images, _SMOOTH)
        out = images + (1.0 - sharp) * (smooth - images)
        return np.clip(out, self.value_range[0], self.value_range[1])
