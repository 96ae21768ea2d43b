"""Image files and arrays (Keras's `keras.utils.load_img`, `img_to_array`, `array_to_img`,
`save_img`), through Pillow, imported on first use (`pip install Pillow` or the `image`
extra)."""

import io
import os
import pathlib
import warnings

import numpy as np


def pil_image(fn):
    """PIL.Image, or an ImportError naming `fn` and how to install Pillow."""
    try:
        from PIL import Image
    except ImportError as e:
        raise ImportError(f"Could not import PIL.Image. The use of `{fn}` requires PIL: "
                          "`pip install Pillow` (or `pip install \"fkeras[image]\"`).") from e
    return Image


def _data_format(data_format):
    if data_format is None:
        from fkeras import config

        data_format = config.image_data_format()
    if data_format not in ("channels_last", "channels_first"):
        raise ValueError("The `data_format` argument must be one of {'channels_first', "
                         f"'channels_last'}}. Received: data_format={data_format}")
    return data_format


def _floatx(dtype):
    if dtype is None:
        from fkeras import config

        return config.floatx()
    return dtype


def _resample(Image):
    r = getattr(Image, "Resampling", Image)
    return {"nearest": r.NEAREST, "bilinear": r.BILINEAR, "bicubic": r.BICUBIC,
            "hamming": r.HAMMING, "box": r.BOX, "lanczos": r.LANCZOS}


def convert_mode(img, color_mode):
    """`img` with 1 ("grayscale": 8/16/32-bit kept), 3 ("rgb") or 4 ("rgba") channels."""
    if color_mode == "grayscale":
        return img if img.mode in ("L", "I;16", "I") else img.convert("L")
    if color_mode == "rgba":
        return img if img.mode == "RGBA" else img.convert("RGBA")
    if color_mode == "rgb":
        return img if img.mode == "RGB" else img.convert("RGB")
    raise ValueError('color_mode must be "grayscale", "rgb", or "rgba". '
                     f"Received: color_mode={color_mode!r}")


def load_img(path, color_mode="rgb", target_size=None, interpolation="nearest",
             keep_aspect_ratio=False):
    """Loads an image into a PIL image (Keras's `load_img`).

    Args:
        path: path of the image file (str, bytes or `pathlib.Path`) or an `io.BytesIO`.
        color_mode: `"grayscale"`, `"rgb"` or `"rgba"`.
        target_size: None (the file's size) or `(height, width)`.
        interpolation: Pillow's resampling for `target_size`: `"nearest"`, `"bilinear"`,
            `"bicubic"`, `"hamming"`, `"box"` or `"lanczos"`.
        keep_aspect_ratio: resize the centred crop of the target's aspect ratio.

    Returns:
        A PIL Image.
    """
    Image = pil_image("load_img")
    if isinstance(path, io.BytesIO):
        img = Image.open(path)
    elif isinstance(path, (pathlib.Path, bytes, str)):
        with open(path, "rb") as f:
            img = Image.open(io.BytesIO(f.read()))
    else:
        raise TypeError(f"path should be path-like or io.BytesIO, not {type(path)}")
    img = convert_mode(img, color_mode)
    if target_size is None or img.size == (target_size[1], target_size[0]):
        return img
    methods = _resample(Image)
    if interpolation not in methods:
        raise ValueError(f"Invalid interpolation method {interpolation} specified. Supported "
                         f"methods are {', '.join(methods)}")
    size = (int(target_size[1]), int(target_size[0]))
    box = None
    if keep_aspect_ratio:
        width, height = img.size
        crop_h = min(height, (width * size[1]) // size[0])
        crop_w = min(width, (height * size[0]) // size[1])
        top, left = (height - crop_h) // 2, (width - crop_w) // 2
        box = (left, top, left + crop_w, top + crop_h)
    return img.resize(size, methods[interpolation], box=box)


def img_to_array(img, data_format=None, dtype=None):
    """A PIL image (or any array-like image) as a 3D NumPy array (Keras's `img_to_array`).

    Args:
        img: the image.
        data_format: `"channels_last"` (H, W, C) or `"channels_first"` (C, H, W); None: the
            configured `image_data_format()`.
        dtype: the array's dtype; None: `floatx()`.

    Returns:
        A 3D NumPy array.
    """
    data_format = _data_format(data_format)
    x = np.asarray(img, dtype=_floatx(dtype))
    if x.ndim == 2:
        x = x[None] if data_format == "channels_first" else x[..., None]
    elif x.ndim == 3:
        if data_format == "channels_first":
            x = x.transpose(2, 0, 1)
    else:
        raise ValueError(f"Unsupported image shape: {x.shape}")
    return x


def array_to_img(x, data_format=None, scale=True, dtype=None):
    """A 3D array as a PIL image (Keras's `array_to_img`).

    Args:
        x: a 3D array: (H, W, C) or (C, H, W) by `data_format`, with 1, 3 or 4 channels.
        data_format: None: the configured `image_data_format()`.
        scale: rescale the values to [0, 255] (min to 0, max to 255).
        dtype: the dtype the values are read as; None: `floatx()`.

    Returns:
        A PIL Image ("L", "I" for 1 channel above 255, "RGB" or "RGBA").
    """
    Image = pil_image("array_to_img")
    data_format = _data_format(data_format)
    x = np.array(x, dtype=_floatx(dtype))
    if x.ndim != 3:
        raise ValueError("Expected image array to have rank 3 (single image). Got array with "
                         f"shape: {x.shape}")
    if data_format == "channels_first":
        x = x.transpose(1, 2, 0)
    if scale:
        x = x - np.min(x)
        top = np.max(x)
        if top != 0:
            x = x / top
        x = x * 255
    channels = x.shape[2]
    if channels in (3, 4):
        return Image.fromarray(x.astype("uint8"), "RGB" if channels == 3 else "RGBA")
    if channels == 1:
        if np.max(x) > 255:
            return Image.fromarray(x[:, :, 0].astype("int32"), "I")
        return Image.fromarray(x[:, :, 0].astype("uint8"), "L")
    raise ValueError(f"Unsupported channel number: {channels}")


def save_img(path, x, data_format=None, file_format=None, scale=True, **kwargs):
    """Saves a 3D array as an image file (Keras's `save_img`).

    Args:
        path: the file path or a file object.
        x: the image array (see `array_to_img`).
        data_format: None: the configured `image_data_format()`.
        file_format: None: from the file name's extension ("jpg" means JPEG).
        scale: rescale the values to [0, 255].
        **kwargs: passed to `PIL.Image.save`.
    """
    if file_format is None and isinstance(path, (str, pathlib.Path)):
        file_format = os.path.splitext(str(path))[1][1:].lower() or None
    if file_format and file_format.lower() == "jpg":
        file_format = "jpeg"
    img = array_to_img(x, data_format=data_format, scale=scale)
    if img.mode == "RGBA" and file_format == "jpeg":
        warnings.warn("The JPEG format does not support RGBA images, converting to RGB.",
                      stacklevel=2)
        img = img.convert("RGB")
    img.save(path, format=file_format, **kwargs)
