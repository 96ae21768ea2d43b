"""RandomCrop: crops a random (height, width) window (training only)."""

import numpy as np

from fkeras import random as fk_random
from fkeras.layers.preprocessing.image_preprocessing import bounding_boxes as bbox
from fkeras.layers.preprocessing.image_preprocessing import transforms
from fkeras.layers.preprocessing.image_preprocessing.base import BaseImagePreprocessingLayer


class RandomCrop(BaseImagePreprocessingLayer):
    """Randomly crops images to (height, width) during training.

    Training: one window position per call (shared by the batch), drawn uniformly when the
    input is larger than the target in both dimensions; otherwise the largest centred window
    of the target's aspect ratio is taken, and anything not already (height, width) is
    resized (bilinear). Inference (`training=False`, e.g. `predict`): the input is returned
    unchanged, as Keras 3.15 does (its output then keeps the input's size).

    Args:
        height: int, the output height.
        width: int, the output width.
        seed: int or None (Keras records a drawn default seed in the config).
        data_format: "channels_last", "channels_first" or None.

    Example:
    ```python
    y = RandomCrop(24, 24, seed=1)(images)   # (N, 32, 32, 3) -> (N, 24, 24, 3)
    ```
    """

    _USE_BASE_FACTOR = False

    def __init__(self, height, width, seed=None, data_format=None, name=None, **kwargs):
        super().__init__(name=name, data_format=data_format, **kwargs)
        self.height = height
        self.width = width
        self._make_generator(seed)
        if seed is None:
            self.seed = fk_random.SeedGenerator().next() % (2**31 - 1)
        self.height_axis, self.width_axis = (-3, -2) if self.data_format == "channels_last" \
            else (-2, -1)

    def get_random_transformation(self, data, training=True, seed=None):
        images = data["images"] if isinstance(data, dict) else data
        shape = np.shape(images)
        in_h, in_w = shape[self.height_axis], shape[self.width_axis]
        if training and in_h > self.height and in_w > self.width:
            rng = self._rng(seed)
            return (int(rng.integers(0, in_h - self.height + 1)),
                    int(rng.integers(0, in_w - self.width + 1)), in_h, in_w)
        crop_h = max(min(in_h, int(float(in_w * self.height) / self.width)), 1)
        crop_w = max(min(in_w, int(float(in_h * self.width) / self.height)), 1)
        return (int(float(in_h - crop_h) / 2), int(float(in_w - crop_w) / 2), in_h, in_w)

    def transform_images(self, images, transformation, training=True):
        images = np.asarray(images, dtype=np.float32)
        if not training:
            return images
        h0, w0 = transformation[:2]
        nhwc = self.to_nhwc(images)[:, h0:h0 + self.height, w0:w0 + self.width]
        if nhwc.shape[1:3] != (self.height, self.width):
            nhwc = transforms.resize_bilinear(nhwc, self.height, self.width)
        return self.from_nhwc(nhwc)

    def transform_segmentation_masks(self, segmentation_masks, transformation, training=True):
        return self.transform_images(segmentation_masks, transformation, training)

    def transform_bounding_boxes(self, bounding_boxes, transformation, training=True):
        """Boxes move with the crop window, are clipped to it and scaled as the window is
        resized (when the input is smaller than the crop); empty ones get label -1. (Keras
        3.15 subtracts the row offset from x and does not clip.)"""
        if not training:
            return bounding_boxes
        h0, w0, in_h, in_w = transformation
        fmt = self.bounding_box_format
        boxes = bbox.to_xyxy(bounding_boxes["boxes"], fmt, in_h, in_w) - [w0, h0, w0, h0]
        kept_h, kept_w = min(self.height, in_h - h0), min(self.width, in_w - w0)
        out = bbox.clip_xyxy(dict(bounding_boxes, boxes=boxes), kept_h, kept_w)
        scale = [self.width / kept_w, self.height / kept_h] * 2
        out["boxes"] = bbox.from_xyxy(out["boxes"] * scale, fmt, self.height, self.width)
        return out

    def compute_output_shape(self, input_shape, *args, **kwargs):
        shape = list(input_shape)
        shape[self.height_axis] = self.height
        shape[self.width_axis] = self.width
        return tuple(shape)

    def get_config(self):
        config = super().get_config()
        config.update({"height": self.height, "width": self.width, "seed": self.seed,
                       "data_format": self.data_format})
        return config
