"""RandomZoom: zooms images in or out by a random factor (training only)."""

import numpy as np

from fkeras.layers.preprocessing.image_preprocessing import bounding_boxes as bbox
from fkeras.layers.preprocessing.image_preprocessing.base import standardize_data_format
from fkeras.layers.preprocessing.image_preprocessing.geometric import AffineLayer, split_factor

_ERROR = ("The `height_factor` and `width_factor` arguments should be a number (or a list of "
          "two numbers) in the range (-1.0, 1.0]. ")


def _check(value):
    if value > 1.0 or value <= -1.0:
        raise ValueError(_ERROR + f"Received: input_number={value}")


def zoom_matrix(zooms, height, width):
    """(N, 8) transforms for per-image (width_zoom, height_zoom) about the image centre."""
    zx, zy = zooms[:, 0], zooms[:, 1]
    zeros = np.zeros_like(zx)
    return np.stack([zx, zeros, (width - 1.0) / 2.0 * (1.0 - zx), zeros, zy,
                     (height - 1.0) / 2.0 * (1.0 - zy), zeros, zeros], axis=1)


class RandomZoom(AffineLayer):
    """Randomly zooms images during training (the identity at inference).

    Args:
        height_factor: a fraction of the height, a number (the range [-f, f]) or a pair; a
            positive value zooms out (the image shrinks), a negative one zooms in. Each bound
            in (-1, 1].
        width_factor: the same for the width, or None (keep the aspect ratio: the height's
            zoom is used).
        fill_mode, interpolation, seed, fill_value, data_format: as in `RandomRotation`.

    Example:
    ```python
    y = RandomZoom((-0.5, -0.5))(images)   # a 2x zoom in
    ```
    """

    _USE_BASE_FACTOR = False

    def __init__(self, height_factor, width_factor=None, fill_mode="reflect",
                 interpolation="bilinear", seed=None, fill_value=0.0, data_format=None,
                 **kwargs):
        super().__init__(**kwargs)
        self.height_factor = height_factor
        self.height_lower, self.height_upper = split_factor(height_factor, "height_factor",
                                                            _ERROR, _check)
        self.width_factor = width_factor
        if width_factor is not None:
            self.width_lower, self.width_upper = split_factor(width_factor, "width_factor",
                                                              _ERROR, _check)
        self._set_sampling(fill_mode, interpolation, fill_value)
        self._make_generator(seed)
        self.data_format = standardize_data_format(data_format)

    def get_random_transformation(self, data, training=True, seed=None):
        if not training:
            return None
        shape, batch, _ = self._batch_hw(data)
        rng = self._rng(seed)
        height_zoom = rng.uniform(1.0 + self.height_lower, 1.0 + self.height_upper,
                                  size=(batch, 1))
        width_zoom = height_zoom if self.width_factor is None else \
            rng.uniform(1.0 + self.width_lower, 1.0 + self.width_upper, size=(batch, 1))
        return {"height_zoom": height_zoom.astype(np.float32),
                "width_zoom": width_zoom.astype(np.float32), "input_shape": shape}

    def _matrix(self, transformation, height, width):
        zooms = np.concatenate([np.asarray(transformation["width_zoom"], np.float64),
                                np.asarray(transformation["height_zoom"], np.float64)], axis=1)
        return zoom_matrix(zooms, height, width)

    def transform_bounding_boxes(self, bounding_boxes, transformation, training=True):
        """Boxes follow the zoom: clipped to the part of the input still visible, rescaled
        to the output (empty ones get label -1)."""
        if not training or transformation is None:
            return bounding_boxes
        height, width = self._hw(transformation["input_shape"])
        boxes = bbox.to_xyxy(bounding_boxes["boxes"], self.bounding_box_format, height, width)
        m = self._matrix(transformation, height, width)[:, None, :]
        start = np.stack([m[..., 2], m[..., 5]], -1)
        end = np.stack([m[..., 0] * width + m[..., 2], m[..., 4] * height + m[..., 5]], -1)
        start, end = np.concatenate([start, start], -1), np.concatenate([end, end], -1)
        rel = (np.clip(boxes, start, end) - start) / (end - start)
        out = bbox.clip_xyxy(dict(bounding_boxes, boxes=np.clip(rel, 0.0, 1.0)), 1.0, 1.0)
        out["boxes"] = bbox.from_xyxy(out["boxes"] * [width, height, width, height],
                                      self.bounding_box_format, height, width)
        return out

    def get_config(self):
        config = super().get_config()
        config.update({"height_factor": self.height_factor, "width_factor": self.width_factor,
                       "fill_mode": self.fill_mode, "interpolation": self.interpolation,
                       "seed": self.seed, "fill_value": self.fill_value,
                       "data_format": self.data_format})
        return config
