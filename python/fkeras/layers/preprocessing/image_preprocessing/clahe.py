"""ContrastLimitedAdaptiveHistogramEqualization (CLAHE): tile-wise equalization with a clip
limit, bilinearly blended between tiles (deterministic)."""

import numpy as np

from fkeras.layers.preprocessing.image_preprocessing.base import (
    BaseImagePreprocessingLayer,
    standardize_data_format,
)


def _tile_luts(padded, grid_h, grid_w, tile_h, tile_w, clip_limit):
    """(N, gh + 2, gw + 2, C, 256) lookup tables: each tile's clipped, normalized CDF, with the
    border tiles repeated once on each side."""
    n, _, _, c = padded.shape
    tiles = padded.reshape(n, grid_h, tile_h, grid_w, tile_w, c).transpose(0, 1, 3, 5, 2, 4)
    values = np.clip(tiles.reshape(n, grid_h, grid_w, c, tile_h * tile_w).astype(np.int32),
                     0, 255)
    rows = values.reshape(-1, tile_h * tile_w) + 256 * np.arange(values.size //
                                                                 (tile_h * tile_w))[:, None]
    hists = np.bincount(rows.reshape(-1), minlength=rows.shape[0] * 256).astype(np.float64)
    hists = hists.reshape(n, grid_h, grid_w, c, 256)
    if clip_limit > 0:
        limit = clip_limit * (tile_h * tile_w) / 256.0
        clipped = np.clip(hists, 0, limit)
        hists = clipped + (hists - clipped).sum(axis=-1, keepdims=True) / 256.0
    cdf = np.cumsum(hists, axis=-1)
    cdf_min = cdf.min(axis=-1, keepdims=True)
    denominator = tile_h * tile_w - cdf_min
    denominator = np.where(denominator == 0, 1.0, denominator)
    lut = np.clip((cdf - cdf_min) * 255.0 / denominator, 0, 255)
    lut = np.concatenate([lut[:, :1], lut, lut[:, -1:]], axis=1)
    return np.concatenate([lut[:, :, :1], lut, lut[:, :, -1:]], axis=2)


def _axis_weights(length, tile, grid):
    pos = (np.arange(length, dtype=np.float32) - tile / 2.0) / tile + 1.0
    lo = np.floor(pos)
    w = pos - lo
    return (np.clip(lo, 0, grid + 1).astype(np.int64),
            np.clip(lo + 1, 0, grid + 1).astype(np.int64), w)


def clahe(images, clip_limit, tile_grid_size):
    """NHWC images on [0, 255] -> CLAHE-equalized images (Keras 3's algorithm)."""
    n, height, width, c = images.shape
    grid_h, grid_w = tile_grid_size
    tile_h, tile_w = -(-height // grid_h), -(-width // grid_w)
    pad_h, pad_w = tile_h * grid_h - height, tile_w * grid_w - width
    padded = np.pad(images, ((0, 0), (0, pad_h), (0, pad_w), (0, 0)), mode="symmetric") \
        if pad_h or pad_w else images
    lut = _tile_luts(padded, grid_h, grid_w, tile_h, tile_w, clip_limit)
    y0, y1, wy = _axis_weights(tile_h * grid_h, tile_h, grid_h)
    x0, x1, wx = _axis_weights(tile_w * grid_w, tile_w, grid_w)
    pixels = np.clip(padded, 0, 255).astype(np.int32)
    b = np.arange(n)[:, None, None, None]
    ch = np.arange(c)[None, None, None, :]

    def at(ys, xs):
        return lut[b, ys[None, :, None, None], xs[None, None, :, None], ch, pixels]

    wx_e, wy_e = wx[None, None, :, None], wy[None, :, None, None]
    top = at(y0, x0) * (1.0 - wx_e) + at(y0, x1) * wx_e
    bottom = at(y1, x0) * (1.0 - wx_e) + at(y1, x1) * wx_e
    return (top * (1.0 - wy_e) + bottom * wy_e)[:, :height, :width]


class ContrastLimitedAdaptiveHistogramEqualization(BaseImagePreprocessingLayer):
    """Contrast-limited adaptive histogram equalization, applied in training and inference
    alike (Keras 3).

    The image is cut into a `tile_grid_size` grid; each tile's histogram is clipped at
    clip_limit * tile_pixels / 256 (the excess spread evenly), its CDF normalized to
    [0, 255], and each pixel blends the four nearest tiles' mappings bilinearly.

    Args:
        value_range: (min, max) of the input values.
        clip_limit: the histogram clip limit (<= 0 disables clipping).
        tile_grid_size: (rows, columns) of tiles.
        data_format: "channels_last", "channels_first" or None.

    Example:
    ```python
    y = ContrastLimitedAdaptiveHistogramEqualization(tile_grid_size=(4, 4))(images)
    ```
    """

    def __init__(self, value_range=(0, 255), clip_limit=4.0, tile_grid_size=(8, 8),
                 data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.value_range = value_range
        self.clip_limit = clip_limit
        self.tile_grid_size = tile_grid_size
        self.data_format = standardize_data_format(data_format)

    def transform_images(self, images, transformation=None, training=True):
        x = self.to_nhwc(np.asarray(images, dtype=np.float32))
        x = self._transform_value_range(x, self.value_range, (0, 255))
        out = clahe(x.astype(np.float32), self.clip_limit, tuple(self.tile_grid_size))
        return self.from_nhwc(self._transform_value_range(out, (0, 255), self.value_range))

    def transform_segmentation_masks(self, segmentation_masks, transformation, training=True):
        return segmentation_masks

    def get_config(self):
        config = super().get_config()
        config.update({"value_range": self.value_range, "clip_limit": self.clip_limit,
                       "tile_grid_size": self.tile_grid_size,
                       "data_format": self.data_format})
        return config
