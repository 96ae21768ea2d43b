"""RandomShear: shears images along x and/or y by random amounts (training only)."""

import numpy as np

from fkeras.layers.preprocessing.image_preprocessing.geometric import AffineLayer, split_factor

_ERROR = ("The `factor` argument should be a number (or a list of two numbers) in the range "
          "[0, 1.0]. ")


def _check(value):
    if value > 1.0 or value < 0.0:
        raise ValueError(_ERROR + f"Received: input_number={value}")


class RandomShear(AffineLayer):
    """Randomly shears images during training (the identity at inference).

    Output pixel (x, y) reads the input at (x + sx * y, sy * x + y), with the shear amounts
    drawn from the factor ranges and a random sign per image (shear about the origin, as
    Keras 3).

    Args:
        x_factor: a number in [0, 1] (the range [-x, x]) or a pair, the horizontal shear.
        y_factor: the same for the vertical shear.
        interpolation, fill_mode, fill_value, data_format, seed: as in `RandomRotation`.

    Example:
    ```python
    y = RandomShear(x_factor=0.2, seed=1)(images)
    ```
    """

    _USE_BASE_FACTOR = False
    _MATRIX_KEY = "shear_factor"

    def __init__(self, x_factor=0.0, y_factor=0.0, interpolation="bilinear",
                 fill_mode="reflect", fill_value=0.0, data_format=None, seed=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.x_factor = split_factor(x_factor, "x_factor", _ERROR, _check)
        self.y_factor = split_factor(y_factor, "y_factor", _ERROR, _check)
        self._set_sampling(fill_mode, interpolation, fill_value)
        self._make_generator(seed)

    def get_random_transformation(self, data, training=True, seed=None):
        if not training:
            return None
        shape, batch, _ = self._batch_hw(data)
        rng = self._rng(seed)
        invert = np.where(rng.uniform(size=(batch, 1)) > 0.5, -1.0, 1.0)
        shear_y = rng.uniform(self.y_factor[0], self.y_factor[1], size=(batch, 1))
        shear_x = rng.uniform(self.x_factor[0], self.x_factor[1], size=(batch, 1))
        factor = np.concatenate([shear_x, shear_y], axis=1) * invert
        return {"shear_factor": factor.astype(np.float32), "input_shape": shape}

    def _matrix(self, transformation, height, width):
        f = np.asarray(transformation["shear_factor"], np.float64)
        ones, zeros = np.ones(len(f)), np.zeros(len(f))
        return np.stack([ones, f[:, 0], zeros, f[:, 1], ones, zeros, zeros, zeros], axis=1)

    @classmethod
    def from_config(cls, config):
        # Keras 3.15 writes a scalar factor f as (-f, f), which its own constructor refuses;
        # fkeras reads that symmetric pair back as f (so such files load here).
        config = dict(config)
        for key in ("x_factor", "y_factor"):
            value = config.get(key)
            if isinstance(value, (list, tuple)) and len(value) == 2 and value[0] < 0 and \
                    value[0] == -value[1]:
                config[key] = value[1]
        return cls(**config)

    def get_config(self):
        config = super().get_config()
        config.update({"x_factor": self.x_factor, "y_factor": self.y_factor,
                       "fill_mode": self.fill_mode, "interpolation": self.interpolation,
                       "seed": self.seed, "fill_value": self.fill_value,
                       "data_format": self.data_format})
        return config
