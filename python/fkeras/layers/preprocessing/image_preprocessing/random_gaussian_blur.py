"""RandomGaussianBlur: blurs images with a Gaussian of random width."""

import numpy as np

from fkeras.layers.preprocessing.image_preprocessing import transforms
from fkeras.layers.preprocessing.image_preprocessing.base import BaseImagePreprocessingLayer


class RandomGaussianBlur(BaseImagePreprocessingLayer):
    """Randomly blurs images during training (the identity at inference).

    With probability p ~ U(factor) per image, the image is convolved (zero padding) with a
    `kernel_size` Gaussian whose (sigma_x, sigma_y) ~ U(sigma) (one draw per call), then
    clipped to `value_range`.

    Args:
        factor: a number in [0, 1] or a pair, the probability range of blurring.
        kernel_size: an odd int or a pair of odd ints.
        sigma: a number in [0, 1] or a pair, the range of the standard deviation.
        value_range: (min, max) of the input values.
        data_format: "channels_last", "channels_first" or None.
        seed: int or None.

    Example:
    ```python
    y = RandomGaussianBlur(factor=1.0, kernel_size=3, sigma=(1.0, 1.0))(images)
    ```
    """

    _USE_BASE_FACTOR = False
    _FACTOR_BOUNDS = (0, 1)

    def __init__(self, factor=1.0, kernel_size=3, sigma=1.0, value_range=(0, 255),
                 data_format=None, seed=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self._set_factor(factor)
        self.kernel_size = self._set_kernel_size(kernel_size, "kernel_size")
        self.sigma = self._set_factor_by_name(sigma, "sigma")
        self.value_range = value_range
        self._make_generator(seed)

    @staticmethod
    def _set_kernel_size(size, name):
        error = f"{name} must be an odd number. Received: {name}={size}"
        if isinstance(size, (tuple, list)):
            if len(size) != 2:
                raise ValueError(f"The `{name}` argument should be a number (or a list of two "
                                 f"numbers) Received: {name}={size}")
            if size[0] % 2 == 0 or size[1] % 2 == 0:
                raise ValueError(error)
            return tuple(size)
        if isinstance(size, (int, float)) and not isinstance(size, bool):
            if size % 2 == 0:
                raise ValueError(error)
            return (size, size)
        raise ValueError(error)

    def get_random_transformation(self, data, training=True, seed=None):
        if not training:
            return None
        rng = self._rng(seed)
        apply = self._apply_mask(rng, self._batch_size(data))
        blur = rng.uniform(self.sigma[0], self.sigma[1], size=(2,)) + 1e-6
        return {"should_apply_blur": apply, "blur_factor": blur.astype(np.float32)}

    def _transform_images(self, images, transformation, interpolation):
        blurred = transforms.gaussian_blur(images, self.kernel_size,
                                           np.asarray(transformation["blur_factor"]))
        apply = np.asarray(transformation["should_apply_blur"]).reshape(-1, 1, 1, 1)
        out = np.where(apply, blurred, images)
        return np.clip(out, self.value_range[0], self.value_range[1])

    def transform_segmentation_masks(self, segmentation_masks, transformation, training=True):
        return segmentation_masks

    def get_config(self):
        config = super().get_config()
        config.update({"factor": self.factor, "kernel_size": self.kernel_size,
                       "sigma": self.sigma, "value_range": self.value_range,
                       "seed": self.seed})
        return config
