"""RandomElasticTransform: a smooth random displacement field applied to images."""

import numpy as np

from fkeras.layers.preprocessing.image_preprocessing import transforms
from fkeras.layers.preprocessing.image_preprocessing.base import (
    BaseImagePreprocessingLayer,
    check_choice,
)


def elastic_displace(images, alpha, sigma, rng, interpolation, fill_mode, fill_value):
    """NHWC images resampled at grid + alpha * blur(N(0, 1) * sigma): Keras's
    `image.elastic_transform` (the Gaussian blur has kernel int(6 sigma) | 1, zero padding)."""
    n, h, w, _ = images.shape
    size = int(6 * sigma) | 1
    fields = []
    for _ in range(2):
        d = rng.standard_normal((n, h, w, 1)) * sigma
        fields.append(transforms.gaussian_blur(d, (size, size), (sigma, sigma))[..., 0])
    dx, dy = fields
    yy, xx = np.meshgrid(np.arange(h, dtype=np.float64), np.arange(w, dtype=np.float64),
                         indexing="ij")
    return transforms.sample(images, xx + alpha * dx, yy + alpha * dy, interpolation,
                             fill_mode, fill_value)


class RandomElasticTransform(BaseImagePreprocessingLayer):
    """Randomly distorts images with an elastic deformation during training.

    With probability p ~ U(factor) per image, pixels move along a Gaussian-smoothed random
    field: alpha = 0.1 * s * max(H, W), sigma = 0.05 * s * min(H, W), s ~ U(scale) per call;
    the result is clipped to `value_range`. The identity at inference.

    Args:
        factor: a number in [0, 1] or a pair, the probability range of distorting an image.
        scale: a number in [0, 1] or a pair, the distortion strength.
        interpolation: "bilinear" or "nearest".
        fill_mode: "reflect", "wrap", "constant", "nearest" or "mirror".
        fill_value: the value outside the input for "constant".
        value_range: (min, max) of the input values.
        seed: int or None.
        data_format: "channels_last", "channels_first" or None.

    Example:
    ```python
    y = RandomElasticTransform(factor=1.0, scale=0.5, seed=1)(images)
    ```
    """

    _USE_BASE_FACTOR = False
    _FACTOR_BOUNDS = (0, 1)
    _SUPPORTED_INTERPOLATION = ("nearest", "bilinear")
    _SUPPORTED_FILL_MODES = {"constant", "nearest", "wrap", "mirror", "reflect"}

    def __init__(self, factor=1.0, scale=1.0, interpolation="bilinear", fill_mode="reflect",
                 fill_value=0.0, value_range=(0, 255), seed=None, data_format=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self._set_factor(factor)
        self.scale = self._set_factor_by_name(scale, "scale")
        self.interpolation = interpolation
        self.fill_mode = fill_mode
        self.fill_value = fill_value
        self.value_range = value_range
        self._make_generator(seed)
        check_choice(interpolation, self._SUPPORTED_INTERPOLATION, "interpolation")
        check_choice(fill_mode, self._SUPPORTED_FILL_MODES, "fill_mode")

    def get_random_transformation(self, data, training=True, seed=None):
        if not training or self.scale[1] == 0 or self.factor[1] == 0:
            return None
        rng = self._rng(seed)
        apply = self._apply_mask(rng, self._batch_size(data))
        distortion = rng.uniform(self.scale[0], self.scale[1])
        return {"apply_transform": apply, "distortion_factor": np.float32(distortion),
                "seed": int(rng.integers(0, 2**62))}

    def _transform_images(self, images, transformation, interpolation):
        height, width = images.shape[1:3]
        factor = float(transformation["distortion_factor"])
        alpha, sigma = max(height, width) * 0.1 * factor, min(height, width) * 0.05 * factor
        rng = np.random.default_rng(int(transformation["seed"]))
        warped = elastic_displace(images, alpha, sigma, rng, interpolation, self.fill_mode,
                                  float(self.fill_value))
        apply = np.asarray(transformation["apply_transform"]).reshape(-1, 1, 1, 1)
        out = np.where(apply, warped, images)
        return np.clip(out, self.value_range[0], self.value_range[1])

    def transform_bounding_boxes(self, bounding_boxes, transformation, training=True):
        # Keras 3 refuses boxes here too (a non-rigid warp has no box image).
        raise NotImplementedError(f"{type(self).__name__} does not support bounding boxes "
                                  "(as in Keras 3).")

    def get_config(self):
        config = super().get_config()
        config.update({"factor": self.factor, "scale": self.scale,
                       "interpolation": self.interpolation, "fill_mode": self.fill_mode,
                       "fill_value": self.fill_value, "value_range": self.value_range,
                       "seed": self.seed})
        return config
