"""MixUp: blends each image (and label) with another image of the batch."""

import numpy as np

from fkeras.layers.preprocessing.image_preprocessing.base import BaseImagePreprocessingLayer


class MixUp(BaseImagePreprocessingLayer):
    """MixUp during training (the identity at inference).

    out_i = w_i x_i + (1 - w_i) x_p(i), w_i ~ Beta(alpha, alpha), p a random permutation of
    the batch; labels and segmentation masks are mixed the same way, bounding boxes of the
    partner are appended.

    Args:
        alpha: the Beta distribution's parameter.
        data_format: "channels_last", "channels_first" or None.
        seed: int or None.

    Example:
    ```python
    out = MixUp(alpha=0.2)({"images": images, "labels": one_hot_labels})
    ```
    """

    def __init__(self, alpha=0.2, data_format=None, seed=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.alpha = alpha
        self._make_generator(seed)

    def get_random_transformation(self, data, training=True, seed=None):
        batch = self._batch_size(data)
        rng = self._rng(seed)
        order = rng.permutation(batch).astype(np.int64)
        weight = rng.beta(self.alpha, self.alpha, size=(batch,))
        return {"mix_weight": weight.astype(np.float32), "permutation_order": order}

    def _mix(self, values, transformation):
        values = np.asarray(values, dtype=np.float32)
        w = np.asarray(transformation["mix_weight"], np.float32)
        w = w.reshape((-1,) + (1,) * (values.ndim - 1))
        partner = np.take(values, np.asarray(transformation["permutation_order"]), axis=0)
        return (w * values + (1.0 - w) * partner).astype(np.float32)

    def transform_images(self, images, transformation, training=True):
        images = np.asarray(images, dtype=np.float32)
        return self._mix(images, transformation) if training and transformation else images

    def transform_labels(self, labels, transformation, training=True):
        return self._mix(labels, transformation) if training and transformation else labels

    def transform_segmentation_masks(self, segmentation_masks, transformation, training=True):
        return self.transform_labels(segmentation_masks, transformation, training)

    def transform_bounding_boxes(self, bounding_boxes, transformation, training=True):
        if not training or not transformation:
            return bounding_boxes
        order = np.asarray(transformation["permutation_order"])
        boxes, labels = bounding_boxes["boxes"], bounding_boxes["labels"]
        return {"boxes": np.concatenate([boxes, np.take(boxes, order, axis=0)], axis=1),
                "labels": np.concatenate([labels, np.take(labels, order, axis=0)], axis=1)}

    def get_config(self):
        config = super().get_config()
        config.update({"alpha": self.alpha, "seed": self.seed})
        return config
