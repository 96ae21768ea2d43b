"""`keras.ops.image` colour conversions, crop/pad and resize (composed from differentiable
fkeras ops; resize through the separable `image_resize_separable` op)."""

import numpy as np

from fkeras.ops.image_hsv import hsv_to_rgb_op, rgb_to_hsv_op
from fkeras.ops.image_layout import (as_tensor, cast_back, check_rank, data_format_of, float_images,
                                     from_nhwc, integer_dtype, to_nhwc)


def _channel_axis(data_format):
    return -1 if data_format == "channels_last" else -3


def _check_float(images):
    dtype = str(images.dtype)
    if "float" not in dtype:
        raise ValueError("Invalid images dtype: expected float dtype. "
                         f"Received: images.dtype={dtype}")


def rgb_to_grayscale(images, data_format=None):
    """Converts RGB images to grayscale (ITU-R 601 luma: 0.2989 R + 0.587 G + 0.114 B).

    Args:
        images: rank 3 or 4 tensor with 3 (or 1) channels.
        data_format: `"channels_last"` or `"channels_first"` (default: the config's).

    Returns:
        The grayscale images, with 1 channel.
    """
    from fkeras import ops

    data_format = data_format_of(data_format)
    images = as_tensor(images)
    check_rank(images)
    axis = _channel_axis(data_format)
    channels = images.shape[axis]
    if channels is not None and channels not in (1, 3):
        raise ValueError("Invalid channel size: expected 3 (RGB) or 1 (Grayscale). "
                         f"Received input with shape: images.shape={tuple(images.shape)}")
    if channels == 1:
        return ops.copy(images)
    weights = np.array([[0.2989], [0.587], [0.114]], np.float32)
    dtype = integer_dtype(images)
    images = float_images(images, dtype)
    if axis == -1:  # one matrix product: (..., 3) @ (3, 1)
        return cast_back(ops.matmul(images, weights), dtype)
    gray = ops.tensordot(images, weights[:, 0], axes=([len(images.shape) - 3], [0]))
    return cast_back(ops.expand_dims(gray, axis), dtype)


def _hsv_checks(images, data_format):
    check_rank(images)
    _check_float(images)
    channels = images.shape[_channel_axis(data_format)]
    if channels is not None and channels != 3:
        raise ValueError("Input images must have 3 channels, but received images with "
                         f"{channels} channels.")


def rgb_to_hsv(images, data_format=None):
    """Converts RGB images (values in [0, 1]) to HSV (hue, saturation, value in [0, 1]).

    Args:
        images: rank 3 or 4 float tensor with 3 channels.
        data_format: `"channels_last"` or `"channels_first"`.

    Returns:
        The HSV images.
    """
    data_format = data_format_of(data_format)
    images = as_tensor(images)
    _hsv_checks(images, data_format)
    return rgb_to_hsv_op(images, _channel_axis(data_format))


def hsv_to_rgb(images, data_format=None):
    """Converts HSV images (values in [0, 1]) to RGB.

    Args:
        images: rank 3 or 4 float tensor with 3 channels.
        data_format: `"channels_last"` or `"channels_first"`.

    Returns:
        The RGB images.
    """
    data_format = data_format_of(data_format)
    images = as_tensor(images)
    _hsv_checks(images, data_format)
    return hsv_to_rgb_op(images, _channel_axis(data_format))


def _non_negative(value, name):
    if value is not None and value < 0:
        raise ValueError(f"{name} must be >= 0. Received: {name}={value}")


def _validate(kind, first, second, target, axis_names):
    a, b, t = axis_names
    if [first, second, target].count(None) != 1:
        raise ValueError(f"Must specify exactly two of {a}, {b}, {t}. Received: "
                         f"{a}={first}, {b}={second}, {t}={target}")


def _sides(images, data_format, args, kind):
    """(top, bottom, left, right) of a crop or pad from Keras's argument triples."""
    top, left, bottom, right, th, tw = args
    _validate(kind, top, bottom, th, (f"top_{kind}", f"bottom_{kind}", "target_height"))
    _validate(kind, left, right, tw, (f"left_{kind}", f"right_{kind}", "target_width"))
    for value, name in zip(args, (f"top_{kind}", f"left_{kind}", f"bottom_{kind}",
                                  f"right_{kind}", "target_height", "target_width")):
        _non_negative(value, name)
    if data_format == "channels_last":
        height, width = images.shape[-3], images.shape[-2]
    else:
        height, width = images.shape[-2], images.shape[-1]
    sign = 1 if kind == "padding" else -1
    if top is None:
        top = sign * (th - height) - bottom
    if bottom is None:
        bottom = sign * (th - height) - top
    if left is None:
        left = sign * (tw - width) - right
    if right is None:
        right = sign * (tw - width) - left
    for value, name in ((top, f"top_{kind}"), (left, f"left_{kind}"),
                        (right, f"right_{kind}"), (bottom, f"bottom_{kind}")):
        _non_negative(value, name)
    return top, bottom, left, right, height, width


def pad_images(images, top_padding=None, left_padding=None, bottom_padding=None,
               right_padding=None, target_height=None, target_width=None, data_format=None):
    """Pads images with zeros to a target size (exactly two of each triple
    top/bottom/target_height and left/right/target_width are given).

    Returns:
        The padded images.
    """
    from fkeras import ops

    data_format = data_format_of(data_format)
    images = as_tensor(images)
    check_rank(images)
    top, bottom, left, right, _, _ = _sides(
        images, data_format, (top_padding, left_padding, bottom_padding, right_padding,
                              target_height, target_width), "padding")
    pads = [[top, bottom], [left, right]]
    pads = pads + [[0, 0]] if data_format == "channels_last" else [[0, 0]] + pads
    if len(images.shape) == 4:
        pads = [[0, 0]] + pads
    dtype = integer_dtype(images)
    return cast_back(ops.pad(float_images(images, dtype), pads), dtype)


def crop_images(images, top_cropping=None, left_cropping=None, bottom_cropping=None,
                right_cropping=None, target_height=None, target_width=None,
                data_format=None):
    """Crops images to a target size (exactly two of each triple
    top/bottom/target_height and left/right/target_width are given).

    Returns:
        The cropped images.
    """
    from fkeras import ops

    data_format = data_format_of(data_format)
    images = as_tensor(images)
    check_rank(images)
    top, bottom, left, right, height, width = _sides(
        images, data_format, (top_cropping, left_cropping, bottom_cropping, right_cropping,
                              target_height, target_width), "cropping")
    th = height - top - bottom if height is not None else None
    tw = width - left - right if width is not None else None
    for value, name in ((th, "target_height"), (tw, "target_width")):
        _non_negative(value, name)
    spatial = [slice(top, top + th if th is not None else -bottom or None),
               slice(left, left + tw if tw is not None else -right or None)]
    index = spatial + [slice(None)] if data_format == "channels_last" else [slice(None)] + spatial
    if len(images.shape) == 4:
        index = [slice(None)] + index
    return ops.get_item(images, tuple(index))


RESIZE_INTERPOLATIONS = ("bilinear", "nearest", "bicubic")


def resize(images, size, interpolation="bilinear", antialias=False, crop_to_aspect_ratio=False,
           pad_to_aspect_ratio=False, fill_mode="constant", fill_value=0.0, data_format=None):
    """Resizes images to `size` (half-pixel centres, torch's `interpolate`).

    Args:
        images: rank 3 or 4 tensor.
        size: `(height, width)`.
        interpolation: `"bilinear"`, `"nearest"` or `"bicubic"` (Keras's torch backend has
            no Lanczos).
        antialias: low-pass filter when downsampling (bilinear, bicubic).
        crop_to_aspect_ratio / pad_to_aspect_ratio: keep the aspect ratio by cropping the
            centre, or by padding with `fill_value`.
        fill_mode: only `"constant"`.
        data_format: `"channels_last"` or `"channels_first"`.

    Returns:
        The resized images.
    """
    from fkeras.layers.preprocessing.resize_op import image_resize

    if len(size) != 2:
        raise ValueError(f"Expected `size` to be a tuple of 2 integers. Received: size={size}")
    if size[0] <= 0 or size[1] <= 0:
        raise ValueError(f"`size` must have positive height and width. Received: size={size}")
    images = as_tensor(images)
    if len(images.shape) < 3 or len(images.shape) > 4:
        raise ValueError("Invalid images rank: expected rank 3 (single image) or rank 4 "
                         "(batch of images). Received input with shape: "
                         f"images.shape={tuple(images.shape)}")
    if pad_to_aspect_ratio and crop_to_aspect_ratio:
        raise ValueError("Only one of `pad_to_aspect_ratio` & `crop_to_aspect_ratio` can be "
                         "`True`.")
    data_format = data_format_of(data_format)
    if interpolation in ("lanczos3", "lanczos5"):
        raise ValueError("Resizing with Lanczos interpolation is not supported by the "
                         f"PyTorch backend. Received: interpolation={interpolation}.")
    if interpolation not in RESIZE_INTERPOLATIONS:
        raise ValueError("Invalid value for argument `interpolation`. Expected of one "
                         f"{RESIZE_INTERPOLATIONS}. Received: interpolation={interpolation}")
    if fill_mode != "constant":
        raise ValueError("Invalid value for argument `fill_mode`. Only `'constant'` is "
                         f"supported. Received: fill_mode={fill_mode}")
    dtype = integer_dtype(images)
    x, unbatched = to_nhwc(float_images(images, dtype), data_format)
    mode = "crop" if crop_to_aspect_ratio else "pad" if pad_to_aspect_ratio else None
    y = image_resize(x, size, interpolation, antialias, mode, fill_value)
    return cast_back(from_nhwc(y, data_format, unbatched), dtype, rounding=True)
