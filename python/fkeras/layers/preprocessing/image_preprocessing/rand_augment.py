"""RandAugment: `num_ops` operations picked at random from a fixed policy, in sequence."""

import numpy as np

from fkeras.layers.preprocessing.image_preprocessing.base import BaseImagePreprocessingLayer
from fkeras.layers.preprocessing.image_preprocessing.policy_layers import build_policy_layers


class RandAugment(BaseImagePreprocessingLayer):
    """RandAugment during training (the identity at inference).

    Each call picks `num_ops` operations (with repetition, shared by the batch) from
    shear, translation, rotation, brightness, colour degeneration, contrast, sharpness,
    posterization, solarization, auto-contrast and equalization, each of magnitude `factor`,
    and applies them in turn.

    Args:
        value_range: (min, max) of the input values.
        num_ops: the number of operations per call.
        factor: a number in [0, 1] or a pair, the magnitude of the operations.
        interpolation: "bilinear" or "nearest" for the geometric operations.
        seed: int or None.
        data_format: "channels_last", "channels_first" or None.

    Example:
    ```python
    y = RandAugment(value_range=(0, 255), num_ops=2, seed=1)(images)
    ```
    """

    _USE_BASE_FACTOR = False
    _FACTOR_BOUNDS = (0, 1)
    _AUGMENT_LAYERS = ["random_shear", "random_translation", "random_rotation",
                       "random_brightness", "random_color_degeneration", "random_contrast",
                       "random_sharpness", "random_posterization", "solarization",
                       "auto_contrast", "equalization"]

    def __init__(self, value_range=(0, 255), num_ops=2, factor=0.5, interpolation="bilinear",
                 seed=None, data_format=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.value_range = value_range
        self.num_ops = num_ops
        self._set_factor(factor)
        self.interpolation = interpolation
        self._make_generator(seed)
        build_policy_layers(self, self._AUGMENT_LAYERS, self.factor, value_range,
                            interpolation, seed, self.data_format)

    def get_random_transformation(self, data, training=True, seed=None):
        if not training:
            return None
        rng = self._rng(seed)
        picks = rng.integers(0, len(self._AUGMENT_LAYERS), size=(self.num_ops,))
        transforms = {}
        for name in self._AUGMENT_LAYERS:
            transforms[name] = getattr(self, name).get_random_transformation(
                data, training=True, seed=int(rng.integers(0, 2**62)))
        return {"transforms": transforms, "layer_idxes": picks}

    def transform_images(self, images, transformation, training=True):
        images = np.asarray(images, dtype=np.float32)
        if not training or transformation is None:
            return images
        for pick in np.asarray(transformation["layer_idxes"]).reshape(-1):
            name = self._AUGMENT_LAYERS[int(pick)]
            images = getattr(self, name).transform_images(
                images, transformation["transforms"][name])
        return images

    def transform_segmentation_masks(self, segmentation_masks, transformation, training=True):
        return segmentation_masks

    def transform_bounding_boxes(self, bounding_boxes, transformation, training=True):
        """Boxes go through the picked operations in turn (the geometric ones move them)."""
        if not training or transformation is None:
            return bounding_boxes
        for pick in np.asarray(transformation["layer_idxes"]).reshape(-1):
            name = self._AUGMENT_LAYERS[int(pick)]
            layer = getattr(self, name)
            layer.bounding_box_format = self.bounding_box_format
            bounding_boxes = layer.transform_bounding_boxes(
                bounding_boxes, transformation["transforms"][name])
        return bounding_boxes

    def get_config(self):
        config = super().get_config()
        config.update({"value_range": self.value_range, "num_ops": self.num_ops,
                       "factor": self.factor, "interpolation": self.interpolation,
                       "seed": self.seed})
        return config
