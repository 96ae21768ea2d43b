"""AugMix: a weighted mix of several random augmentation chains, blended with the input."""

import numpy as np

from fkeras.layers.preprocessing.image_preprocessing.base import BaseImagePreprocessingLayer
from fkeras.layers.preprocessing.image_preprocessing.policy_layers import build_policy_layers

AUGMENT_LAYERS_ALL = ["random_shear", "random_translation", "random_rotation",
                      "random_posterization", "solarization", "auto_contrast", "equalization",
                      "random_brightness", "random_color_degeneration", "random_contrast",
                      "random_sharpness"]
AUGMENT_LAYERS = AUGMENT_LAYERS_ALL[:7]


class AugMix(BaseImagePreprocessingLayer):
    """AugMix during training (the identity at inference).

    `num_chains` chains of up to `chain_depth` operations (each step picks one of the policy
    layers or none) are applied to copies of the batch, mixed with Dirichlet(alpha) weights,
    and the mix is blended with the input by w ~ Beta(alpha, alpha); clipped to
    `value_range`.

    Args:
        value_range: (min, max) of the input values.
        num_chains: the number of chains.
        chain_depth: the number of steps per chain.
        factor: a number in [0, 1] or a pair, the magnitude of the operations.
        alpha: the Dirichlet / Beta parameter.
        all_ops: whether brightness, colour degeneration, contrast and sharpness are in the
            policy too.
        interpolation: "bilinear" or "nearest" for the geometric operations.
        seed: int or None.
        data_format: "channels_last", "channels_first" or None.

    Example:
    ```python
    y = AugMix(value_range=(0, 1), seed=1)(images)
    ```
    """

    _USE_BASE_FACTOR = False
    _FACTOR_BOUNDS = (0, 1)

    def __init__(self, value_range=(0, 255), num_chains=3, chain_depth=3, factor=0.3,
                 alpha=1.0, all_ops=True, interpolation="bilinear", seed=None,
                 data_format=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.value_range = value_range
        self.num_chains = num_chains
        self.chain_depth = chain_depth
        self._set_factor(factor)
        self.alpha = alpha
        self.all_ops = all_ops
        self.interpolation = interpolation
        self._make_generator(seed)
        self._augment_layers = AUGMENT_LAYERS_ALL if all_ops else AUGMENT_LAYERS
        build_policy_layers(self, self._augment_layers, self.factor, value_range,
                            interpolation, seed, self.data_format)

    def get_random_transformation(self, data, training=True, seed=None):
        if not training:
            return None
        rng = self._rng(seed)
        gamma = rng.gamma(self.alpha, size=(self.num_chains,))
        chains = []
        for _ in range(self.num_chains):
            steps = []
            for _ in range(self.chain_depth):
                pick = int(rng.integers(0, len(self._augment_layers) + 1))
                if pick == len(self._augment_layers):
                    continue
                name = self._augment_layers[pick]
                sub_seed = int(rng.integers(0, 2**62))
                steps.append({"layer_name": name, "transformation": getattr(self, name)
                              .get_random_transformation(data, training=True, seed=sub_seed)})
            chains.append(steps)
        return {"chain_mixing_weights": (gamma / gamma.sum()).astype(np.float32),
                "weight_sample": np.float32(rng.beta(self.alpha, self.alpha)),
                "chain_transforms": chains}

    def transform_images(self, images, transformation, training=True):
        images = np.asarray(images, dtype=np.float32)
        if not training or transformation is None:
            return images
        weights = transformation["chain_mixing_weights"]
        mixed = np.zeros_like(images)
        for idx, chain in enumerate(transformation["chain_transforms"]):
            copy = images.copy()
            for step in chain:
                copy = getattr(self, step["layer_name"]).transform_images(
                    copy, step["transformation"])
            mixed += copy * weights[idx]
        w = float(transformation["weight_sample"])
        out = w * images + (1 - w) * mixed
        return np.clip(out, self.value_range[0], self.value_range[1]).astype(np.float32)

    def transform_segmentation_masks(self, segmentation_masks, transformation, training=True):
        return segmentation_masks

    def get_config(self):
        config = super().get_config()
        config.update({"value_range": self.value_range, "num_chains": self.num_chains,
                       "chain_depth": self.chain_depth, "factor": self.factor,
                       "alpha": self.alpha, "all_ops": self.all_ops,
                       "interpolation": self.interpolation, "seed": self.seed})
        return config
