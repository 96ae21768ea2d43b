"""GaussianNoise, GaussianDropout and AlphaDropout: multiplicative / additive noise in training.

The noise is drawn in NumPy from a per-call seed (an int seed gives a reproducible stream, None
the global generator of `fkeras.utils.set_random_seed`) and enters the graph as a constant, so
the gradient with respect to the input is exact: 1 (noise), the noise (GaussianDropout), and
a * keep (AlphaDropout).
"""

import math

import numpy as np

from fkeras import ops, random
from fkeras.layers.layer import Layer
from fkeras.ops.random import check_rate, resolve_noise_shape

_ALPHA = 1.6732632423543772848170429916717
_SCALE = 1.0507009873554804934193349852946


def _check_seed(seed):
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise ValueError(f"`seed` must be an int or None. Received: seed={seed!r}")
    return seed


class _NoiseLayer(Layer):
    """The seed handling, shape and config of the noise layers; `config_keys` names the
    attributes get_config adds, in Keras's key order."""

    _fk_float_inputs = True

    config_keys = ("seed",)

    def __init__(self, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.seed = _check_seed(seed)
        self.seed_generator = random.SeedGenerator(seed) if seed is not None else None
        self.supports_masking = True
        self.built = True

    def _rng(self):
        return np.random.default_rng(random.draw_seed(self.seed_generator))

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        config = super().get_config()
        config.update({key: getattr(self, key) for key in self.config_keys})
        return config


class GaussianNoise(_NoiseLayer):
    """Adds zero-centred Gaussian noise of standard deviation `stddev` in training only.

    Args:
        stddev: float in [0, 1].
        seed: int or None.

    Example:
    ```python
    y = GaussianNoise(0.1)(x, training=True)
    ```
    """

    config_keys = ("stddev", "seed")

    def __init__(self, stddev, seed=None, **kwargs):
        self.stddev = check_rate(stddev, "stddev")
        super().__init__(seed=seed, **kwargs)

    def call(self, inputs, training=False):
        if not training or self.stddev == 0.0:
            return inputs
        noise = self._rng().standard_normal(tuple(inputs.shape)) * self.stddev
        return ops.add(inputs, noise.astype(np.float32))


class GaussianDropout(_NoiseLayer):
    """Multiplies the inputs by 1-centred Gaussian noise of standard deviation
    sqrt(rate / (1 - rate)) in training only.

    Args:
        rate: float in [0, 1], the equivalent drop probability.
        seed: int or None.

    Example:
    ```python
    y = GaussianDropout(0.2)(x, training=True)
    ```
    """

    config_keys = ("rate", "seed")

    def __init__(self, rate, seed=None, **kwargs):
        self.rate = check_rate(rate)
        super().__init__(seed=seed, **kwargs)

    def call(self, inputs, training=False):
        if not training or self.rate == 0.0:
            return inputs
        if self.rate == 1.0:
            raise ValueError(f'Layer "{self.name}": rate=1 gives an infinite noise standard '
                             "deviation sqrt(rate / (1 - rate)).")
        stddev = math.sqrt(self.rate / (1.0 - self.rate))
        noise = 1.0 + self._rng().standard_normal(tuple(inputs.shape)) * stddev
        return ops.multiply(inputs, noise.astype(np.float32))


class AlphaDropout(_NoiseLayer):
    """Dropout that keeps the mean and variance of SELU activations (Klambauer et al., 2017).

    In training, dropped inputs are set to alpha' = -1.7580993408473766 (SELU's negative
    saturation), then y = a * x + b with a = ((1 - rate) (1 + rate alpha'^2))^-1/2 and
    b = -a alpha' rate; the identity outside training.

    Args:
        rate: float in [0, 1].
        noise_shape: shape of the keep mask (None entries take the input's size).
        seed: int or None.

    Example:
    ```python
    y = AlphaDropout(0.1)(x, training=True)
    ```
    """

    config_keys = ("rate", "seed", "noise_shape")

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        self.rate = check_rate(rate)
        self.noise_shape = None if noise_shape is None else tuple(noise_shape)
        super().__init__(seed=seed, **kwargs)

    def call(self, inputs, training=False):
        if not training or self.rate == 0.0:
            return inputs
        shape = tuple(inputs.shape)
        mask_shape = resolve_noise_shape(self.noise_shape, shape) or shape
        keep = (self._rng().uniform(size=mask_shape) >= self.rate).astype(np.float64)
        alpha_p = -_ALPHA * _SCALE
        a = ((1 - self.rate) * (1 + self.rate * alpha_p**2)) ** -0.5
        b = -a * alpha_p * self.rate
        scale = np.broadcast_to(a * keep, shape).astype(np.float32)
        shift = np.broadcast_to(a * alpha_p * (1 - keep) + b, shape).astype(np.float32)
        return ops.add(ops.multiply(inputs, scale), shift)
