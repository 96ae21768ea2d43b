"""Dropout: zeroes a fraction `rate` of the inputs in training and scales the rest."""

from fkeras import random
from fkeras.layers.layer import Layer
from fkeras.ops.random import check_rate


class Dropout(Layer):
    """Applies dropout when called with `training=True`; the identity otherwise.

    Kept inputs are scaled by 1 / (1 - rate), so the expected sum is unchanged.

    Args:
        rate: float in [0, 1], the fraction of inputs to drop.
        noise_shape: the shape of the binary mask, broadcast over the input; None entries
            take the input's size (e.g. (None, 1, None) shares the mask across time steps).
        seed: an int for reproducible masks (each call draws a new mask from a stream seeded
            by it), or None (the global generator of `fkeras.utils.set_random_seed`).

    Example:
    ```python
    y = Dropout(0.5)(x, training=True)
    ```
    """

    _fk_float_inputs = True

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.rate = check_rate(rate)
        self.noise_shape = None if noise_shape is None else tuple(noise_shape)
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise ValueError(f"`seed` must be an int or None. Received: seed={seed!r}")
        self.seed = seed
        self.seed_generator = random.SeedGenerator(seed) if seed is not None else None
        self.supports_masking = True
        self.built = True

    def call(self, inputs, training=False):
        if not training or self.rate == 0.0:
            return inputs
        return random.dropout(inputs, self.rate, noise_shape=self.noise_shape,
                              seed=self.seed_generator)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        config = super().get_config()
        config.update({"rate": self.rate, "noise_shape": self.noise_shape, "seed": self.seed})
        return config
