"""RandomPerspective: moves the four corners of an image at random (a projective warp)."""

import numpy as np

from fkeras.layers.preprocessing.image_preprocessing import transforms
from fkeras.layers.preprocessing.image_preprocessing.geometric import warp_boxes
from fkeras.layers.preprocessing.image_preprocessing.base import (
    BaseImagePreprocessingLayer,
    check_choice,
)


class RandomPerspective(BaseImagePreprocessingLayer):
    """Randomly applies a perspective transform during training (the identity at inference).

    Each image is warped with probability p ~ U(factor); its corners move by up to
    scale / 2 of their coordinates; points outside the input take `fill_value`.

    Args:
        factor: a number in [0, 1] or a pair: the range of the probability of warping.
        scale: in [0, 1], the strength of the corner displacement.
        interpolation: "bilinear" or "nearest".
        fill_value: the value outside the input.
        seed: int or None.
        data_format: "channels_last", "channels_first" or None.

    Example:
    ```python
    y = RandomPerspective(factor=1.0, scale=0.3, seed=1)(images)
    ```
    """

    _USE_BASE_FACTOR = False
    _FACTOR_BOUNDS = (0, 1)
    _SUPPORTED_INTERPOLATION = ("nearest", "bilinear")

    def __init__(self, factor=1.0, scale=1.0, interpolation="bilinear", fill_value=0.0,
                 seed=None, data_format=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self._set_factor(factor)
        self.scale = scale
        self.fill_value = fill_value
        self.interpolation = interpolation
        self._make_generator(seed)
        if scale < 0.0 or scale > 1.0:
            raise ValueError("The `scale` argument should be a number in the range [0,1]. "
                             f"Received: scale={scale}")
        check_choice(interpolation, self._SUPPORTED_INTERPOLATION, "interpolation")

    def get_random_transformation(self, data, training=True, seed=None):
        if not training:
            return None
        images = data["images"] if isinstance(data, dict) else data
        batch = self._batch_size(images)
        height, width = self._hw(np.shape(images))
        rng = self._rng(seed)
        apply = self._apply_mask(rng, batch)
        displacement = rng.uniform(-0.5 * self.scale, 0.5 * self.scale, size=(batch, 4, 2))
        start = np.array([[[0.0, 0.0], [width - 1, 0.0], [0.0, height - 1],
                           [width - 1, height - 1]]], np.float32)
        start = np.repeat(start, batch, axis=0)
        end = (start + start * displacement).astype(np.float32)
        return {"apply_perspective": apply, "start_points": start, "end_points": end,
                "input_shape": np.shape(images)}

    def _transform_images(self, images, transformation, interpolation):
        matrix = transforms.homography(transformation["start_points"],
                                       transformation["end_points"])
        warped = transforms.affine_transform(images, matrix, interpolation, "constant",
                                             float(self.fill_value))
        apply = np.asarray(transformation["apply_perspective"]).reshape(-1, 1, 1, 1)
        return np.where(apply, warped, images)

    def transform_bounding_boxes(self, bounding_boxes, transformation, training=True):
        """Boxes follow the warp of the images it applies to (the bounding box of their
        warped corners), clipped to the image; empty ones get label -1 (Keras)."""
        if not training or transformation is None:
            return bounding_boxes
        height, width = self._hw(transformation["input_shape"])
        matrix = transforms.homography(transformation["start_points"],
                                       transformation["end_points"])
        apply = np.asarray(transformation["apply_perspective"]).reshape(-1, 1)
        identity = np.array([[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]])
        return warp_boxes(self.bounding_box_format, bounding_boxes,
                          np.where(apply, matrix, identity), height, width)

    def get_config(self):
        config = super().get_config()
        config.update({"factor": self.factor, "scale": self.scale,
                       "interpolation": self.interpolation, "fill_value": self.fill_value,
                       "seed": self.seed})
        return config
