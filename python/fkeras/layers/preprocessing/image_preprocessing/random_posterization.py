"""RandomPosterization: keeps only the top bits of each 8-bit colour value."""

import numpy as np

from fkeras.layers.preprocessing.image_preprocessing.color import ColorLayer


class RandomPosterization(ColorLayer):
    """Randomly reduces the bits per channel during training (the identity at inference).

    Values are mapped to [0, 255], truncated to uint8, and the low 8 - b bits cleared, b an
    integer drawn from [lower, upper) (b = lower when they are equal), then mapped back.

    Args:
        factor: an int in [1, 8] or a pair, the number of bits kept.
        value_range: (min, max) of the input values.
        data_format: "channels_last", "channels_first" or None.
        seed: int or None.

    Example:
    ```python
    y = RandomPosterization((3, 3))(images)   # 3 bits per channel
    ```
    """

    _USE_BASE_FACTOR = False
    _FACTOR_BOUNDS = (1, 8)
    _MAX_FACTOR = 8

    def __init__(self, factor, value_range=(0, 255), data_format=None, seed=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self._set_factor(factor)
        self._set_value_range(value_range)
        self._make_generator(seed)

    def get_random_transformation(self, data, training=True, seed=None):
        batch = self._batch_size(data)
        lo, hi = int(self.factor[0]), int(self.factor[1])
        if lo != hi:
            bits = self._rng(seed).integers(lo, hi, size=(batch,))
        else:
            bits = np.full((batch,), lo)
        return {"shift_factor": (self._MAX_FACTOR - bits).astype(np.uint8)}

    def transform_images(self, images, transformation, training=True):
        images = np.asarray(images, dtype=np.float32)
        if not training or transformation is None:
            return images
        shift = np.asarray(transformation["shift_factor"]).astype(np.uint8).reshape(-1, 1, 1, 1)
        scaled = self._transform_value_range(images, self.value_range, (0, 255))
        as_int = scaled.astype(np.uint8)
        out = np.left_shift(np.right_shift(as_int, shift), shift).astype(np.float32)
        return self._transform_value_range(out, (0, 255), self.value_range).astype(np.float32)
