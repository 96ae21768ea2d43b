"""`keras.preprocessing.image`: image loading and conversion (the `fkeras.utils` functions)."""

from fkeras.utils import array_to_img, img_to_array, load_img, save_img

__all__ = ["array_to_img", "img_to_array", "load_img", "save_img"]
