"""Rescaling: inputs * scale + offset, in the layer's float dtype."""

import numpy as np

from fkeras import config as fk_config
from fkeras import ops
from fkeras.layers.layer import Layer


class Rescaling(Layer):
    """Rescales every input value: `inputs * scale + offset` (Keras 3).

    Integer inputs (uint8 images) are cast to the layer's float dtype first. `scale` and
    `offset` may be scalars or arrays broadcast against the input (a per-channel scale is
    reshaped to (C, 1, 1) when `image_data_format()` is "channels_first", as Keras does).

    Args:
        scale: float or array, the multiplier (1/255 maps [0, 255] to [0, 1]).
        offset: float or array, added after scaling (default 0).

    Example:
    ```python
    x = Rescaling(1.0 / 127.5, offset=-1.0)(images_uint8)   # values in [-1, 1]
    ```
    """

    _fk_float_inputs = True

    def __init__(self, scale, offset=0.0, **kwargs):
        super().__init__(**kwargs)
        self.scale = _numeric(scale, "scale", self.name)
        self.offset = _numeric(offset, "offset", self.name)
        self.supports_masking = True

    def call(self, inputs):
        scale = np.asarray(self.scale, dtype=np.float32)
        offset = np.asarray(self.offset, dtype=np.float32)
        if scale.ndim > 0 and fk_config.image_data_format() == "channels_first":
            scale = scale.reshape(scale.shape + (1,) * (3 - scale.ndim))
        inputs = ops.cast(inputs, self.dtype)
        return ops.add(ops.multiply(inputs, scale), offset)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        config = super().get_config()
        config.update({"scale": _serialize(self.scale), "offset": _serialize(self.offset)})
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        for key in ("scale", "offset"):
            if key in config:
                config[key] = _deserialize(config[key])
        return cls(**config)


def _numeric(value, what, layer_name):
    try:
        np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f'Layer "{layer_name}": `{what}` must be a number or an array of '
                         f"numbers. Received: {what}={value!r}") from None
    return list(value) if isinstance(value, tuple) else value


def _serialize(value):
    """Keras 3's form: a plain number, or `{"class_name": "__numpy__", ...}` for an array."""
    if isinstance(value, np.ndarray):
        return {"class_name": "__numpy__",
                "config": {"value": value.tolist(), "dtype": str(value.dtype)}}
    if isinstance(value, np.generic):
        return value.item()
    return value


def _deserialize(value):
    if isinstance(value, dict) and value.get("class_name") == "__numpy__":
        inner = value.get("config") or {}
        return np.asarray(inner.get("value"), dtype=inner.get("dtype"))
    return value
