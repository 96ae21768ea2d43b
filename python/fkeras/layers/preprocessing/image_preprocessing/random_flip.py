"""RandomFlip: flips images left-right and/or top-bottom at random (training only)."""

import numpy as np

from fkeras.layers.preprocessing.image_preprocessing import bounding_boxes as bbox
from fkeras.layers.preprocessing.image_preprocessing.base import BaseImagePreprocessingLayer

HORIZONTAL = "horizontal"
VERTICAL = "vertical"
HORIZONTAL_AND_VERTICAL = "horizontal_and_vertical"


class RandomFlip(BaseImagePreprocessingLayer):
    """Randomly flips images during training (the identity at inference).

    Each image is flipped with probability 1/2; with "horizontal_and_vertical" one draw
    decides both flips (Keras 3).

    Args:
        mode: "horizontal" (left-right), "vertical" (top-bottom) or
            "horizontal_and_vertical".
        seed: int or None, seeds the layer's stream of draws.
        data_format: "channels_last", "channels_first" or None.
        **kwargs: base layer arguments (`name`, `dtype`, `bounding_box_format`).

    Example:
    ```python
    y = RandomFlip("horizontal", seed=1)(images, training=True)
    ```
    """

    _USE_BASE_FACTOR = False

    def __init__(self, mode=HORIZONTAL_AND_VERTICAL, seed=None, data_format=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self._make_generator(seed)
        self.mode = mode

    def get_random_transformation(self, data, training=True, seed=None):
        if not training:
            return None
        images = data["images"] if isinstance(data, dict) else data
        shape = np.shape(images)
        flips = self._rng(seed).uniform(size=(shape[0] if len(shape) == 4 else 1, 1, 1, 1))
        return {"flips": flips <= 0.5, "input_shape": shape}

    def _transform_images(self, images, transformation, interpolation):
        flips = np.asarray(transformation["flips"]).reshape(-1, 1, 1, 1).astype(bool)
        out = images
        if self.mode in (HORIZONTAL, HORIZONTAL_AND_VERTICAL):
            out = np.where(flips, out[:, :, ::-1], out)
        if self.mode in (VERTICAL, HORIZONTAL_AND_VERTICAL):
            out = np.where(flips, out[:, ::-1], out)
        return out

    def transform_segmentation_masks(self, segmentation_masks, transformation, training=True):
        return self.transform_images(segmentation_masks, transformation, training)

    def transform_bounding_boxes(self, bounding_boxes, transformation, training=True):
        if not training or transformation is None:
            return bounding_boxes
        height, width = self._hw(transformation["input_shape"])
        boxes = bbox.to_xyxy(bounding_boxes["boxes"], self.bounding_box_format, height, width)
        flips = np.asarray(transformation["flips"]).reshape(-1, 1, 1).astype(bool)
        x1, y1, x2, y2 = (boxes[..., i:i + 1] for i in range(4))
        if self.mode in (HORIZONTAL, HORIZONTAL_AND_VERTICAL):
            x1, x2 = np.where(flips, width - x2, x1), np.where(flips, width - x1, x2)
        if self.mode in (VERTICAL, HORIZONTAL_AND_VERTICAL):
            y1, y2 = np.where(flips, height - y2, y1), np.where(flips, height - y1, y2)
        # Keras 3.15 clips the flipped boxes in relative units against the absolute size,
        # so only negative coordinates are clamped (to 0); empty boxes get label -1.
        boxes = np.maximum(np.concatenate([x1, y1, x2, y2], -1), 0.0)
        out = bbox.clip_xyxy(dict(bounding_boxes, boxes=boxes), np.inf, np.inf)
        out["boxes"] = bbox.from_xyxy(out["boxes"], self.bounding_box_format, height, width)
        return out

    def get_config(self):
        config = super().get_config()
        config.update({"seed": self.seed, "mode": self.mode, "data_format": self.data_format})
        return config
