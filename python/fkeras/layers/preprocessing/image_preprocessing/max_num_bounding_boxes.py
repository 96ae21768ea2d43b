"""MaxNumBoundingBoxes: pads or truncates the boxes of each image to a fixed count."""

import numpy as np

from fkeras.layers.preprocessing.image_preprocessing.base import BaseImagePreprocessingLayer


class MaxNumBoundingBoxes(BaseImagePreprocessingLayer):
    """Makes "bounding_boxes" dense with exactly `max_number` boxes per image: extra boxes
    are dropped, missing ones are filled with `fill_value` (boxes and labels). Images and
    labels pass unchanged; applied in training and inference.

    Args:
        max_number: the number of boxes per image.
        fill_value: the value of padding boxes and labels.

    Example:
    ```python
    out = MaxNumBoundingBoxes(10)({"images": images, "bounding_boxes": boxes})
    ```
    """

    def __init__(self, max_number, fill_value=-1, **kwargs):
        super().__init__(**kwargs)
        self.max_number = int(max_number)
        self.fill_value = int(fill_value)

    def transform_images(self, images, transformation=None, training=True):
        return np.asarray(images, dtype=np.float32)

    def transform_segmentation_masks(self, segmentation_masks, transformation, training=True):
        return segmentation_masks

    def transform_bounding_boxes(self, bounding_boxes, transformation, training=True):
        boxes = np.asarray(bounding_boxes["boxes"])[:, :self.max_number]
        labels = np.asarray(bounding_boxes["labels"])[:, :self.max_number]
        pad = max(self.max_number - boxes.shape[1], 0)
        boxes = np.pad(boxes, ((0, 0), (0, pad), (0, 0)), constant_values=self.fill_value)
        labels = np.pad(labels, ((0, 0), (0, pad)), constant_values=self.fill_value)
        return {**bounding_boxes, "boxes": boxes, "labels": labels}

    def compute_output_shape(self, input_shape):
        if isinstance(input_shape, dict) and "bounding_boxes" in input_shape:
            extra = set(input_shape["bounding_boxes"]) - {"boxes", "labels"}
            if extra:
                raise KeyError(f"There are unsupported keys in `bounding_boxes`: "
                               f"{list(extra)}. Only `boxes` and `labels` are supported.")
            boxes = list(input_shape["bounding_boxes"]["boxes"])
            labels = list(input_shape["bounding_boxes"]["labels"])
            boxes[1] = labels[1] = self.max_number
            input_shape["bounding_boxes"]["boxes"] = boxes
            input_shape["bounding_boxes"]["labels"] = labels
        return input_shape

    def get_config(self):
        config = super().get_config()
        config.update({"max_number": self.max_number})
        return config
