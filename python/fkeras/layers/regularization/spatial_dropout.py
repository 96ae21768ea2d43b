"""SpatialDropout1D/2D/3D: dropout of whole feature maps (one draw per sample and channel)."""

from fkeras import config as _config
from fkeras import random
from fkeras.engine.input_spec import InputSpec
from fkeras.layers.regularization.dropout import Dropout


class _SpatialDropout(Dropout):
    _rank = None

    def __init__(self, rate, data_format=None, seed=None, name=None, dtype=None, **kwargs):
        super().__init__(rate, seed=seed, name=name, dtype=dtype, **kwargs)
        self.data_format = _config.data_format_or_default(data_format)
        self.input_spec = InputSpec(ndim=self._rank)

    def _noise_shape(self):
        if self.data_format == "channels_first":
            return (None, None) + (1,) * (self._rank - 2)
        return (None,) + (1,) * (self._rank - 2) + (None,)

    def call(self, inputs, training=False):
        if not training or self.rate == 0.0:
            return inputs
        return random.dropout(inputs, self.rate, noise_shape=self._noise_shape(),
                              seed=self.seed_generator)

    def get_config(self):
        # Keras 3's keys (no trainable, no noise_shape).
        return {"rate": self.rate, "seed": self.seed, "name": self.name, "dtype": self.dtype,
                "data_format": self.data_format}


class SpatialDropout1D(_SpatialDropout):
    """Drops entire channels of (batch, steps, channels) inputs in training.

    Each (sample, channel) pair is kept with probability 1 - rate (scaled by 1 / (1 - rate))
    for all steps at once; the identity outside training.

    Args:
        rate: float in [0, 1].
        seed: int or None.

    Example:
    ```python
    y = SpatialDropout1D(0.2)(x, training=True)   # x: (batch, steps, channels)
    ```
    """

    _rank = 3

    def __init__(self, rate, seed=None, name=None, dtype=None, **kwargs):
        kwargs.pop("data_format", None)
        super().__init__(rate, data_format="channels_last", seed=seed, name=name, dtype=dtype,
                         **kwargs)

    def get_config(self):
        config = super().get_config()
        del config["data_format"]
        return config


class SpatialDropout2D(_SpatialDropout):
    """Drops entire 2D feature maps in training (one draw per sample and channel).

    Args:
        rate: float in [0, 1].
        data_format: "channels_last" (N, H, W, C), "channels_first" (N, C, H, W) or None (the
            configured image_data_format).
        seed: int or None.

    Example:
    ```python
    y = SpatialDropout2D(0.2)(x, training=True)   # x: (batch, h, w, channels)
    ```
    """

    _rank = 4


class SpatialDropout3D(_SpatialDropout):
    """Drops entire 3D feature maps in training (one draw per sample and channel).

    Args:
        rate: float in [0, 1].
        data_format: "channels_last" (N, D, H, W, C), "channels_first" (N, C, D, H, W) or None.
        seed: int or None.

    Example:
    ```python
    y = SpatialDropout3D(0.2)(x, training=True)   # x: (batch, d, h, w, channels)
    ```
    """

    _rank = 5
