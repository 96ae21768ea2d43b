"""The sub-layers AugMix and RandAugment draw their operations from (Keras 3's list)."""

from fkeras.layers.preprocessing.image_preprocessing.auto_contrast import AutoContrast
from fkeras.layers.preprocessing.image_preprocessing.equalization import Equalization
from fkeras.layers.preprocessing.image_preprocessing.random_brightness import RandomBrightness
from fkeras.layers.preprocessing.image_preprocessing.random_color_degeneration import (
    RandomColorDegeneration,
)
from fkeras.layers.preprocessing.image_preprocessing.random_contrast import RandomContrast
from fkeras.layers.preprocessing.image_preprocessing.random_posterization import (
    RandomPosterization,
)
from fkeras.layers.preprocessing.image_preprocessing.random_rotation import RandomRotation
from fkeras.layers.preprocessing.image_preprocessing.random_sharpness import RandomSharpness
from fkeras.layers.preprocessing.image_preprocessing.random_shear import RandomShear
from fkeras.layers.preprocessing.image_preprocessing.random_translation import (
    RandomTranslation,
)
from fkeras.layers.preprocessing.image_preprocessing.solarization import Solarization


def build_policy_layers(owner, names, factor, value_range, interpolation, seed, data_format):
    """Creates the layers `names` as attributes of `owner` (tracked sub-layers), each with
    the policy's magnitude `factor` (a (lower, upper) pair)."""
    common = {"seed": seed, "data_format": data_format}
    colour = {"value_range": value_range, **common}
    makers = {
        "random_shear": lambda: RandomShear(x_factor=factor, y_factor=factor,
                                            interpolation=interpolation, **common),
        "random_translation": lambda: RandomTranslation(
            height_factor=factor, width_factor=factor, interpolation=interpolation, **common),
        "random_rotation": lambda: RandomRotation(factor=factor, interpolation=interpolation,
                                                  **common),
        "random_posterization": lambda: RandomPosterization(
            factor=max(1, int(8 * factor[1])), **colour),
        "solarization": lambda: Solarization(addition_factor=factor, threshold_factor=factor,
                                             value_range=value_range, seed=seed),
        "auto_contrast": lambda: AutoContrast(value_range=value_range,
                                              data_format=data_format),
        "equalization": lambda: Equalization(value_range=value_range, data_format=data_format),
        "random_brightness": lambda: RandomBrightness(factor=factor, value_range=value_range,
                                                      seed=seed, data_format=data_format),
        "random_color_degeneration": lambda: RandomColorDegeneration(factor=factor, **colour),
        "random_contrast": lambda: RandomContrast(factor=factor, value_range=value_range,
                                                  seed=seed, data_format=data_format),
        "random_sharpness": lambda: RandomSharpness(factor=factor, **colour),
    }
    for name in names:
        setattr(owner, name, makers[name]())
