"""RandomErasing: replaces a random rectangle of each image with noise or a constant."""

import numpy as np

from fkeras.layers.preprocessing.image_preprocessing.base import BaseImagePreprocessingLayer


def box_masks(shape, data_format, x0, x1, y0, y1):
    """Boolean masks (shape of the images) of the boxes [x0, x1) x [y0, y1) per image."""
    if data_format == "channels_last":
        h, w = shape[1], shape[2]
        gy = np.arange(h, dtype=np.float32)[None, :, None, None]
        gx = np.arange(w, dtype=np.float32)[None, None, :, None]
    else:
        h, w = shape[2], shape[3]
        gy = np.arange(h, dtype=np.float32)[None, None, :, None]
        gx = np.arange(w, dtype=np.float32)[None, None, None, :]
    b = (lambda v: np.asarray(v, np.float32)[:, None, None, None])
    mask = (gx >= b(x0)) & (gx < b(x1)) & (gy >= b(y0)) & (gy < b(y1))
    return np.broadcast_to(mask, shape)


def crop_bounds(rng, batch, length, ratio):
    crop = (ratio * length).astype(np.float32)
    start = rng.uniform(0.0, 1.0, size=(batch,)).astype(np.float32) * (length - crop)
    return start, start + crop


class RandomErasing(BaseImagePreprocessingLayer):
    """Randomly erases a rectangle of each image during training (the identity at
    inference).

    With probability p ~ U(factor) per image, a box whose sides are sqrt(s) of the image's,
    s ~ U(scale), is replaced by `fill_value` (None: Gaussian noise times the range's
    maximum), clipped to `value_range`.

    Args:
        factor: a number in [0, 1] or a pair, the probability range of erasing.
        scale: a number in [0, 1] or a pair, the area fraction range of the box.
        fill_value: None, a number, or three numbers (one per channel).
        value_range: (min, max) of the input values.
        seed: int or None.
        data_format: "channels_last", "channels_first" or None.

    Example:
    ```python
    y = RandomErasing(factor=1.0, fill_value=0, seed=1)(images)
    ```
    """

    _USE_BASE_FACTOR = False
    _FACTOR_BOUNDS = (0, 1)

    def __init__(self, factor=1.0, scale=(0.02, 0.33), fill_value=None, value_range=(0, 255),
                 seed=None, data_format=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self._set_factor(factor)
        self.scale = self._set_factor_by_name(scale, "scale")
        self.fill_value = fill_value
        self.value_range = value_range
        self._make_generator(seed)

    def _fill(self, rng, shape):
        fill = self.fill_value
        error = "The `fill_value` argument should be a number (or a list of three numbers) "
        if fill is None:
            values = rng.standard_normal(shape) * self.value_range[1]
        elif isinstance(fill, (tuple, list)):
            if len(fill) != 3:
                raise ValueError(error)
            per_channel = np.asarray(fill, np.float64)
            if self.data_format == "channels_first":
                per_channel = per_channel[:, None, None]
            values = np.broadcast_to(per_channel, shape)
        elif isinstance(fill, (int, float)):
            values = np.full(shape, float(fill))
        else:
            raise ValueError(error)
        return np.clip(values, self.value_range[0], self.value_range[1]).astype(np.float32)

    def get_random_transformation(self, data, training=True, seed=None):
        if not training:
            return None
        images = data["images"] if isinstance(data, dict) else data
        shape = np.shape(images)
        batch = shape[0]
        height, width = self._hw(shape)
        rng = self._rng(seed)
        weight = np.sqrt(rng.uniform(self.scale[0], self.scale[1], size=(batch, 2)))
        x0, x1 = crop_bounds(rng, batch, width, weight[:, 0])
        y0, y1 = crop_bounds(rng, batch, height, weight[:, 1])
        return {"apply_erasing": self._apply_mask(rng, batch),
                "batch_masks": box_masks(shape, self.data_format, x0, x1, y0, y1),
                "fill_value": self._fill(rng, shape)}

    def transform_images(self, images, transformation, training=True):
        images = np.asarray(images, dtype=np.float32)
        if not training or transformation is None:
            return images
        erased = np.where(transformation["batch_masks"], transformation["fill_value"], images)
        apply = np.asarray(transformation["apply_erasing"]).reshape(-1, 1, 1, 1)
        return np.where(apply, erased, images).astype(np.float32)

    def get_config(self):
        config = super().get_config()
        config.update({"factor": self.factor, "scale": self.scale,
                       "fill_value": self.fill_value, "value_range": self.value_range,
                       "seed": self.seed})
        return config
