"""RandomTranslation: shifts images by a random offset (training only)."""

import numpy as np

from fkeras.layers.preprocessing.image_preprocessing import bounding_boxes as bbox
from fkeras.layers.preprocessing.image_preprocessing.geometric import AffineLayer, split_factor

_ERROR = ("The `factor` argument should be a number (or a list of two numbers) in the range "
          "[-1.0, 1.0]. ")


def _check(value):
    if value > 1.0 or value < -1.0:
        raise ValueError(_ERROR + f"Received: input_number={value}")


class RandomTranslation(AffineLayer):
    """Randomly translates images during training (the identity at inference).

    Args:
        height_factor: a fraction of the height, a number (the range [-f, f]) or a pair in
            [-1, 1]; positive values shift the image down.
        width_factor: the same for the width; positive values shift it right.
        fill_mode, interpolation, seed, fill_value, data_format: as in `RandomRotation`.

    Example:
    ```python
    y = RandomTranslation((0.25, 0.25), 0.0)(images)   # a quarter of the height down
    ```
    """

    _USE_BASE_FACTOR = False

    def __init__(self, height_factor, width_factor, fill_mode="reflect",
                 interpolation="bilinear", seed=None, fill_value=0.0, data_format=None,
                 **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.height_factor = height_factor
        self.height_lower, self.height_upper = split_factor(height_factor, "height_factor",
                                                            _ERROR, _check)
        self.width_factor = width_factor
        self.width_lower, self.width_upper = split_factor(width_factor, "width_factor",
                                                          _ERROR, _check)
        self._set_sampling(fill_mode, interpolation, fill_value)
        self._make_generator(seed)

    def get_random_transformation(self, data, training=True, seed=None):
        if not training:
            return None
        shape, batch, (height, width) = self._batch_hw(data)
        rng = self._rng(seed)
        dy = rng.uniform(self.height_lower, self.height_upper, size=(batch, 1)) * height
        dx = rng.uniform(self.width_lower, self.width_upper, size=(batch, 1)) * width
        return {"translations": np.concatenate([dx, dy], axis=1).astype(np.float32),
                "input_shape": shape}

    def _matrix(self, transformation, height, width):
        t = np.asarray(transformation["translations"], np.float64)
        ones, zeros = np.ones(len(t)), np.zeros(len(t))
        return np.stack([ones, zeros, -t[:, 0], zeros, ones, -t[:, 1], zeros, zeros], axis=1)

    def transform_bounding_boxes(self, bounding_boxes, transformation, training=True):
        """Boxes shift with the image and are clipped to it (empty ones get label -1)."""
        if not training or transformation is None:
            return bounding_boxes
        height, width = self._hw(transformation["input_shape"])
        boxes = bbox.to_xyxy(bounding_boxes["boxes"], self.bounding_box_format, height, width)
        t = np.asarray(transformation["translations"], np.float64)[:, None, :]
        boxes = boxes + np.concatenate([t, t], axis=-1)
        out = bbox.clip_xyxy(dict(bounding_boxes, boxes=boxes), height, width)
        out["boxes"] = bbox.from_xyxy(out["boxes"], self.bounding_box_format, height, width)
        return out

    def get_config(self):
        config = super().get_config()
        config.update({"height_factor": self.height_factor, "width_factor": self.width_factor,
                       "fill_mode": self.fill_mode, "interpolation": self.interpolation,
                       "seed": self.seed, "fill_value": self.fill_value,
                       "data_format": self.data_format})
        return config
