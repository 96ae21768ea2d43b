"""Resizing: images resized to (height, width), as Keras 3's torch backend does."""

import numpy as np

from fkeras import ops
from fkeras.backend import devices as _devices
from fkeras.engine.keras_tensor import KerasTensor
from fkeras.layers.layer import Layer
from fkeras.layers.preprocessing import image_args
from fkeras.layers.preprocessing.resize_op import image_resize

INTERPOLATIONS = ("bilinear", "nearest", "bicubic")


class Resizing(Layer):
    """Resizes a batch of images (rank 4) or one image (rank 3) to `(height, width)`.

    The numbers are those of Keras 3 on the torch backend (`torch.nn.functional.interpolate`,
    half-pixel centres): "nearest" is torch's "nearest-exact", "bicubic" uses a = -0.75, and
    `antialias=True` (bilinear and bicubic only; ignored for nearest, as Keras) widens the
    filter when downscaling (PIL's scheme, bicubic a = -0.5). Integer images are resized in
    float32, rounded and cast back (saturating); float images come out float32.

    Args:
        height, width: the output size.
        interpolation: "bilinear" (default), "nearest" or "bicubic".
        crop_to_aspect_ratio: first crop the largest centred window with the target aspect
            ratio.
        pad_to_aspect_ratio: first pad (with `fill_value`) to the target aspect ratio.
        fill_mode: "constant" only (Keras's torch backend has no other).
        fill_value: the padding value.
        antialias: whether to use an anti-aliasing filter when downscaling.
        data_format: "channels_last" or "channels_first" (default: `image_data_format()`).

    Example:
    ```python
    y = Resizing(224, 224, crop_to_aspect_ratio=True)(images)   # (N, 224, 224, C)
    ```
    """

    def __init__(self, height, width, interpolation="bilinear", crop_to_aspect_ratio=False,
                 pad_to_aspect_ratio=False, fill_mode="constant", fill_value=0.0,
                 antialias=False, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.height = image_args.positive_int(height, "height", self.name)
        self.width = image_args.positive_int(width, "width", self.name)
        if interpolation in ("lanczos3", "lanczos5", "area"):
            raise ValueError(f'Layer "{self.name}": interpolation="{interpolation}" is not '
                             "supported by fkeras (nor by Keras 3's torch backend). Expected "
                             f"one of {INTERPOLATIONS}. Received: interpolation="
                             f"{interpolation}")
        if interpolation not in INTERPOLATIONS:
            raise ValueError(f'Layer "{self.name}": invalid value for argument '
                             f"`interpolation`. Expected one of {INTERPOLATIONS}. Received: "
                             f"interpolation={interpolation}")
        if fill_mode != "constant":
            raise ValueError(f'Layer "{self.name}": invalid value for argument `fill_mode`. '
                             f"Only 'constant' is supported. Received: fill_mode={fill_mode}")
        if crop_to_aspect_ratio and pad_to_aspect_ratio:
            raise ValueError(f'Layer "{self.name}": only one of `pad_to_aspect_ratio` & '
                             "`crop_to_aspect_ratio` can be `True`.")
        self.interpolation = interpolation
        self.crop_to_aspect_ratio = bool(crop_to_aspect_ratio)
        self.pad_to_aspect_ratio = bool(pad_to_aspect_ratio)
        self.fill_mode = fill_mode
        self.fill_value = fill_value
        self.antialias = bool(antialias)
        self.data_format = image_args.data_format_of(data_format, self.name)

    def call(self, inputs):
        image_args.check_rank(image_args.shape_of(inputs), self.name)
        dtype = _dtype_name(inputs)
        integer = np.dtype(dtype).kind in "iub"
        if isinstance(inputs, KerasTensor):
            return KerasTensor(self.compute_output_shape(inputs.shape),
                               dtype if integer else self.dtype)
        x = image_args.to_nhwc(ops.cast(inputs, self.dtype), self.data_format)
        mode = "crop" if self.crop_to_aspect_ratio else "pad" if self.pad_to_aspect_ratio \
            else None
        antialias = self.antialias and self.interpolation != "nearest"
        y = image_resize(x, (self.height, self.width), self.interpolation, antialias, mode,
                         self.fill_value)
        y = image_args.from_nhwc(y, len(image_args.shape_of(inputs)), self.data_format)
        return saturate_cast(y, dtype) if integer else y

    def compute_output_shape(self, input_shape):
        image_args.check_rank(input_shape, self.name)
        return image_args.with_size(input_shape, (self.height, self.width), self.data_format)

    def get_config(self):
        config = super().get_config()
        config.update({
            "height": self.height, "width": self.width, "interpolation": self.interpolation,
            "crop_to_aspect_ratio": self.crop_to_aspect_ratio,
            "pad_to_aspect_ratio": self.pad_to_aspect_ratio, "fill_mode": self.fill_mode,
            "fill_value": self.fill_value, "antialias": self.antialias,
            "data_format": self.data_format,
        })
        return config


def _dtype_name(x):
    return str(np.dtype(x.dtype)) if hasattr(x, "dtype") and x.dtype is not None \
        else "float32"


def saturate_cast(y, dtype):
    """Float values rounded and clipped to the integer `dtype`'s range, then cast."""
    info = np.iinfo(dtype) if np.dtype(dtype).kind in "iu" else None
    y = np.round(_devices.host_array(y, dtype=np.float64))
    if info is not None:
        y = np.clip(y, info.min, info.max)
    return y.astype(dtype)
