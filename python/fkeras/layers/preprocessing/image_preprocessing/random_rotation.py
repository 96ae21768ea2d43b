"""RandomRotation: rotates images by a random angle about their centre (training only)."""

import numpy as np

from fkeras.layers.preprocessing.image_preprocessing import transforms
from fkeras.layers.preprocessing.image_preprocessing.geometric import AffineLayer


class RandomRotation(AffineLayer):
    """Randomly rotates images during training (the identity at inference).

    Args:
        factor: a fraction of 2 pi, a number (the range [-factor, factor]) or a pair
            (lower, upper); e.g. 0.25 rotates by up to +/- 90 degrees. Positive angles turn
            counter-clockwise.
        fill_mode: "reflect", "wrap", "constant" or "nearest": how points outside the input
            are filled.
        interpolation: "bilinear" or "nearest".
        seed: int or None.
        fill_value: the value outside the boundaries with fill_mode "constant".
        data_format: "channels_last", "channels_first" or None.

    Example:
    ```python
    y = RandomRotation((0.25, 0.25))(images)   # a quarter turn
    ```
    """

    _MATRIX_KEY = "rotation_matrix"

    def __init__(self, factor, fill_mode="reflect", interpolation="bilinear", seed=None,
                 fill_value=0.0, data_format=None, **kwargs):
        super().__init__(factor=factor, data_format=data_format, **kwargs)
        self._make_generator(seed)
        self._set_sampling(fill_mode, interpolation, fill_value)

    def get_random_transformation(self, data, training=True, seed=None):
        if not training:
            return None
        _, batch, (height, width) = self._batch_hw(data)
        angle = self._rng(seed).uniform(self.factor[0] * 360.0, self.factor[1] * 360.0,
                                        size=(batch,))
        zeros = np.zeros(batch)
        matrix = transforms.affine_matrix(angle, zeros, zeros, np.ones(batch), zeros, zeros,
                                          height, width)
        return {"angle": angle, "rotation_matrix": matrix.astype(np.float32),
                "image_height": height, "image_width": width, "batch_size": batch}

    def get_config(self):
        config = super().get_config()
        config.update({"factor": self.factor, "data_format": self.data_format,
                       "fill_mode": self.fill_mode, "fill_value": self.fill_value,
                       "interpolation": self.interpolation, "seed": self.seed})
        return config
