"""`keras.preprocessing.image`: image loading and conversion (the `fkeras.utils` functions)
and `smart_resize`."""

import numpy as np

from fkeras.utils import array_to_img, img_to_array, load_img, save_img


def smart_resize(x, size, interpolation="bilinear", data_format="channels_last", **kwargs):
    """Resizes images to `size` without distorting them: the largest centred crop with the
    target's aspect ratio, then a resize (Keras 3.15's `smart_resize`).

    For instance, `size=(200, 200)` on a (340, 500) image takes the centred (340, 340) crop and
    resizes it to (200, 200).

    Args:
        x: an image (height, width, channels) or a batch (batch, height, width, channels)
            (channels first with `data_format="channels_first"`), a NumPy array or a tensor.
        size: `(height, width)`, the target size.
        interpolation: "bilinear", "nearest" or "bicubic" (as `fkeras.ops.image.resize`;
            Keras's "lanczos3"/"lanczos5" are refused, as on Keras's torch backend).
        data_format: "channels_last" or "channels_first".

    Returns:
        The resized images: a NumPy array of `x`'s dtype when `x` is one (computed in
        float32), else a tensor.
    """
    from fkeras import ops

    kwargs.pop("backend_module", None)  # Keras's backend switch; fkeras has one backend
    if kwargs:
        raise TypeError(f"smart_resize() got unexpected keyword arguments: {list(kwargs)}")
    if len(size) != 2:
        raise ValueError(f"Expected `size` to be a tuple of 2 integers, but got: {size}.")
    rank = len(np.shape(x))
    if rank not in (3, 4):
        raise ValueError("Expected an image array with shape `(height, width, channels)`, or "
                         "`(batch_size, height, width, channels)`, but got input with "
                         f"incorrect rank, of shape {tuple(np.shape(x))}.")
    out = ops.image.resize(x, tuple(size), interpolation=interpolation,
                           crop_to_aspect_ratio=True, data_format=data_format)
    if isinstance(x, np.ndarray):
        return np.asarray(out).astype(x.dtype, copy=False)
    return out


__all__ = ["array_to_img", "img_to_array", "load_img", "save_img", "smart_resize"]
