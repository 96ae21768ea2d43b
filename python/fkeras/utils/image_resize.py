"""Resizing one image (H, W, C) in NumPy, as Keras 3's `ops.image.resize` does on its torch
backend with `antialias=False` (the path `image_dataset_from_directory` takes without
TensorFlow): half-pixel centres, no corner alignment, float32 in and out.

- "nearest": source index floor((i + 0.5) * in / out), clamped.
- "bilinear": source coordinate (i + 0.5) * in / out - 0.5, negative values clamped to 0,
  the linear blend of floor and floor + 1 (the last index repeated at the border).
- "bicubic": the same coordinate (not clamped), Keys' cubic convolution with a = -0.75 over
  the 4 nearest indices, clamped to the border (PyTorch's; TensorFlow uses a = -0.5).

Each axis is an (out, in) weight matrix, so the resize is two small matrix products.
`crop_to_aspect_ratio` cuts the centred largest box of the target's aspect ratio first;
`pad_to_aspect_ratio` adds `fill_value` borders of equal size on both sides first.
"""

import numpy as np

INTERPOLATIONS = ("bilinear", "nearest", "bicubic")


def _cubic(t, a=-0.75):
    t = np.abs(t)
    near = ((a + 2) * t - (a + 3)) * t * t + 1
    far = ((a * t - 5 * a) * t + 8 * a) * t - 4 * a
    return np.where(t <= 1, near, np.where(t < 2, far, 0.0))


def axis_weights(size_in, size_out, interpolation):
    """(size_out, size_in) float64 weights of one axis."""
    scale = size_in / size_out
    out = np.arange(size_out)
    weights = np.zeros((size_out, size_in))
    if interpolation == "nearest":
        src = np.minimum(np.floor((out + 0.5) * scale).astype(np.int64), size_in - 1)
        weights[out, src] = 1.0
        return weights
    src = (out + 0.5) * scale - 0.5
    if interpolation == "bilinear":
        src = np.maximum(src, 0.0)
        lo = np.floor(src).astype(np.int64)
        frac = src - lo
        lo = np.minimum(lo, size_in - 1)
        hi = np.minimum(lo + 1, size_in - 1)
        np.add.at(weights, (out, lo), 1.0 - frac)
        np.add.at(weights, (out, hi), frac)
        return weights
    base = np.floor(src).astype(np.int64)
    frac = src - base
    for k in range(-1, 3):
        index = np.clip(base + k, 0, size_in - 1)
        np.add.at(weights, (out, index), _cubic(frac - k))
    return weights


def _crop_box(height, width, target_h, target_w):
    crop_h = max(min(height, int(float(width * target_h) / target_w)), 1)
    crop_w = max(min(width, int(float(height * target_w) / target_h)), 1)
    top = int(float(height - crop_h) / 2)
    left = int(float(width - crop_w) / 2)
    return top, left, crop_h, crop_w


def _pad(image, target_h, target_w, fill_value):
    height, width = image.shape[:2]
    pad_h = max(height, int(float(width * target_h) / target_w))
    pad_w = max(width, int(float(height * target_w) / target_h))
    top = int(float(pad_h - height) / 2)
    left = int(float(pad_w - width) / 2)
    return np.pad(image, ((top, top), (left, left), (0, 0)), constant_values=fill_value)


def resize(image, size, interpolation="bilinear", crop_to_aspect_ratio=False,
           pad_to_aspect_ratio=False, fill_value=0.0):
    """Resizes a (H, W, C) image to `size` = (height, width); returns float32."""
    if interpolation not in INTERPOLATIONS:
        raise ValueError(f"Invalid value for argument `interpolation`. Expected one of "
                         f"{INTERPOLATIONS}. Received: interpolation={interpolation!r}")
    if crop_to_aspect_ratio and pad_to_aspect_ratio:
        raise ValueError("Only one of `pad_to_aspect_ratio`, `crop_to_aspect_ratio` can be "
                         "set to `True`.")
    image = np.asarray(image, dtype=np.float32)
    target_h, target_w = (int(s) for s in size)
    if crop_to_aspect_ratio:
        top, left, h, w = _crop_box(image.shape[0], image.shape[1], target_h, target_w)
        image = image[top:top + h, left:left + w]
    elif pad_to_aspect_ratio:
        image = _pad(image, target_h, target_w, fill_value)
    if image.shape[:2] == (target_h, target_w) and interpolation != "bicubic":
        return np.ascontiguousarray(image)
    wh = axis_weights(image.shape[0], target_h, interpolation).astype(np.float32)
    ww = axis_weights(image.shape[1], target_w, interpolation).astype(np.float32)
    rows = np.einsum("oh,hwc->owc", wh, image)
    return np.ascontiguousarray(np.einsum("pw,owc->opc", ww, rows), dtype=np.float32)
