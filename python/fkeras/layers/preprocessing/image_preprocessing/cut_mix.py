"""CutMix: pastes a random box of another image of the batch into each image."""

import numpy as np

from fkeras.layers.preprocessing.image_preprocessing.base import BaseImagePreprocessingLayer
from fkeras.layers.preprocessing.image_preprocessing.random_erasing import (
    box_masks,
    crop_bounds,
)


class CutMix(BaseImagePreprocessingLayer):
    """CutMix during training (the identity at inference, and for single images).

    A box covering 1 - w of the area, w ~ Beta(a, a) with a ~ U(factor), is copied from a
    random partner image; labels mix with the pasted fraction.

    Args:
        factor: a number in [0, 1] or a pair, the range of the Beta parameter.
        seed: int or None.
        data_format: "channels_last", "channels_first" or None.

    Example:
    ```python
    out = CutMix(seed=1)({"images": images, "labels": one_hot_labels})
    ```
    """

    _USE_BASE_FACTOR = False
    _FACTOR_BOUNDS = (0, 1)

    def __init__(self, factor=1.0, seed=None, data_format=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self._set_factor(factor)
        self._make_generator(seed)

    def get_random_transformation(self, data, training=True, seed=None):
        if not training:
            return None
        images = data["images"] if isinstance(data, dict) else data
        shape = np.shape(images)
        batch = shape[0]
        height, width = self._hw(shape)
        rng = self._rng(seed)
        alpha = rng.uniform(self.factor[0], self.factor[1]) + 1e-6
        ratio = np.sqrt(1.0 - rng.beta(alpha, alpha, size=(batch,)))
        x0, x1 = crop_bounds(rng, batch, width, ratio)
        y0, y1 = crop_bounds(rng, batch, height, ratio)
        masks = box_masks(shape, self.data_format, x0, x1, y0, y1)
        weight = 1.0 - (x1 - x0) * (y1 - y0) / (width * height)
        return {"permutation_order": rng.permutation(batch).astype(np.int32),
                "batch_masks": masks, "mix_weight": weight.astype(np.float32)}

    def transform_images(self, images, transformation, training=True):
        images = np.asarray(images, dtype=np.float32)
        if not training or transformation is None:
            return images
        partner = np.take(images, np.asarray(transformation["permutation_order"]), axis=0)
        return np.where(transformation["batch_masks"], partner, images).astype(np.float32)

    def transform_labels(self, labels, transformation, training=True):
        if not training or transformation is None:
            return labels
        labels = np.asarray(labels, dtype=np.float32)
        w = np.asarray(transformation["mix_weight"], np.float32).reshape(-1, 1)
        partner = np.take(labels, np.asarray(transformation["permutation_order"]), axis=0)
        return (w * labels + (1.0 - w) * partner).astype(np.float32)

    def transform_segmentation_masks(self, segmentation_masks, transformation, training=True):
        return self.transform_images(segmentation_masks, transformation, training)

    def transform_bounding_boxes(self, bounding_boxes, transformation, training=True):
        # Keras 3 refuses boxes here too (a pasted patch carries another image's objects).
        raise NotImplementedError(f"{type(self).__name__} does not support bounding boxes "
                                  "(as in Keras 3).")

    def get_config(self):
        config = super().get_config()
        config.update({"factor": self.factor, "seed": self.seed})
        return config
